"""The placement loop both views share: each view's nodes with what is left of them, pods of one
shape sharing a candidate list, round-robin from the node after the last match (CA's
``SchedulePodOnAnyNodeMatching``), and each view's check of one pod on one node."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from ..model import DeviceUsage, NodeState
from ..scheduler_filters import Resources, insufficient, node_allocatable, static_mismatch, unschedulable
from ..simulate import PodContext, Simulator
from .aggregate import aggregate_capacity
from .inputs import NO_LIVE_USAGE, CAProfile, ViewNode

__all__ = [
    "Check",
    "Shape",
    "Slot",
    "View",
    "ca_check",
    "ca_slots",
    "hami_check",
    "hami_slots",
    "static_reason",
]


class Slot:
    """A node in one view: what is left of it, and (HAMi's view) its cards."""

    __slots__ = ("view", "free", "state")

    def __init__(self, view: ViewNode, free: Resources, state: NodeState | None) -> None:
        self.view = view
        self.free = free
        self.state = state


class Shape:
    """Pods that fit identically (same spec and annotations): one candidate list. Nodes only fill up,
    so a node that refused a shape refuses it for the rest of the computation."""

    __slots__ = ("demand", "ctx", "static", "cands", "reasons", "largest", "quick", "evaluated")

    def __init__(self, demand: Resources, ctx: PodContext | None, count: int) -> None:
        self.demand = demand
        self.ctx = ctx
        self.quick = _quick_request(ctx)
        self.evaluated = 0
        self.static: dict[int, str] = {}
        self.cands = list(range(count))
        self.reasons: Counter[str] = Counter()
        self.largest: int | None = -1  # the roomiest free card when the shape first fit nowhere


Check = Callable[[Shape, Mapping, Slot], tuple[str, NodeState | None]]


class View:
    """One view's nodes and round-robin position."""

    def __init__(self, slots: list[Slot], check: Check) -> None:
        self.slots = slots
        self.check = check
        self.rr = 0

    def place(self, shape: Shape, pod: Mapping) -> Slot | None:
        cands = shape.cands
        start = self.rr
        while cands:
            pos = bisect_left(cands, start)
            if pos == len(cands):
                pos = 0
            idx = cands[pos]
            slot = self.slots[idx]
            why, state = self.check(shape, pod, slot)
            if not why:
                slot.free.take(shape.demand)
                if state is not None:
                    slot.state = state
                self.rr = (idx + 1) % len(self.slots)
                return slot
            shape.reasons[why] += 1
            del cands[pos]
            start = idx
        return None


def static_reason(shape: Shape, pod: Mapping, slot: Slot) -> str:
    key = id(slot)
    reason = shape.static.get(key)
    if reason is None:
        node = slot.view.node
        reason = shape.static[key] = static_mismatch(pod, node) or unschedulable(pod, node)
    return reason


def ca_check(shape: Shape, pod: Mapping, slot: Slot) -> tuple[str, NodeState | None]:
    return static_reason(shape, pod, slot) or insufficient(shape.demand, slot.free), None


def hami_check(sim: Simulator) -> Check:
    def check(shape: Shape, pod: Mapping, slot: Slot) -> tuple[str, NodeState | None]:
        why = static_reason(shape, pod, slot) or insufficient(shape.demand, slot.free)
        if why:
            return why, None
        ctx = shape.ctx
        if ctx is None or not ctx.pod.requests.has_requests:
            return "", None
        if slot.state is None:
            return NO_LIVE_USAGE, None
        quick = shape.quick
        if quick is not None and shape.evaluated >= _FULL_REASONS and not _may_fit(slot.state.devices, quick):
            return f"fewer than {quick[1]} card(s) with {quick[2]} MiB and a slot free", None
        shape.evaluated += 1
        verdict = sim.evaluate(ctx, slot.view.name, slot.state)
        if not verdict.fits or verdict.fit is None or verdict.fit.usage_after is None:
            return verdict.reason or "pod does not fit", None
        state = slot.state
        return "", NodeState(state.name, list(verdict.fit.usage_after), state.pair_scores, state.cordoned)

    return check


#: HAMi's own reasons are kept from this many full fits per shape; after that a node that fails the
#: pre-check (a necessary condition of HAMi's Fit) is rejected without the full fit and its scoring
_FULL_REASONS = 3


def _quick_request(ctx: PodContext | None) -> tuple[str, int, int] | None:
    """``(vendor, cards, MiB per card)`` for a pod of one container asking one vendor's cards with a
    fixed memory each: what the pre-check can judge (None: anything else goes to the full fit)."""
    if ctx is None:
        return None
    asking = [c for c in ctx.pod.requests.containers if c]
    if len(asking) != 1 or len(asking[0]) != 1:
        return None
    ((vendor, request),) = asking[0].items()
    if request.memreq <= 0 or request.nums <= 0:
        return None
    return vendor, request.nums, request.memreq


def _may_fit(devices: Sequence[DeviceUsage], quick: tuple[str, int, int]) -> bool:
    """A necessary condition of HAMi's Fit: ``cards`` healthy cards of the vendor, each with the memory
    and a slot free. MIG cards are left to the full fit."""
    vendor, cards, memreq = quick
    found = 0
    for dev in devices:
        if dev.mode == "mig":
            return True
        if (
            dev.vendor == vendor
            and dev.health
            and dev.used < dev.count
            and dev.totalmem - dev.usedmem >= memreq
        ):
            found += 1
            if found >= cards:
                return True
    return False


def _minus(allocatable: Resources, requested: Resources, extra: Mapping[str, int] | None = None) -> Resources:
    free = allocatable.copy()
    free.cpu -= requested.cpu
    free.memory -= requested.memory
    free.ephemeral -= requested.ephemeral
    free.pods -= requested.pods
    scalars = dict(free.scalars or {})
    for name, amount in (extra or {}).items():
        scalars.setdefault(name, amount)  # a node that already advertises it (patched) keeps its own
    for name, amount in (requested.scalars or {}).items():
        scalars[name] = scalars.get(name, 0) - amount
    free.scalars = scalars or None
    return free


def ca_slots(nodes: Sequence[ViewNode], profile: CAProfile) -> list[Slot]:
    out = []
    for view in nodes:
        extra = None
        if profile.aggregate and view.state is not None:
            extra = aggregate_capacity(view.state.devices, profile.aggregate)
        out.append(Slot(view, _minus(node_allocatable(view.node), view.requested, extra), None))
    return out


def hami_slots(nodes: Sequence[ViewNode]) -> list[Slot]:
    return [Slot(v, _minus(node_allocatable(v.node), v.requested), v.state) for v in nodes]
