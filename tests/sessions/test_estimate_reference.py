"""The fast estimator equals a plain transcription of CA's binpacking loop (property test).

The reference below re-runs HAMi's full fit on every node it looks at and scans the node ring pod by
pod, exactly as CA's ``BinpackingNodeEstimator`` + ``FitsAnyNodeMatching`` do, with no memo, no shape
sharing and no candidate lists. The engine's optimisations must not change a single placement.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hami_sim.engine.estimate import GroupTemplate, PendingPods, _group_pods, estimate
from hami_sim.engine.model import NodeState
from hami_sim.engine.predicates import insufficient, node_allocatable, pod_demand
from hami_sim.engine.simulate import Simulator
from tests.factories import gpu, node, pod


def reference(sim: Simulator, entries: list[PendingPods], template: dict, limit: int) -> list[list[str]]:
    groups = _group_pods(entries)
    alloc = node_allocatable(template)
    inventory = sim.inventory(template)
    for g in groups:
        g.ctx, g.demand = sim.pod_context(g.pod), pod_demand(g.pod)

    def devmem(g) -> int:
        total = 0
        for requests in g.ctx.pod.requests.containers:
            for r in requests.values():
                total += r.nums * (
                    r.memreq if r.memreq > 0 else inventory.devices[0].devmem * r.mem_percentage_req // 100
                )
        return total

    def share(g) -> float:
        return g.demand.cpu / alloc.cpu + g.demand.memory / alloc.memory

    nodes: list[dict] = []  # {"state", "free", "pods"}
    last = None
    last_index = 0

    def fits(n, g):
        if insufficient(g.demand, n["free"]):
            return None
        verdict = sim.evaluate(g.ctx, "n", n["state"])
        return verdict.fit.usage_after if verdict.fits else None

    def put(n, g, pid, after):
        for attr in ("cpu", "memory", "ephemeral", "pods"):
            setattr(n["free"], attr, getattr(n["free"], attr) - getattr(g.demand, attr))
        n["state"] = NodeState("n", after, inventory.pair_scores, inventory.cordoned)
        n["pods"].append(pid)

    for g in sorted(groups, key=lambda g: (-share(g), -devmem(g), g.order)):
        i = 0
        while i < len(g.ids):
            placed = False
            for k in range(len(nodes)):
                idx = (last_index + k) % len(nodes)
                after = fits(nodes[idx], g)
                if after is not None:
                    put(nodes[idx], g, g.ids[i], after)
                    last_index = (last_index + k + 1) % len(nodes)
                    placed = True
                    break
            if not placed:
                break
            i += 1
        while i < len(g.ids):
            if last is not None:
                after = fits(last, g)
                if after is not None:
                    put(last, g, g.ids[i], after)
                    i += 1
                    continue
                if not last["pods"]:
                    break
            if len(nodes) >= limit:
                break
            last = {"state": inventory.state("n"), "free": alloc.copy(), "pods": []}
            nodes.append(last)
            after = fits(last, g)
            if after is None:
                break
            put(last, g, g.ids[i], after)
            i += 1
    return [n["pods"] for n in nodes if n["pods"]]


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
