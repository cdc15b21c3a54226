"""``/api/v1/estimate`` with ``existingNodes: true``: pending pods first go to live nodes' free capacity.

CA's FilterOutSchedulable step places pending pods on the nodes that already exist before it
considers a scale-up; only what is left needs new nodes. Here the existing nodes are the live nodes
(those the usage store holds, ``usage.live``; docs/usage.md) evaluated with their live usage through
HAMi's Fit, first fit in node-name order, each placement adding its usage for the next pod. Only
device fit is checked: hami-sim does not know the CPU and memory other pods take on a live node, so a
pod without device requests is left for the estimate (never claimed to fit where it may not). Live
nodes with stale usage take nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from hami_sim.engine.estimate import PendingPods
from hami_sim.engine.model import NodeState
from hami_sim.engine.requests import pod_id
from hami_sim.engine.simulate import PodContext, Simulator

__all__ = ["ExistingPlacement", "place_on_live_nodes"]


@dataclass
class ExistingPlacement:
    """Which pods need no new node (``placements``: pod id -> live node) and what is left."""

    placements: dict[str, str] = field(default_factory=dict)
    remaining: list[PendingPods] = field(default_factory=list)
    live_nodes: int = 0


def _live_states(sim: Simulator) -> list[tuple[str, NodeState]]:
    """Every live node with trustworthy usage, as its state with that usage, by name."""
    from profiles.models import NodeInventory
    from usage.live import live_state

    out = []
    rows = NodeInventory.objects.filter(gone_at__isnull=True).values_list(
        "name", "labels", "annotations", "capacity"
    )
    for name, labels, registration, capacity in rows.order_by("name").iterator(chunk_size=500):
        node = {
            "metadata": {"name": name, "labels": labels or {}, "annotations": registration or {}},
            "status": {"capacity": capacity or {}},
        }
        inventory = sim.inventory(node)
        if inventory.error:
            continue
        state = live_state(name, inventory)
        if isinstance(state, NodeState):
            out.append((name, state))
    return out


def _ids(entry: PendingPods) -> list[str]:
    base = pod_id(entry.pod)
    return [base] if entry.count is None else [f"{base}#{i}" for i in range(entry.count)]


def place_on_live_nodes(sim: Simulator, pods: Sequence[PendingPods]) -> ExistingPlacement:
    """First fit of every pending pod on the live nodes; the rest is returned for the estimate.

    Identical pods share a cursor: nodes only fill up, so a node that refused one of them refuses
    the next, and a batch costs O(pods + nodes) evaluations per distinct pod, not pods x nodes.
    """
    nodes = _live_states(sim)
    result = ExistingPlacement(live_nodes=len(nodes))
    contexts: dict[bytes, tuple[PodContext, list[int]]] = {}
    for entry in pods:
        ids = _ids(entry)
        meta = entry.pod.get("metadata")
        key = orjson.dumps(
            [entry.pod.get("spec"), meta.get("annotations") if isinstance(meta, Mapping) else None],
            option=orjson.OPT_SORT_KEYS,
        )
        if key not in contexts:
            contexts[key] = (sim.pod_context(entry.pod), [0])
        ctx, cursor = contexts[key]
        if not ctx.pod.requests.has_requests or not nodes:
            result.remaining.append(entry)
            continue
        left = [pid for pid in ids if not _place(sim, ctx, nodes, cursor, pid, result)]
        if len(left) == len(ids):
            result.remaining.append(entry)
        else:  # the ids the estimate reports must be the ones not placed here
            result.remaining.extend(_renamed(entry.pod, pid) for pid in left)
    return result


def _place(
    sim: Simulator,
    ctx: PodContext,
    nodes: list[tuple[str, NodeState]],
    cursor: list[int],
    pid: str,
    result: ExistingPlacement,
) -> bool:
    while cursor[0] < len(nodes):
        name, state = nodes[cursor[0]]
        verdict = sim.evaluate(ctx, name, state)
        if verdict.fits and verdict.fit is not None and verdict.fit.usage_after is not None:
            nodes[cursor[0]] = (
                name,
                NodeState(name, verdict.fit.usage_after, state.pair_scores, state.cordoned),
            )
            result.placements[pid] = name
            return True
        cursor[0] += 1
    return False


def _renamed(pod: Mapping, pid: str) -> PendingPods:
    """One pod of a partly placed ``count`` entry, carrying its own id (``<id>#<i>``) as its uid."""
    meta = dict(pod.get("metadata") or {})
    meta["uid"] = pid
    return PendingPods({**pod, "metadata": meta})
