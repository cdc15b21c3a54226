"""CA's view of each pending pod (FilterOutSchedulable with the scheduler profile we ship: the device
count only) against HAMi's view (v2.10.0's device fit with live usage): the invisible pods.

CA's side follows ``cluster-autoscaler/core/podlistprocessor/filter_out_schedulable.go`` (tags
``cluster-autoscaler-1.32.1`` and ``cluster-autoscaler-1.36.1``): before any scale-up, every pending
pod that fits an existing or upcoming node in CA's simulation is dropped from it. The aggregate view
is a necessary condition of HAMi's fit, never a stricter one: kubelet checks a pod's summed request
against the node's advertised total (``pkg/kubelet/lifecycle/predicate.go``, kubernetes v1.32 to
v1.35, after ``removeMissingExtendedResources`` drops names the node does not advertise), while HAMi
checks each card."""

from __future__ import annotations

import pytest

from hami_sim.engine.blindspot import CAProfile, Pending, aggregate_names, drain_views, pod_views
from hami_sim.engine.simulate import Simulator
from tests.blindspot.helpers import GPU, GPUMEM, H100_MEM, gpu_pod, h100_node, live, upcoming
from tests.factories import gpu, gpu_node, node

pytestmark = pytest.mark.engine

SIM = Simulator()
IGNORED = frozenset({GPUMEM, "nvidia.com/gpucores", "nvidia.com/gpumem-percentage", "nvidia.com/priority"})
COUNT_ONLY = CAProfile(IGNORED)
AGGREGATE = CAProfile(IGNORED, aggregate_names(SIM.vendors.values()))
FULL = [(1, 80000)] * 8  # the node CA scaled: HAMi placed one 80000 MiB pod per card
TAINT = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]


def _pending(n: int, mem: int = 80000, **kw) -> list[Pending]:
    return [Pending(gpu_pod(f"train-{i}", mem, **kw)) for i in range(n)]


def _nodes(case: str) -> list:
    node_a = h100_node("ip-10-0-9-1")
    if case == "scaled":
        return [live(SIM, node_a, FULL)]
    if case == "upcoming":
        return [upcoming(SIM, h100_node("template-node-for-gpu-h100-upcoming-0"))]
    if case == "empty":
        return [live(SIM, node_a, [])]
    if case == "tainted":
        return [live(SIM, h100_node("ip-10-0-9-1", taints=TAINT), FULL)]
    if case == "cpu-full":
        return [live(SIM, node_a, FULL, cpu=192_000)]
    if case == "stale":
        view = live(SIM, node_a, FULL)
        return [type(view)(view.name, view.node, view.requested, None, view.node_group)]
    return []


@pytest.mark.parametrize(
    ("case", "pending", "profile", "invisible", "ca_placed", "hami_placed"),
    [
        # CA scaled one node for 40 pods (80 slots by count); HAMi placed 8; 72 slots still free by count
        ("scaled", 32, COUNT_ONLY, 32, 32, 0),
        # the same before the node is ready: CA's upcoming node takes all 40 by count, HAMi's 8
        ("upcoming", 40, COUNT_ONLY, 32, 40, 8),
        # no node at all: CA's filter keeps every pod and scales up: nothing is invisible
        ("none", 40, COUNT_ONLY, 0, 0, 0),
        # an empty live node: 8 fit in both views, the other 32 fit CA by count only
        ("empty", 40, COUNT_ONLY, 32, 40, 8),
        # aggregate capacity on: the full node has 12472 MiB left in total, CA sees it full
        ("scaled", 32, AGGREGATE, 0, 0, 0),
        ("upcoming", 40, AGGREGATE, 0, 8, 8),
        ("empty", 40, AGGREGATE, 0, 8, 8),
        # a taint the pods do not tolerate, a node without cpu left: CA's view does not place either
        ("tainted", 32, COUNT_ONLY, 0, 0, 0),
        ("cpu-full", 1, COUNT_ONLY, 0, 0, 0),
        # usage CA cannot judge (stale) still counts for CA: HAMi's view cannot place there
        ("stale", 4, COUNT_ONLY, 4, 4, 0),
    ],
)
def test_h100_forty_pods(case, pending, profile, invisible, ca_placed, hami_placed):
    cpu = "1" if case == "cpu-full" else None
    views = pod_views(SIM, _nodes(case), _pending(pending, cpu=cpu), profile)
    assert len(views) == pending
    assert sum(v.invisible for v in views) == invisible
    assert sum(v.ca_node is not None for v in views) == ca_placed
    assert sum(v.hami_node is not None for v in views) == hami_placed


def test_invisible_pod_says_where_ca_puts_it_and_why_no_card_can():
    views = pod_views(SIM, _nodes("scaled"), _pending(32), COUNT_ONLY)
    first = views[0]
    assert first.ca_node == "ip-10-0-9-1" and first.ca_node_group == "gpu-h100"
    assert first.ca_free == {GPU: 72}  # CA counts 72 free slots before any pending pod
    assert first.device_memory == 80000
    assert first.largest_free_card == H100_MEM - 80000
    assert "CardInsufficientMemory" in first.hami_reason


def _a10_node(labels: dict | None = None) -> dict:
    """An empty A10 node: 4 cards of 23028 MiB, all free."""
    status = {"cpu": "48", "memory": "192Gi", "pods": "110", GPU: "40"}
    obj = gpu_node("ip-10-0-1-12", 4, capacity=status, devmem=23028, type="NVIDIA A10G", labels=labels or {})
    return obj


H100_ONLY = {"nodeSelector": {"group": "gpu-h100"}}
A10_TYPE = {"nvidia.com/use-gputype": "H100"}


@pytest.mark.parametrize(
    ("why", "a10_labels", "spec", "annotations"),
    [
        # the pod's nodeSelector excludes the A10 node: its free cards are no room for the pod
        ("nodeSelector", {"group": "gpu-a10"}, H100_ONLY, None),
        # the A10 node is allowed, but the pod asks for H100 cards only (HAMi's use-gputype)
        ("card type", {"group": "gpu-h100"}, H100_ONLY, A10_TYPE),
    ],
)
def test_the_roomiest_card_is_one_the_pod_could_use(why, a10_labels, spec, annotations):
    """An H100-only pod on a full H100 node: the roomiest card it could use has 1559 MiB free, not
    an A10's 23028 MiB on a node or of a type the pod excludes."""
    h100 = h100_node("ip-10-0-9-1")
    h100["metadata"]["labels"]["group"] = "gpu-h100"
    nodes = [live(SIM, h100, FULL), live(SIM, _a10_node(a10_labels), [(0, 0)] * 4, group="gpu-a10")]
    pending = gpu_pod("train-0", 80000)
    pending["spec"].update(spec)
    if annotations:
        pending["metadata"]["annotations"] = annotations
    (view,) = pod_views(SIM, nodes, [Pending(pending)], COUNT_ONLY)
    assert view.invisible, why
    assert view.largest_free_card == H100_MEM - 80000, why


def test_hamis_own_failedscheduling_text_is_kept():
    message = "0/1 nodes are available: 1 node unregistered"
    views = pod_views(SIM, _nodes("scaled"), [Pending(gpu_pod("p", 80000), message)], COUNT_ONLY)
    assert views[0].hami_reason == message


def _fragmented() -> list:
    """4 cards of 40000 MiB, each holding 20000 MiB: 80000 MiB free on the node, 20000 per card."""
    obj = node("ip-10-0-3-7", [gpu(f"GPU-f-{i}", index=i, devmem=40000) for i in range(4)])
    status = {"cpu": "48", "memory": "192Gi", "pods": "110", GPU: "40"}
    obj["status"] = {"capacity": dict(status), "allocatable": dict(status)}
    return [live(SIM, obj, [(1, 20000)] * 4, group="gpu-a10")]


@pytest.mark.parametrize("profile", [COUNT_ONLY, AGGREGATE], ids=["count-only", "aggregate"])
def test_fragmentation_stays_flagged(profile):
    """Fits by count, fits by the node's total memory, fits on no card."""
    (view,) = pod_views(SIM, _fragmented(), _pending(1, 40000), profile)
    assert view.invisible
    assert view.largest_free_card == 20000
    assert "CardInsufficientMemory" in view.hami_reason


def test_a_pod_that_fits_a_card_is_not_invisible():
    (view,) = pod_views(SIM, _fragmented(), _pending(1, 20000), COUNT_ONLY)
    assert view.hami_node == "ip-10-0-3-7" and not view.invisible


def test_placements_consume_count_slots_most_important_first():
    """Two free slots by count: the two high-priority pods take them, the third is left to scale-up."""
    obj = h100_node("ip-10-0-9-2", cards=1)
    obj["status"]["allocatable"][GPU] = "10"
    nodes = [live(SIM, obj, [(8, 8000)])]
    pending = [Pending(gpu_pod("low", 1000, priority=0)), *_pending(2, 1000, priority=100)]
    views = pod_views(SIM, nodes, pending, COUNT_ONLY)
    assert [v.name for v in views] == ["low", "train-0", "train-1"]  # input order kept
    assert views[0].ca_node is None and "Insufficient nvidia.com/gpu" in views[0].ca_reason
    assert all(v.ca_node == "ip-10-0-9-2" for v in views[1:])


def test_drain_views_show_where_cas_scale_down_is_wrong():
    """Draining one full H100 node: CA's view moves its 8 pods to the other full node (72 free slots
    by count); HAMi could place none of them. CA's scale-down re-places a candidate's pods on the
    other nodes with the scheduling simulation it scales up with (``simulator/cluster.go``
    ``RemovalSimulator.findPlaceFor``: ``TrySchedulePods`` on every destination node but the removed
    one, tags cluster-autoscaler-1.32.1 and cluster-autoscaler-1.36.1)."""
    a, b = live(SIM, h100_node("ip-a"), FULL), live(SIM, h100_node("ip-b"), FULL)
    pods = {"ip-a": [gpu_pod(f"run-{i}", 80000) for i in range(8)]}
    (drain,) = drain_views(SIM, [a, b], pods, COUNT_ONLY)
    assert drain.node == "ip-a" and drain.pods == 8
    assert drain.ca_movable and not drain.hami_movable and drain.ca_wrong
    (aggregate,) = drain_views(SIM, [a, b], pods, AGGREGATE)
    assert not aggregate.ca_movable and not aggregate.ca_wrong
