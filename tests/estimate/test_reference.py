"""The fast estimator equals a plain transcription of CA's binpacking loop (property test).

The reference below re-runs HAMi's full fit on every node it looks at and scans the node ring pod by
pod, exactly as CA's ``BinpackingNodeEstimator`` + ``FitsAnyNodeMatching`` do, with no memo, no shape
sharing and no candidate lists. The engine's optimisations must not change a single placement.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from hami_sim.engine.estimate import GroupTemplate, PendingPods, estimate, group_pending_pods
from hami_sim.engine.model import NodeState
from hami_sim.engine.scheduler_filters import Resources, insufficient, node_allocatable, pod_demand
from hami_sim.engine.simulate import PodContext, Simulator
from tests.factories import gpu, node, pod


@dataclass
class _Group:
    ids: list[str]
    order: int
    ctx: PodContext
    demand: Resources


@dataclass
class _RefNode:
    state: NodeState
    free: Resources
    pods: list[str] = field(default_factory=list)


class _Reference:
    """CA's loop, transcribed: the node ring scanned pod by pod, a full fit at every look."""

    def __init__(self, sim: Simulator, template: dict, limit: int) -> None:
        self.sim, self.limit = sim, limit
        self.alloc = node_allocatable(template)
        self.inventory = sim.inventory(template)
        self.nodes: list[_RefNode] = []
        self.last: _RefNode | None = None
        self.last_index = 0

    def devmem(self, g: _Group) -> int:
        total = 0
        for requests in g.ctx.pod.requests.containers:
            for r in requests.values():
                per_card = self.inventory.devices[0].devmem * r.mem_percentage_req // 100
                total += r.nums * (r.memreq if r.memreq > 0 else per_card)
        return total

    def share(self, g: _Group) -> float:
        return g.demand.cpu / self.alloc.cpu + g.demand.memory / self.alloc.memory

    def fits(self, n: _RefNode, g: _Group):
        if insufficient(g.demand, n.free):
            return None
        verdict = self.sim.evaluate(g.ctx, "n", n.state)
        return verdict.fit.usage_after if verdict.fits else None

    def put(self, n: _RefNode, g: _Group, pid: str, after) -> None:
        for attr in ("cpu", "memory", "ephemeral", "pods"):
            setattr(n.free, attr, getattr(n.free, attr) - getattr(g.demand, attr))
        n.state = NodeState("n", after, self.inventory.pair_scores, self.inventory.cordoned)
        n.pods.append(pid)

    def on_ring(self, g: _Group, pid: str) -> bool:
        nodes = self.nodes
        for k in range(len(nodes)):
            idx = (self.last_index + k) % len(nodes)
            after = self.fits(nodes[idx], g)
            if after is not None:
                self.put(nodes[idx], g, pid, after)
                self.last_index = (self.last_index + k + 1) % len(nodes)
                return True
        return False

    def on_last_or_new(self, g: _Group, pid: str) -> bool:
        last = self.last
        if last is not None:
            after = self.fits(last, g)
            if after is not None:
                self.put(last, g, pid, after)
                return True
            if not last.pods:
                return False
        if len(self.nodes) >= self.limit:
            return False
        last = self.last = _RefNode(self.inventory.state("n"), self.alloc.copy())
        self.nodes.append(last)
        after = self.fits(last, g)
        if after is None:
            return False
        self.put(last, g, pid, after)
        return True

    def pack(self, g: _Group) -> None:
        i = 0
        while i < len(g.ids) and self.on_ring(g, g.ids[i]):
            i += 1
        while i < len(g.ids) and self.on_last_or_new(g, g.ids[i]):
            i += 1


def reference(sim: Simulator, entries: list[PendingPods], template: dict, limit: int) -> list[list[str]]:
    ref = _Reference(sim, template, limit)
    ignored = sim.managed_resources()  # NodeResourcesFit's ignoredResources under HAMi
    groups = [
        _Group(g.ids, g.order, sim.pod_context(g.pod), pod_demand(g.pod, ignored))
        for g in group_pending_pods(entries)
    ]
    for g in sorted(groups, key=lambda g: (-ref.share(g), -ref.devmem(g), g.order)):
        ref.pack(g)
    return [n.pods for n in ref.nodes if n.pods]


POD = st.fixed_dictionaries(
    {
        "gpus": st.sampled_from([1, 1, 1, 2]),
        "mem": st.sampled_from([1000, 4000, 7000, 12000, 20000]),
        "cores": st.sampled_from([0, 0, 25, 50]),
        "cpu": st.sampled_from(["0", "500m", "2", "6"]),
        "count": st.integers(1, 12),
        "owned": st.booleans(),
        "policy": st.sampled_from(["", "binpack", "spread"]),
    }
)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    specs=st.lists(POD, min_size=1, max_size=5),
    cards=st.sampled_from([2, 4]),
    limit=st.sampled_from([3, 1000]),
)
def test_fast_estimator_matches_the_reference(specs, cards, limit):
    template = node("tmpl", [gpu(f"G{i}", index=i, numa=i // 2) for i in range(cards)])
    template["status"]["allocatable"] = {"cpu": "16", "memory": "64Gi", "pods": "30"}
    entries = []
    for k, spec in enumerate(specs):
        annotations = {"hami.io/gpu-scheduler-policy": spec["policy"]} if spec["policy"] else {}
        p = pod(
            f"p{k}",
            gpu_count=spec["gpus"],
            gpumem=spec["mem"],
            gpucores=spec["cores"] or None,
            annotations=annotations,
        )
        p["spec"]["containers"][0]["resources"]["requests"] = {"cpu": spec["cpu"], "memory": "1Gi"}
        if spec["owned"]:
            p["metadata"]["ownerReferences"] = [
                {"kind": "ReplicaSet", "name": f"rs{k % 2}", "uid": f"rs{k % 2}", "controller": True}
            ]
            entries.append(PendingPods(p, spec["count"]))
        else:
            for j in range(spec["count"]):
                q = {**p, "metadata": {**p["metadata"], "name": f"p{k}-{j}"}}
                entries.append(PendingPods(q))
    sim = Simulator()
    [option] = estimate(sim, entries, [GroupTemplate("g", template)], max_nodes_per_scale_up=limit).options
    assert [n.pods for n in option.nodes] == reference(Simulator(), entries, template, limit)
