"""The fast estimate (node groups that pack alike packed once, the quick "cannot fit" before HAMi's
fit) against pod-by-pod packing (``estimate(fast=False)``: every group alone, HAMi's Fit for every
node asked): on generated bursts over groups that share templates (own names, labels and UUIDs),
with max sizes, taints and selectors, mixed shapes, multi-container pods and the cases that must
take the exact path (pod anti-affinity and topology spread, UUID-selecting pods), every answer is
the same, down to each new node's name, pods and devices with their UUIDs."""

from __future__ import annotations

from dataclasses import asdict

from hypothesis import given, settings
from hypothesis import strategies as st

from hami_sim.engine.estimate import (
    EstimateResult,
    Expander,
    GroupTemplate,
    PendingPods,
    ScaleUpLimits,
    estimate,
)
from hami_sim.engine.hami_releases import PATCHES
from hami_sim.engine.simulate import EngineConfig, Simulator
from tests.factories import kube

from .helpers import ca_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
RELEASES = tuple(PATCHES)  # every HAMi release the engine follows
TAINT = {"key": "gpu", "value": "true", "effect": "NoSchedule"}

# (cards, devmem, cpu millicores, memory, numa split) of the templates groups are made of
KINDS = ((2, 23028, 8000, "64Gi", 2), (4, 81920, 16000, "128Gi", 2), (8, 46068, 32000, "256Gi", 4))

GROUP = st.fixed_dictionaries(
    {
        "kind": st.integers(0, len(KINDS) - 1),
        "zone": st.sampled_from(["a", "b"]),
        "taint": st.booleans(),
        "room": st.sampled_from([None, None, 1, 3]),  # max size - current size (None: no max size)
        "new": st.sampled_from([None, None, 2]),  # the request's maxNewNodes
    }
)
DEPLOYMENT = st.fixed_dictionaries(
    {
        "gpus": st.sampled_from([1, 1, 2, 3]),
        "mem": st.sampled_from([None, 2000, 9000, 20000, 35000]),
        "pct": st.sampled_from([None, None, 30]),
        "cores": st.sampled_from([None, 10, 50, 100]),
        "cpu": st.sampled_from([250, 1000, 4000]),
        "replicas": st.integers(1, 9),
        "second": st.booleans(),  # a second container with its own card
        "init": st.sampled_from([None, None, 1000, 30000]),  # an init container's card (MiB)
        "zone": st.sampled_from([None, None, "a"]),  # nodeSelector on the zone
        "tolerates": st.booleans(),
        "uuid": st.sampled_from([False, False, False, True]),  # nvidia.com/use-gpuuuid
        "topology": st.sampled_from([None, None, None, None, "anti", "spread"]),
    }
)


def _simulator(release: str) -> Simulator:
    return Simulator(EngineConfig(hami_release=release))


def _template(k: int, g: dict) -> dict:
    cards, devmem, cpu, memory, numa = KINDS[g["kind"]]
    name = f"template-node-for-g{k}"
    devices = [
        kube.gpu(f"GPU-{name}-{i}", index=i, devmem=devmem, numa=i * numa // cards) for i in range(cards)
    ]
    labels = {HOST: name, ZONE: g["zone"], "pool": f"g{k}"}
    tmpl = kube.node(
        name, devices, labels=labels, capacity={"cpu": f"{cpu}m", "memory": memory, "pods": "30"}
    )
    if g["taint"]:
        tmpl["spec"]["taints"] = [TAINT]
    return tmpl


def _group(k: int, g: dict) -> GroupTemplate:
    size = {} if g["room"] is None else {"max_size": 5, "current_size": 5 - g["room"]}
    return GroupTemplate(f"g{k}", _template(k, g), max_new_nodes=g["new"], **size)


def _pod(k: int, d: dict) -> PendingPods:
    device = {"gpu_count": d["gpus"], "gpumem": d["mem"], "gpucores": d["cores"], "mem_pct": d["pct"]}
    p = ca_pod(f"d{k}", d["cpu"], f"{1 + k % 3}Gi", **device)
    spec = p["spec"]
    if d["second"]:
        spec["containers"].append(kube.container("side", gpu_count=1, gpumem=1000))
    if d["init"]:
        spec["initContainers"] = [kube.container("init", gpu_count=1, gpumem=d["init"])]
    if d["zone"]:
        spec["nodeSelector"] = {ZONE: d["zone"]}
    if d["tolerates"]:
        spec["tolerations"] = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    if d["uuid"]:
        uuids = "GPU-template-node-for-g0-0,GPU-template-node-for-g1-1"
        p["metadata"]["annotations"]["nvidia.com/use-gpuuuid"] = uuids
    p["metadata"]["labels"] = {"app": f"d{k}"}
    term = {"labelSelector": {"matchLabels": {"app": f"d{k}"}}, "topologyKey": HOST}
    if d["topology"] == "anti":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    elif d["topology"] == "spread":
        spec["topologySpreadConstraints"] = [{**term, "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]
    return PendingPods(p, d["replicas"])


def _answer(result: EstimateResult) -> tuple:
    options = [
        (
            o.node_group,
            o.node_count,
            o.scheduled,
            o.unschedulable,
            o.skipped,
            o.node_limit,
            o.timed_out,
            o.requested_cpu,
            o.requested_memory,
            o.daemon_pods,
            o.waste,
            [(n.name, n.pods, [asdict(dev) for dev in n.devices], n.requested) for n in o.nodes],
        )
        for o in result.options
    ]
    return options, result.chosen, result.candidates, result.explanation, result.scale_up


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    groups=st.lists(GROUP, min_size=1, max_size=6),
    deployments=st.lists(DEPLOYMENT, min_size=1, max_size=6),
    per_scale_up=st.sampled_from([0, 6]),
    release=st.sampled_from(RELEASES),
)
def test_the_fast_estimate_answers_as_pod_by_pod_packing(groups, deployments, per_scale_up, release):
    templates = [_group(k, g) for k, g in enumerate(groups)]
    # several groups of one kind and zone: the same template but for names and UUIDs
    templates += [_group(len(groups) + k, g) for k, g in enumerate(groups[:2])]
    pods = [_pod(k, d) for k, d in enumerate(deployments)]
    limits = ScaleUpLimits(max_nodes_per_scale_up=per_scale_up, group_budget=0)
    expander = Expander(names=("least-waste",))
    fast = estimate(_simulator(release), pods, templates, expander, limits=limits)
    exact = estimate(_simulator(release), pods, templates, expander, limits=limits, fast=False)
    assert _answer(fast) == _answer(exact)


USAGE = st.tuples(st.integers(0, 10), st.integers(0, 46068), st.integers(0, 100))  # used, MiB, cores


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    usage=st.lists(USAGE, min_size=4, max_size=4),
    deployment=DEPLOYMENT,
    policy=st.sampled_from(["binpack", "spread", "topology-aware", "mutex"]),
    numa_bind=st.booleans(),
    release=st.sampled_from(RELEASES),
)
def test_the_quick_cannot_fit_never_refuses_a_pod_hami_places(usage, deployment, policy, numa_bind, release):
    """The bound (``estimate/bound.py``) says "cannot fit" only where HAMi's fit fails too: any
    usage of the cards, any request the bursts above make, under every GPU policy and NUMA binding,
    in every HAMi release followed."""
    from hami_sim.engine.estimate.bound import device_bound

    sim = _simulator(release)
    p = _pod(0, deployment).pod
    p["metadata"]["annotations"]["hami.io/gpu-scheduler-policy"] = policy
    if numa_bind:
        p["metadata"]["annotations"]["nvidia.com/numa-bind"] = "true"
    ctx = sim.pod_context(p)
    inventory = sim.inventory(_template(0, {"kind": 2, "zone": "a", "taint": False}))
    state = inventory.state("n")
    state.devices = state.devices[:4]
    for dev, (used, mem, cores) in zip(state.devices, usage, strict=True):
        dev.used, dev.usedmem, dev.usedcores = used, mem, cores
    bound = device_bound(sim, ctx, state.devices)
    if bound is not None and bound.excludes(state.devices):
        assert not sim.evaluate(ctx, "n", state).fits
