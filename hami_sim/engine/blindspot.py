"""The pods upstream Cluster Autoscaler cannot see: CA's view of each pending pod against HAMi's.

Upstream CA runs kube-scheduler's filters in its own simulation, with the scheduler profile we ship
(``NodeResourcesFit`` ``ignoredResources`` holds HAMi's memory and cores names). Its
FilterOutSchedulable drops every pending pod that fits an existing or upcoming node *by device
count* before any scale-up is computed. A node whose cards are full by memory still shows free
count slots (HAMi's device plugin splits a card into ``count`` slots), so such a pod is never
scaled for and never scheduled: it is *invisible to CA*.

Two views of the same pending pods on the same nodes, each placing pods one by one (most important
first, each placement consuming what it takes, round-robin from the node after the last match, as
CA's ``SchedulePodOnAnyNodeMatching`` does):

- **CA's view**: taints, ``nodeSelector``, required node affinity, ``spec.unschedulable``, and
  ``NodeResourcesFit`` (cpu, memory, pods and extended resources, the device count among them)
  against what the pods already on the node request, with CA's ``ignoredResources`` left out of the
  pod's demand. With *aggregate capacity* on (``CAProfile.aggregate``), each node also advertises
  the sum of its cards' memory and cores under the pods' memory and cores names, and those names
  are no longer ignored: a pod's request is counted once against the node's total, a necessary
  condition for HAMi's per-card fit, never a stricter one.
- **HAMi's view**: the same kube-scheduler checks without any HAMi resource (HAMi's own scheduler
  configuration ignores them all), then HAMi v2.10.0's device fit on the node's cards with their
  live usage (``Simulator.evaluate``), each placement adding its usage for the next pod.

A pod CA's view places and HAMi's view places nowhere is invisible. Pod affinity, topology spread
and host ports are not modelled here (they apply equally to both views).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import orjson

from .model import DeviceUsage, NodeState
from .names import pod_id
from .predicates import (
    Resources,
    insufficient,
    node_allocatable,
    pod_demand,
    static_mismatch,
    untolerated_taint,
)
from .scaleup import UNSCHEDULABLE_TAINT
from .simulate import PodContext, Simulator
from .vendors import Vendor

__all__ = [
    "AGGREGATE_VENDORS",
    "AggregateNames",
    "CAProfile",
    "ViewNode",
    "Pending",
    "PodViews",
    "DrainViews",
    "aggregate_names",
    "aggregate_capacity",
    "pod_views",
    "drain_views",
]

NO_LIVE_USAGE = "no trustworthy live usage"


@dataclass(slots=True, frozen=True)
class CAProfile:
    """What CA's ``NodeResourcesFit`` counts: ``ignored`` (its ``ignoredResources``) and, with aggregate
    capacity on, per vendor the (memory, cores) resource names each node advertises as the sum of its
    cards (``aggregate_names``); those names must not be in ``ignored``."""

    ignored: frozenset[str]
    aggregate: Mapping[str, AggregateNames] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class ViewNode:
    """A node both views may place on.

    ``node``: the Node as CA's snapshot holds it (labels, ``spec.taints``/``unschedulable``,
    ``status.allocatable`` with the device count). ``requested``: what the pods already on it request
    as kube-scheduler sums them (cpu, memory, pod slots, extended resources with the device count).
    ``state``: its cards with their live usage for HAMi's view (None: HAMi's view cannot judge it,
    e.g. stale usage; CA's view still counts it). ``upcoming``: a node CA is adding (a template copy).
    """

    name: str
    node: Mapping
    requested: Resources = field(default_factory=Resources)
    state: NodeState | None = None
    node_group: str = ""
    upcoming: bool = False


@dataclass(slots=True, frozen=True)
class Pending:
    """A pending pod; ``reasons``: HAMi's ``FailedScheduling`` message, when its events carry one."""

    pod: Mapping
    reasons: str = ""


@dataclass(slots=True)
class PodViews:
    """One pending pod in both views."""

    pod: str
    namespace: str
    name: str
    ca_node: str | None = None  # where CA's FilterOutSchedulable puts it (None: CA scales for it)
    ca_node_group: str = ""
    ca_reason: str = ""  # why CA's view finds no node
    ca_free: dict[str, int] = field(default_factory=dict)  # extended resources it asks, free on ca_node
    hami_node: str | None = None  # where HAMi's view places it
    hami_reason: str = ""  # why HAMi's view places it nowhere (its FailedScheduling text when known)
    device_memory: int = 0  # device memory per card the pod asks (MiB; 0: a share or whole cards)
    largest_free_card: int | None = None  # free memory of the roomiest card HAMi's view tried

    @property
    def invisible(self) -> bool:
        """CA thinks an existing or upcoming node takes it; HAMi's device rules place it nowhere."""
        return self.ca_node is not None and self.hami_node is None


#: The vendors whose memory and cores names a node may advertise as the sum of its cards. HAMi
#: v2.10.0's NVIDIA device plugin registers only the device count with kubelet, its ``gpumem`` is MiB
#: per card (times ``memoryFactor``) and ``gpucores`` a percentage of each card (100 per card). The
#: others are left out: Cambricon's, Moore Threads' and AWS Neuron's device plugins advertise their
#: own memory or cores names (a patch would fight them), Iluvatar, Cambricon and Moore Threads count
#: memory in 256/512 MiB units, Ascend scales it by its template factor, Enflame by its own spec.
AGGREGATE_VENDORS = frozenset({"NVIDIA"})


class AggregateNames(NamedTuple):
    """A vendor's pod resource names for device memory and cores, and the MiB one memory unit is."""

    memory: str
    cores: str
    memory_unit: int = 1


def aggregate_names(vendors: Iterable[Vendor]) -> dict[str, AggregateNames]:
    """Per vendor (common word) of ``AGGREGATE_VENDORS``, the pod resource names of device memory and
    cores: what a node advertises as the sum of its cards in aggregate mode."""
    out: dict[str, AggregateNames] = {}
    for vendor in vendors:
        if vendor.common_word not in AGGREGATE_VENDORS:
            continue
        config = getattr(vendor, "config", None)
        memory = getattr(config, "resource_memory_name", "")
        cores = getattr(config, "resource_core_name", "")
        factor = getattr(config, "memory_factor", 1)
        unit = factor if isinstance(factor, int) and factor > 1 else 1
        if isinstance(memory, str) and memory and isinstance(cores, str) and cores:
            out[vendor.common_word] = AggregateNames(memory, cores, unit)
    return out


def aggregate_capacity(devices: Iterable[DeviceUsage], names: Mapping[str, AggregateNames]) -> dict[str, int]:
    """The extended resources a node advertises in aggregate mode: per name, the sum of its healthy
    cards' memory (in the vendor's memory unit, rounded down) and cores."""
    memory: dict[str, int] = {}
    out: dict[str, int] = {}
    units: dict[str, int] = {}
    for dev in devices:
        entry = names.get(dev.vendor)
        if entry is None or not dev.health:
            continue
        memory[entry.memory] = memory.get(entry.memory, 0) + dev.totalmem
        units[entry.memory] = entry.memory_unit
        out[entry.cores] = out.get(entry.cores, 0) + dev.totalcore
    for name, mib in memory.items():
        out[name] = mib // units[name]
    return out


# -- the placement loop both views share ----------------------------------------------------------------


class _Slot:
    """A node in one view: what is left of it, and (HAMi's view) its cards."""

    __slots__ = ("view", "free", "state")

    def __init__(self, view: ViewNode, free: Resources, state: NodeState | None) -> None:
        self.view = view
        self.free = free
        self.state = state


class _Shape:
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


Check = Callable[[_Shape, Mapping, _Slot], tuple[str, NodeState | None]]


class _View:
    """One view's nodes and round-robin position."""

    def __init__(self, slots: list[_Slot], check: Check) -> None:
        self.slots = slots
        self.check = check
        self.rr = 0

    def place(self, shape: _Shape, pod: Mapping) -> _Slot | None:
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


def _static(shape: _Shape, pod: Mapping, slot: _Slot) -> str:
    key = id(slot)
    reason = shape.static.get(key)
    if reason is None:
        node = slot.view.node
        reason = shape.static[key] = static_mismatch(pod, node) or _cordoned(pod, node)
    return reason


_UNSCHEDULABLE_NODE = {"spec": {"taints": [UNSCHEDULABLE_TAINT]}}


def _cordoned(pod: Mapping, node: Mapping) -> str:
    spec = node.get("spec")
    if not (isinstance(spec, Mapping) and spec.get("unschedulable") is True):
        return ""
    return "node(s) were unschedulable" if untolerated_taint(pod, _UNSCHEDULABLE_NODE) else ""


def _ca_check(shape: _Shape, pod: Mapping, slot: _Slot) -> tuple[str, NodeState | None]:
    return _static(shape, pod, slot) or insufficient(shape.demand, slot.free), None


def _hami_check(sim: Simulator) -> Check:
    def check(shape: _Shape, pod: Mapping, slot: _Slot) -> tuple[str, NodeState | None]:
        why = _static(shape, pod, slot) or insufficient(shape.demand, slot.free)
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


def _ca_slots(nodes: Sequence[ViewNode], profile: CAProfile) -> list[_Slot]:
    out = []
    for view in nodes:
        extra = None
        if profile.aggregate and view.state is not None:
            extra = aggregate_capacity(view.state.devices, profile.aggregate)
        out.append(_Slot(view, _minus(node_allocatable(view.node), view.requested, extra), None))
    return out


def _hami_slots(nodes: Sequence[ViewNode]) -> list[_Slot]:
    return [_Slot(v, _minus(node_allocatable(v.node), v.requested), v.state) for v in nodes]


# -- entry points ---------------------------------------------------------------------------------------


def _priority(pod: Mapping) -> int:
    spec = pod.get("spec")
    value = spec.get("priority") if isinstance(spec, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _shape_key(pod: Mapping) -> bytes:
    meta = pod.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    try:
        return orjson.dumps([pod.get("spec"), annotations], option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return repr(pod).encode()


def _device_memory(ctx: PodContext | None) -> int:
    if ctx is None:
        return 0
    return max((r.memreq for c in ctx.pod.requests.containers for r in c.values()), default=0)


def _largest_free_card(slots: Sequence[_Slot]) -> int | None:
    best: int | None = None
    for slot in slots:
        if slot.state is None:
            continue
        for dev in slot.state.devices:
            if dev.health:
                free = dev.totalmem - dev.usedmem
                best = free if best is None or free > best else best
    return best


def _summary(reasons: Counter[str]) -> str:
    return "; ".join(f"{n} node(s): {why}" for why, n in reasons.most_common(3)) or "no node"


def pod_views(
    sim: Simulator, nodes: Sequence[ViewNode], pending: Sequence[Pending], profile: CAProfile
) -> list[PodViews]:
    """Both views of every pending pod (input order). Raises ``PodError``/``WeightsError`` for a pod
    the engine cannot parse (the caller skips it)."""
    managed = sim.managed_resources()
    ca_ignored = profile.ignored - {n for e in profile.aggregate.values() for n in (e.memory, e.cores)}
    ca = _View(_ca_slots(nodes, profile), _ca_check)
    hami = _View(_hami_slots(nodes), _hami_check(sim))
    initial = {id(s.view): s.free.copy() for s in ca.slots}
    ca_shapes: dict[bytes, _Shape] = {}
    hami_shapes: dict[bytes, _Shape] = {}
    order = sorted(range(len(pending)), key=lambda i: -_priority(pending[i].pod))
    out: list[PodViews | None] = [None] * len(pending)
    for i in order:
        entry = pending[i]
        pod = entry.pod
        key = _shape_key(pod)
        ca_shape = ca_shapes.get(key)
        if ca_shape is None:
            ca_shape = ca_shapes[key] = _Shape(pod_demand(pod, ca_ignored), None, len(nodes))
            ctx = sim.pod_context(pod)
            hami_shapes[key] = _Shape(pod_demand(pod, managed), ctx, len(nodes))
        hami_shape = hami_shapes[key]
        raw_meta = pod.get("metadata")
        meta: Mapping = raw_meta if isinstance(raw_meta, Mapping) else {}
        views = PodViews(pod_id(pod), str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        views.device_memory = _device_memory(hami_shape.ctx)
        ca_slot = ca.place(ca_shape, pod)
        if ca_slot is None:
            views.ca_reason = _summary(ca_shape.reasons)
        else:
            views.ca_node, views.ca_node_group = ca_slot.view.name, ca_slot.view.node_group
            left = initial[id(ca_slot.view)].scalars or {}
            views.ca_free = {n: left.get(n, 0) for n in (ca_shape.demand.scalars or {})}
        hami_slot = hami.place(hami_shape, pod)
        if hami_slot is None:
            views.hami_reason = entry.reasons or _summary(hami_shape.reasons)
            if views.ca_node is not None:
                if hami_shape.largest == -1:  # once per shape: nodes only fill up after that
                    hami_shape.largest = _largest_free_card(hami.slots)
                views.largest_free_card = hami_shape.largest
        else:
            views.hami_node = hami_slot.view.name
        out[i] = views
    return [v for v in out if v is not None]


@dataclass(slots=True)
class DrainViews:
    """Whether a node's pods could be re-placed on the other nodes, in both views (CA's scale-down
    simulation uses the same predicates as its FilterOutSchedulable)."""

    node: str
    pods: int
    ca_movable: bool
    hami_movable: bool
    ca_reason: str = ""
    hami_reason: str = ""

    @property
    def ca_wrong(self) -> bool:
        """CA would think the node removable while HAMi could not re-place its pods."""
        return self.ca_movable and not self.hami_movable


def drain_views(
    sim: Simulator,
    nodes: Sequence[ViewNode],
    pods: Mapping[str, Sequence[Mapping]],
    profile: CAProfile,
    *,
    same_group: bool = False,
) -> list[DrainViews]:
    """For each node that has pods in ``pods`` (node name -> its pods, as pod specs with their
    device requests), whether both views could place all of them on the other nodes (upcoming nodes
    excluded: CA's scale-down does not count on them). ``same_group``: only the nodes of the node's
    own group are candidates (for pods rebuilt from their allocations, which lost the selectors and
    tolerations that keep them on their group)."""
    out = []
    others_all = [n for n in nodes if not n.upcoming]
    for view in others_all:
        mine = pods.get(view.name)
        if not mine:
            continue
        others = [
            n
            for n in others_all
            if n.name != view.name and (not same_group or n.node_group == view.node_group)
        ]
        result = pod_views(sim, others, [Pending(p) for p in mine], profile)
        ca_left = [r for r in result if r.ca_node is None]
        hami_left = [r for r in result if r.hami_node is None]
        out.append(
            DrainViews(
                view.name,
                len(mine),
                not ca_left,
                not hami_left,
                ca_left[0].ca_reason if ca_left else "",
                hami_left[0].hami_reason if hami_left else "",
            )
        )
    return out
