"""Upcoming nodes: nodes a group is already adding sit in CA's snapshot as template copies; CA's
FilterOutSchedulable (``core/podlistprocessor/filter_out_schedulable_test.go``) removes the pending
pods they can hold before the estimate, and they count toward the group's size."""

from __future__ import annotations

import pytest

from hami_sim.engine.estimate import (
    EstimateError,
    GroupTemplate,
    PendingPods,
    ScaleUpLimits,
    UpcomingNodes,
    estimate,
)
from hami_sim.engine.scaleup import daemon_set_pod
from hami_sim.engine.simulate import Simulator

from .helpers import ca_node, ca_pod, gpu_node

ZONE = "topology.kubernetes.io/zone"


def _pod(name: str, millicores: int, priority: int | None = None) -> PendingPods:
    p = ca_pod(name, millicores, 10)
    if priority is not None:
        p["spec"]["priority"] = priority
    return PendingPods(p)


def _ds(millicores: int) -> dict:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": f"{millicores}m"}}}]}
    return daemon_set_pod(
        {"metadata": {"name": "ds", "namespace": "kube-system"}, "spec": {"template": {"spec": spec}}}
    )


FILTER_CASES = [
    # filter_out_schedulable_test.go TestFilterOutSchedulable, on one upcoming 2000m node: name,
    # pending pods, DaemonSet pod's cpu on the node (stands for the pod already there), absorbed
    ("single empty node, single schedulable pod", [_pod("pod", 500)], 0, ["pod"]),
    (
        "single empty node, many schedulable pods",
        [_pod("pod1", 200), _pod("pod2", 500), _pod("pod3", 800)],
        0,
        ["pod1", "pod2", "pod3"],
    ),
    ("single empty node, single unschedulable pod", [_pod("pod1", 3000)], 0, []),
    (
        "single empty node, various pods",
        [_pod("pod1", 200), _pod("pod2", 500), _pod("pod3", 1800)],
        0,
        ["pod1", "pod2"],
    ),
    (
        "single empty node, some priority pods",
        [_pod("pod1", 200), _pod("pod2", 500, 10), _pod("pod3", 1800, 20)],
        0,
        ["pod3", "pod1"],
    ),
    (
        "non-empty node with a single pod scheduled",
        [_pod("pod2", 1000), _pod("pod3", 300), _pod("pod4", 300)],
        500,
        ["pod2", "pod3"],
    ),
]


@pytest.mark.parametrize(
    ("name", "pending", "daemon", "absorbed"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES]
)
def test_filter_out_schedulable_on_upcoming_nodes(name, pending, daemon, absorbed):
    template = ca_node("node", 2000, "100Mi", pods=100)
    group = GroupTemplate("g", template, daemon_pods=(_ds(daemon),) if daemon else ())
    result = estimate(Simulator(), pending, [group], upcoming=[UpcomingNodes("g", 1)])
    [node] = result.upcoming
    assert node.name == "node-upcoming-0" and node.node_group == "g"
    assert node.pods == [f"default/{p}" for p in absorbed]
    # what is left goes to the estimate; an absorbed pod is in no option
    [option] = result.options
    assert not set(node.pods) & (set(option.scheduled) | set(option.unschedulable))
    assert len(option.scheduled) + len(option.unschedulable) == len(pending) - len(absorbed)


def test_upcoming_gpu_nodes_absorb_with_hami_device_fit():
    """Two upcoming 2-card A10 nodes hold 4 of 16 pods of 12000 MiB; the other 12 need 6 new nodes."""
    pending = [PendingPods(ca_pod("w", 100, 1000, gpu_count=1, gpumem=12000), 16)]
    result = estimate(
        Simulator(), pending, [GroupTemplate("a10", gpu_node("a10"))], upcoming=[UpcomingNodes("a10", 2)]
    )
    assert [len(n.pods) for n in result.upcoming] == [2, 2]
    assert [d.usedmem for d in result.upcoming[0].devices] == [12000, 12000]
    [option] = result.options
    assert (option.node_count, len(option.scheduled)) == (6, 12)


def test_upcoming_nodes_count_toward_the_group_size():
    """max size 5, 1 live node, 2 upcoming: 2 new nodes at most (CA's target size includes them)."""
    pending = [PendingPods(ca_pod("e", 600, 10), 10)]
    group = GroupTemplate("g", ca_node("t", 1000, "5000Mi"), max_size=5, current_size=1)
    limits = ScaleUpLimits(max_nodes_per_scale_up=0)
    result = estimate(Simulator(), pending, [group], limits=limits, upcoming=[UpcomingNodes("g", 2)])
    assert sum(len(n.pods) for n in result.upcoming) == 2
    [option] = result.options
    assert (option.node_limit, option.node_count, len(option.scheduled)) == (2, 2, 2)


def test_upcoming_nodes_are_in_the_snapshot_for_anti_affinity():
    """Zone anti-affinity: the upcoming node in zone-mars takes the one pod the zone allows, so the
    estimate adds no node of that zone for the rest."""
    p = ca_pod("web", 100, 10)
    p["metadata"]["labels"] = {"app": "web"}
    p["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "web"}}}
            ]
        }
    }
    template = ca_node("t", 1000, "5000Mi", labels={ZONE: "zone-mars"})
    result = estimate(
        Simulator(), [PendingPods(p, 3)], [GroupTemplate("g", template)], upcoming=[UpcomingNodes("g", 1)]
    )
    assert [len(n.pods) for n in result.upcoming] == [1]
    [option] = result.options
    assert (option.node_count, len(option.scheduled)) == (0, 0)
    assert set(option.unschedulable.values()) == {"node(s) didn't satisfy existing pods anti-affinity rules"}


def test_upcoming_nodes_of_a_group_the_pod_cannot_use_absorb_nothing():
    tainted = ca_node("t", 4000, "5000Mi")
    tainted["spec"]["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    groups = [GroupTemplate("tainted", tainted), GroupTemplate("open", ca_node("o", 1000, "5000Mi"))]
    result = estimate(
        Simulator(), [PendingPods(ca_pod("e", 500, 10), 4)], groups, upcoming=[UpcomingNodes("tainted", 3)]
    )
    assert [n.pods for n in result.upcoming] == [[], [], []]
    assert result.chosen == "open"


def test_upcoming_nodes_must_name_a_requested_group():
    with pytest.raises(EstimateError, match="not one of the requested node groups"):
        estimate(
            Simulator(), [], [GroupTemplate("g", ca_node("t", 1000, "1Gi"))], upcoming=[UpcomingNodes("h", 1)]
        )


@pytest.mark.parametrize(
    ("limits", "upcoming", "nodes", "skipped"),
    [
        (ScaleUpLimits(max_nodes_total=5), 0, 4, False),
        (ScaleUpLimits(max_nodes_total=5), 2, 3, False),  # 2 upcoming of 5: 3 new nodes at most
        (ScaleUpLimits(cores_total=10), 0, 2, False),  # 4-core nodes: 2 x 4 = 8, a 3rd makes 12
        (ScaleUpLimits(cores_total=10), 2, 0, True),  # 2 x 4 cores upcoming: a 3rd node would make 12
    ],
)
def test_upcoming_nodes_count_in_the_cluster_totals(limits, upcoming, nodes, skipped):
    """CA's --max-nodes-total and --cores-total count upcoming nodes (target size x template)."""
    template = ca_node("t", 4000, "5000Mi")
    template["status"]["allocatable"]["cpu"] = template["status"]["capacity"]["cpu"] = "4"
    pending = [PendingPods(ca_pod("e", 3000, 10), 4 + upcoming)]  # one per node
    ups = [UpcomingNodes("g", upcoming)] if upcoming else []
    result = estimate(Simulator(), pending, [GroupTemplate("g", template)], limits=limits, upcoming=ups)
    [option] = result.options
    assert bool(option.skipped) is skipped
    planned = result.scale_up.node_count if result.scale_up else 0
    assert planned == nodes
