"""Both views of every pending pod (``pod_views``) and of draining each node (``drain_views``): the
entry points, which run the shared placement loop once per view."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from .. import reasons as R
from ..names import pod_id
from ..scheduler_filters import pod_demand
from ..simulate import PodContext, Simulator
from .inputs import CAProfile, Pending, ViewNode
from .placement import Shape, Slot, View, ca_check, ca_slots, hami_check, hami_slots, static_reason

__all__ = ["DrainViews", "PodViews", "drain_views", "pod_views"]


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
    largest_free_card: int | None = (
        None  # free MiB of the roomiest card the pod could use (its nodes, its card type)
    )

    @property
    def invisible(self) -> bool:
        """CA thinks an existing or upcoming node takes it; HAMi's device rules place it nowhere."""
        return self.ca_node is not None and self.hami_node is None


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


#: a card the pod's own rules refuse whatever it holds (health, type, UUID): not "room" for it
_NOT_FOR_THE_POD = frozenset({R.CARD_NOT_HEALTH, R.CARD_TYPE_MISMATCH, R.CARD_UUID_MISMATCH})


def _largest_free_card(sim: Simulator, shape: Shape, pod: Mapping, slots: Sequence[Slot]) -> int | None:
    """The free memory of the roomiest card the pod could use: on nodes its nodeSelector, affinity
    and tolerations allow, among the cards HAMi's Fit judged on memory or cores, not refused for
    health, type or UUID (an A10 card on a node the pod's selector excludes is no room for an H100
    pod). None when no such card was seen."""
    ctx = shape.ctx
    if ctx is None:
        return None
    best: int | None = None
    for slot in slots:
        if slot.state is None or static_reason(shape, pod, slot):
            continue
        fit = sim.evaluate(ctx, slot.view.name, slot.state).fit
        reasons = fit.device_reasons if fit is not None else {}
        for dev in slot.state.devices:
            why = reasons.get(dev.id)
            if why is None or why in _NOT_FOR_THE_POD:
                continue
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
    run = _Run(sim, nodes, profile)
    order = sorted(range(len(pending)), key=lambda i: -_priority(pending[i].pod))
    out: list[PodViews | None] = [None] * len(pending)
    for i in order:
        entry = pending[i]
        pod = entry.pod
        ca_shape, hami_shape = run.shapes(pod)
        raw_meta = pod.get("metadata")
        meta: Mapping = raw_meta if isinstance(raw_meta, Mapping) else {}
        views = PodViews(pod_id(pod), str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        views.device_memory = _device_memory(hami_shape.ctx)
        run.place_for_ca(views, ca_shape, pod)
        run.place_for_hami(views, hami_shape, entry)
        out[i] = views
    return [v for v in out if v is not None]


class _Run:
    """One ``pod_views`` call: both views over the same nodes, and the pod shapes seen so far (one
    parse and one demand per shape and view)."""

    __slots__ = ("sim", "count", "managed", "ca_ignored", "ca", "hami", "initial", "ca_shapes", "hami_shapes")

    def __init__(self, sim: Simulator, nodes: Sequence[ViewNode], profile: CAProfile) -> None:
        self.sim = sim
        self.count = len(nodes)
        self.managed = sim.managed_resources()
        # aggregate mode: the names the nodes advertise are counted, no longer ignored
        self.ca_ignored = profile.ignored - {
            n for e in profile.aggregate.values() for n in (e.memory, e.cores)
        }
        self.ca = View(ca_slots(nodes, profile), ca_check)
        self.hami = View(hami_slots(nodes), hami_check(sim))
        self.initial = {id(s.view): s.free.copy() for s in self.ca.slots}
        self.ca_shapes: dict[bytes, Shape] = {}
        self.hami_shapes: dict[bytes, Shape] = {}

    def shapes(self, pod: Mapping) -> tuple[Shape, Shape]:
        """The pod's shape in CA's view and in HAMi's."""
        key = _shape_key(pod)
        ca_shape = self.ca_shapes.get(key)
        if ca_shape is None:
            ca_shape = self.ca_shapes[key] = Shape(pod_demand(pod, self.ca_ignored), None, self.count)
            ctx = self.sim.pod_context(pod)
            self.hami_shapes[key] = Shape(pod_demand(pod, self.managed), ctx, self.count)
        return ca_shape, self.hami_shapes[key]

    def place_for_ca(self, views: PodViews, shape: Shape, pod: Mapping) -> None:
        """CA's view: the node it would put the pod on, with the extended resources the pod asks
        as they were free there before any pending pod; else why no node."""
        slot = self.ca.place(shape, pod)
        if slot is None:
            views.ca_reason = _summary(shape.reasons)
            return
        views.ca_node, views.ca_node_group = slot.view.name, slot.view.node_group
        left = self.initial[id(slot.view)].scalars or {}
        views.ca_free = {n: left.get(n, 0) for n in (shape.demand.scalars or {})}

    def place_for_hami(self, views: PodViews, shape: Shape, entry: Pending) -> None:
        """HAMi's view: the node, else why not (its own FailedScheduling text when known) and, for a
        pod CA places, the roomiest free card (once per shape: nodes only fill up after that)."""
        slot = self.hami.place(shape, entry.pod)
        if slot is not None:
            views.hami_node = slot.view.name
            return
        views.hami_reason = entry.reasons or _summary(shape.reasons)
        if views.ca_node is not None:
            if shape.largest == -1:
                shape.largest = _largest_free_card(self.sim, shape, entry.pod, self.hami.slots)
            views.largest_free_card = shape.largest


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
        out.append(_drain(view.name, len(mine), pod_views(sim, others, [Pending(p) for p in mine], profile)))
    return out


def _drain(node: str, pods: int, result: list[PodViews]) -> DrainViews:
    """A node's drain in both views from its pods' views on the other nodes (the first reason each)."""
    ca_left = [r for r in result if r.ca_node is None]
    hami_left = [r for r in result if r.hami_node is None]
    return DrainViews(
        node,
        pods,
        not ca_left,
        not hami_left,
        ca_left[0].ca_reason if ca_left else "",
        hami_left[0].hami_reason if hami_left else "",
    )
