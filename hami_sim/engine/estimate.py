"""Multi-pod scale-up estimate: CA's binpacking estimator with HAMi's device fit carried pod to pod.

A stateless extender answers every template node with zero device usage, so CA's estimator believes
one node holds far more GPU pods than it can. This module runs the whole binpacking in one call, the
way CA's ``BinpackingNodeEstimator`` does (design.md section 7):

- pods with the same owner and identical spec form an equivalence group; groups are ordered by the
  share of the template they take (``cpu/allocatable cpu + memory/allocatable memory``, descending),
  ties by device memory requested (descending), then input order;
- per group: place pods on the nodes added so far, round-robin from the node after the last match,
  until one fails; then for each remaining pod try the last added node, else add a new node; stop
  the group when its pod does not fit an empty node (or the node limit is reached);
- a node's devices carry the usage of the pods already on it (``PodFit.usage_after``), so the second
  12000 MiB pod on a 23028 MiB A10 goes to the other card, and the third needs a new node.

Speed: pods of one shape (same parsed request, policies and resource demand) fit identically, so a
fit depends only on the node's device usage (numbers, MIG placements and the ``custom_info`` Fit
reads, e.g. a MetaX sGPU card's QoS tag). Verdicts are memoised per (shape, usage signature);
each shape keeps a sorted list of candidate nodes, from which a node that rejected it leaves until a
placement changes that node, so the round-robin scan does not walk over full nodes again and again;
device lists are treated as immutable and shared between nodes in the same state; pods without a
controller (one equivalence group each, as in CA) share parsing with identical pods. That keeps
10,000 pods well under a second.
"""

from __future__ import annotations

import re
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from .model import DeviceUsage, NodeState
from .policy import WeightsError
from .predicates import (
    Resources,
    insufficient,
    node_allocatable,
    node_capacity,
    node_problem,
    pod_demand,
    static_mismatch,
)
from .requests import PodError, pod_id
from .simulate import PodContext, Simulator

__all__ = [
    "EXPANDERS",
    "DEFAULT_MAX_NODES_PER_SCALE_UP",
    "EstimateError",
    "GroupTemplate",
    "PendingPods",
    "Expander",
    "parse_expander",
    "EstimatedNode",
    "Waste",
    "GroupOption",
    "EstimateResult",
    "estimate",
]

EXPANDERS = ("least-waste", "most-pods", "least-nodes", "priority")
DEFAULT_MAX_NODES_PER_SCALE_UP = 1000


class EstimateError(ValueError):
    """Input the estimator cannot use; ``str()`` is the client-facing message (HTTP 400)."""


@dataclass(slots=True, frozen=True)
class GroupTemplate:
    """A node group to grow: CA's id, a template Node, and how many nodes it may still add."""

    name: str
    template: Mapping
    max_new_nodes: int | None = None


@dataclass(slots=True, frozen=True)
class PendingPods:
    """A pending pod; with ``count`` it stands for that many replicas with ids ``<id>#0..n-1``."""

    pod: Mapping
    count: int | None = None


@dataclass(slots=True, frozen=True)
class Expander:
    """An expander chain (CA's ``--expander=a,b``) and the priority expander's regex table."""

    names: tuple[str, ...] = ("least-waste",)
    priorities: tuple[tuple[int, re.Pattern[str]], ...] = ()


def parse_expander(value: object, priorities: object = None) -> Expander:
    """``"least-waste"``, ``"priority,least-waste"`` or ``{"name": ..., "priorities": ...}``.

    Priorities use CA's priority-expander ConfigMap shape, ``{"<int>": ["<regex>", ...]}``; the
    inverse ``{"<regex>": <int>}`` is accepted too. Higher wins; a group matching no regex is used
    only when no group matches any.
    """
    if isinstance(value, Mapping):
        priorities = value.get("priorities", priorities)
        value = value.get("name")
    if value is None:
        value = "least-waste"
    if not isinstance(value, str) or not value.strip():
        raise EstimateError("expander must be a string such as 'least-waste' or 'priority,least-waste'")
    names = tuple(part.strip() for part in value.split(",") if part.strip())
    for name in names:
        if name not in EXPANDERS:
            raise EstimateError(f"unknown expander {name!r}; supported: {', '.join(EXPANDERS)}")
    table: list[tuple[int, re.Pattern[str]]] = []
    if priorities is not None:
        if not isinstance(priorities, Mapping):
            raise EstimateError('priorities must be an object {"<priority>": ["<regex>", ...]}')
        for key, val in priorities.items():
            if isinstance(val, list):
                prio_raw, patterns = key, val
            elif isinstance(val, int) and not isinstance(val, bool):
                prio_raw, patterns = val, [key]
            else:
                raise EstimateError(f"priorities[{key!r}] must be a list of regular expressions")
            try:
                prio = int(prio_raw)
            except (TypeError, ValueError):
                raise EstimateError(f"priority {prio_raw!r} is not an integer") from None
            for pattern in patterns:
                if not isinstance(pattern, str):
                    raise EstimateError(f"priorities[{key!r}] must hold strings")
                try:
                    table.append((prio, re.compile(pattern)))
                except re.error as exc:
                    raise EstimateError(f"invalid priority regex {pattern!r}: {exc}") from None
    if "priority" in names and not table:
        raise EstimateError("the priority expander needs a priorities map")
    return Expander(names, tuple(table))


@dataclass(slots=True)
class EstimatedNode:
    """A new node of the group with the pods placed on it and its device usage afterwards."""

    name: str
    pods: list[str]
    devices: list[DeviceUsage]
    requested: Resources


@dataclass(slots=True)
class Waste:
    """Unused share (0..1) of the new nodes' cpu, memory, device memory and device cores."""

    cpu: float = 0.0
    memory: float = 0.0
    gpu_memory: float = 0.0
    gpu_cores: float = 0.0

    @property
    def score(self) -> float:
        return self.cpu + self.memory + self.gpu_memory + self.gpu_cores


@dataclass(slots=True)
class GroupOption:
    """One node group's binpacking result (an ``expander.Option`` in CA)."""

    node_group: str
    node_count: int = 0
    scheduled: list[str] = field(default_factory=list)
    unschedulable: dict[str, str] = field(default_factory=dict)
    nodes: list[EstimatedNode] = field(default_factory=list)
    waste: Waste = field(default_factory=Waste)


@dataclass(slots=True)
class EstimateResult:
    options: list[GroupOption]
    chosen: str | None
    explanation: str


# -- equivalence groups ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Equivalence:
    pod: Mapping
    ids: list[str]
    order: int
    ctx: PodContext | None = None
    demand: Resources | None = None
    spec_key: bytes = b""  # spec + annotations: equal keys fit and filter identically


def _owner(pod: Mapping) -> str:
    # plain ``dict`` checks: this runs once per pending pod, and ABC isinstance checks are slow
    meta = pod.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    if isinstance(refs, list):
        for ref in refs:
            if isinstance(ref, dict) and ref.get("controller"):
                return f"{ref.get('kind', '')}/{ref.get('name', '')}/{ref.get('uid', '')}"
    return ""


def _pod_id(pod: Mapping) -> str:
    """``requests.pod_id`` (uid, else ``<namespace>/<name>``) with a plain-dict fast path."""
    meta = pod.get("metadata")
    if type(meta) is dict:
        uid = meta.get("uid")
        if type(uid) is str and uid:
            return uid
        return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
    return pod_id(pod)


def _group_pods(entries: Sequence[PendingPods]) -> list[_Equivalence]:
    """CA's ``groupPods``: same controller and identical spec (plus annotations, which HAMi reads)."""
    groups: dict[object, _Equivalence] = {}
    seen: set[str] = set()
    for position, entry in enumerate(entries):
        pod = entry.pod
        if type(pod) is not dict and not isinstance(pod, Mapping):
            raise EstimateError(f"pods[{position}] must be a Pod object")
        base = _pod_id(pod)
        ids = [base] if entry.count is None else [f"{base}#{i}" for i in range(entry.count)]
        for pid in ids:
            if pid in seen:
                raise EstimateError(f"duplicate pod id {pid!r}: give pods distinct metadata.uid or names")
            seen.add(pid)
        owner = _owner(pod)
        if owner:
            meta = pod.get("metadata") or {}
            try:
                key: object = (
                    owner,
                    meta.get("namespace") or "default",
                    orjson.dumps([pod.get("spec"), meta.get("annotations")], option=orjson.OPT_SORT_KEYS),
                )
            except TypeError as exc:
                raise EstimateError(f"pod {base}: {exc}") from None
        else:
            key = position  # CA never groups pods without a controller
        group = groups.get(key)
        if group is None:
            groups[key] = _Equivalence(pod, ids, position)
        else:
            group.ids.extend(ids)
    return list(groups.values())


# -- one node group ----------------------------------------------------------------------------------


class _Node:
    __slots__ = ("name", "state", "sig", "free", "pods")

    def __init__(self, name: str, state: NodeState, sig: tuple, free: Resources) -> None:
        self.name = name
        self.state = state
        self.sig = sig
        self.free = free
        self.pods: list[str] = []


def _info_key(info: dict) -> bytes:
    """A canonical form of a device's ``custom_info`` (only built when it is non-empty).

    Fit reads it (MetaX sGPU's card QoS policy, which ``add_pod_usage`` retags after a placement), so
    two nodes with equal usage numbers but different ``custom_info`` must not share a memoised verdict.
    """
    try:
        return orjson.dumps(info, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except TypeError:  # not JSON-shaped (never from annotations): fall back to its repr
        return repr(sorted(info.items(), key=repr)).encode()


def _signature(devices: list[DeviceUsage]) -> tuple:
    """Everything Fit reads that placements change: usage numbers, MIG placements, ``custom_info``.

    Computed only for fresh templates and on memo misses, so canonicalising ``custom_info`` is cheap;
    a dict shared by several devices (MetaX GPU topology tables) is canonicalised once per call (the
    list keeps it alive, so its ``id`` is stable here); devices without it keep the plain tuple.
    """
    keys: dict[int, bytes] = {}
    out = []
    for d in devices:
        info = d.custom_info
        if info:
            key = keys.get(id(info))
            if key is None:
                key = keys[id(info)] = _info_key(info)
            out.append((d.used, d.usedmem, d.usedcores, tuple(d.mig_in_use) if d.mig_in_use else (), key))
        elif d.mig_in_use:
            out.append((d.used, d.usedmem, d.usedcores, tuple(d.mig_in_use)))
        else:
            out.append((d.used, d.usedmem, d.usedcores))
    return tuple(out)


class _Fitter:
    """Fits one pod shape on nodes of one group, memoised by device-usage signature."""

    __slots__ = ("sim", "ctx", "demand", "devices", "memo")

    def __init__(self, sim: Simulator, eq: _Equivalence) -> None:
        self.sim = sim
        self.ctx = eq.ctx
        self.demand = eq.demand
        self.devices = eq.ctx.pod.requests.has_requests  # type: ignore[union-attr]
        self.memo: dict[tuple, tuple[str, list[DeviceUsage] | None, tuple]] = {}

    def check(self, node: _Node) -> tuple[str, list[DeviceUsage] | None, tuple]:
        """("" or the reason, devices after placing, their signature)."""
        reason = insufficient(self.demand, node.free)  # type: ignore[arg-type]
        if reason:
            return reason, None, node.sig
        if not self.devices:
            return "", node.state.devices, node.sig
        cached = self.memo.get(node.sig)
        if cached is None:
            verdict = self.sim.evaluate(self.ctx, node.name, node.state)  # type: ignore[arg-type]
            if verdict.fits and verdict.fit is not None and verdict.fit.usage_after is not None:
                after = list(verdict.fit.usage_after)
                cached = ("", after, _signature(after))
            else:
                cached = (verdict.reason or "pod does not fit", None, node.sig)
            self.memo[node.sig] = cached
        return cached

    def place(self, node: _Node, pid: str, devices: list[DeviceUsage] | None, sig: tuple) -> None:
        free, demand = node.free, self.demand
        free.cpu -= demand.cpu  # type: ignore[union-attr]
        free.memory -= demand.memory  # type: ignore[union-attr]
        free.ephemeral -= demand.ephemeral  # type: ignore[union-attr]
        free.pods -= 1
        node.pods.append(pid)
        if devices is not None and devices is not node.state.devices:
            node.state = NodeState(node.name, devices, node.state.pair_scores, node.state.cordoned)
            node.sig = sig


class _Shape:
    """Pods that fit identically (same parsed request, policies and resource demand).

    They share one fit memo and one sorted list of candidate node indices: a node that rejected the
    shape leaves the list until a placement changes that node, so the round-robin scan does not walk
    over full nodes again and again. ``seen`` = how many of the group's nodes the list covers.
    """

    __slots__ = ("fitter", "cands", "seen")

    def __init__(self, fitter: _Fitter) -> None:
        self.fitter = fitter
        self.cands: list[int] = []
        self.seen = 0


def _device_memory(eq: _Equivalence, devmem: int) -> int:
    total = 0
    for requests in eq.ctx.pod.requests.containers:  # type: ignore[union-attr]
        for req in requests.values():
            mem = req.memreq if req.memreq > 0 else devmem * req.mem_percentage_req // 100
            total += req.nums * mem
    return total


def _template_name(group: GroupTemplate) -> str:
    meta = group.template.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) and name else f"template-node-for-{group.name}"


def _estimate_group(
    sim: Simulator, group: GroupTemplate, equivalences: list[_Equivalence], max_nodes: int
) -> GroupOption:
    option = GroupOption(group.name)
    template = group.template
    allocatable = node_allocatable(template)
    inventory = sim.inventory(template)
    base_name = _template_name(group)
    fresh_devices = inventory.state(base_name).devices if not inventory.error else []
    fresh_sig = _signature(fresh_devices)
    first_devmem = fresh_devices[0].totalmem if fresh_devices else 0
    limit = max_nodes if group.max_new_nodes is None else min(max_nodes, group.max_new_nodes)

    def share(eq: _Equivalence) -> float:
        d = eq.demand
        cpu = d.cpu / allocatable.cpu if allocatable.cpu else 0.0  # type: ignore[union-attr]
        mem = d.memory / allocatable.memory if allocatable.memory else 0.0  # type: ignore[union-attr]
        return cpu + mem

    ordered = sorted(equivalences, key=lambda eq: (-share(eq), -_device_memory(eq, first_devmem), eq.order))
    nodes: list[_Node] = []
    last: _Node | None = None
    rr = 0  # CA's predicate checker resumes its scan after the node it matched last
    shapes: dict[tuple, _Shape] = {}
    rejecters: dict[int, list[_Shape]] = {}  # node index -> shapes that dropped it from their list

    def add_node() -> _Node:
        name = f"{base_name}-e-{len(nodes)}"
        state = NodeState(name, fresh_devices, inventory.pair_scores, inventory.cordoned)
        node = _Node(name, state, fresh_sig, allocatable.copy())
        nodes.append(node)
        return node

    def placed(idx: int) -> None:
        """The node changed: shapes that gave up on it must look at it again."""
        for shape in rejecters.pop(idx, ()):
            insort(shape.cands, idx)

    def find(shape: _Shape, start: int) -> tuple[int, tuple] | None:
        """CA's FitsAnyNodeMatching: the first fitting node at or after ``start``, wrapping around."""
        if shape.seen < len(nodes):
            shape.cands.extend(range(shape.seen, len(nodes)))
            shape.seen = len(nodes)
        cands = shape.cands
        check = shape.fitter.check
        while cands:
            pos = bisect_left(cands, start)
            if pos == len(cands):
                pos = 0
            idx = cands[pos]
            result = check(nodes[idx])
            if not result[0]:
                return idx, result
            del cands[pos]
            rejecters.setdefault(idx, []).append(shape)
            start = idx
        return None

    static: dict[bytes, str] = {}
    for eq in ordered:
        ids = eq.ids
        reason = static.get(eq.spec_key)
        if reason is None:
            reason = static[eq.spec_key] = static_mismatch(eq.pod, template)
        if not reason and inventory.error and eq.ctx.pod.requests.has_requests:  # type: ignore[union-attr]
            reason = inventory.error
        if reason:
            for pid in ids:
                option.unschedulable[pid] = reason
            continue
        d = eq.demand
        key = (eq.ctx.key, d.cpu, d.memory, d.ephemeral, d.pods)  # type: ignore[union-attr]
        shape = shapes.get(key)
        if shape is None:
            shape = shapes[key] = _Shape(_Fitter(sim, eq))
        fitter = shape.fitter
        i = 0
        # 1. the nodes added so far, round-robin from the node after the last match, until one fails
        while i < len(ids) and nodes:
            found = find(shape, rr)
            if found is None:
                break
            idx, (_, devices, sig) = found
            fitter.place(nodes[idx], ids[i], devices, sig)
            placed(idx)
            rr = (idx + 1) % len(nodes)
            i += 1
        # 2. the last added node, else a new node; stop when an empty node cannot hold the pod
        stop_reason = ""
        while i < len(ids):
            pid = ids[i]
            if last is not None:
                why, devices, sig = fitter.check(last)
                if not why:
                    fitter.place(last, pid, devices, sig)
                    placed(len(nodes) - 1)
                    i += 1
                    continue
                if not last.pods:
                    stop_reason = why
                    break
            if len(nodes) >= limit:
                stop_reason = f"node limit reached: at most {limit} new node(s) for node group {group.name}"
                break
            last = add_node()
            why, devices, sig = fitter.check(last)
            if why:
                stop_reason = why
                break
            fitter.place(last, pid, devices, sig)
            placed(len(nodes) - 1)
            i += 1
        for pid in ids[i:]:
            option.unschedulable[pid] = stop_reason
        option.scheduled.extend(ids[:i])

    used = [node for node in nodes if node.pods]
    option.node_count = len(used)
    capacity = node_capacity(template)
    cpu_used = mem_used = 0
    gpu_total = gpu_used = core_total = core_used = 0
    for node in used:
        requested = Resources(
            allocatable.cpu - node.free.cpu,
            allocatable.memory - node.free.memory,
            allocatable.ephemeral - node.free.ephemeral,
            allocatable.pods - node.free.pods,
        )
        cpu_used += requested.cpu
        mem_used += requested.memory
        for dev in node.state.devices:
            gpu_total += dev.totalmem
            gpu_used += dev.usedmem
            core_total += dev.totalcore
            core_used += dev.usedcores
        option.nodes.append(EstimatedNode(node.name, node.pods, node.state.devices, requested))
    if used:
        cpu_total = capacity.cpu * len(used)
        mem_total = capacity.memory * len(used)
        option.waste = Waste(
            max(0.0, (cpu_total - cpu_used) / cpu_total) if cpu_total else 0.0,
            max(0.0, (mem_total - mem_used) / mem_total) if mem_total else 0.0,
            max(0.0, (gpu_total - gpu_used) / gpu_total) if gpu_total else 0.0,
            max(0.0, (core_total - core_used) / core_total) if core_total else 0.0,
        )
    return option


# -- expanders -----------------------------------------------------------------------------------------


def _best(options: list[GroupOption], key) -> list[GroupOption]:
    values = [key(o) for o in options]
    top = max(values)
    return [o for o, v in zip(options, values, strict=True) if v == top]


def _apply(name: str, options: list[GroupOption], expander: Expander) -> list[GroupOption]:
    if name == "least-waste":
        return _best(options, lambda o: -round(o.waste.score, 9))
    if name == "most-pods":
        return _best(options, lambda o: len(o.scheduled))
    if name == "least-nodes":
        return _best(options, lambda o: -o.node_count)

    def priority(o: GroupOption) -> float:
        matched = [p for p, rx in expander.priorities if rx.search(o.node_group)]
        return max(matched) if matched else float("-inf")

    best = _best(options, priority)
    return best if priority(best[0]) != float("-inf") else options


def _describe(option: GroupOption) -> str:
    total = len(option.scheduled) + len(option.unschedulable)
    w = option.waste
    return (
        f"{option.node_group!r}: {option.node_count} new node(s) for {len(option.scheduled)}/{total} pod(s), "
        f"waste cpu {w.cpu:.3f}, memory {w.memory:.3f}, gpuMemory {w.gpu_memory:.3f}, "
        f"gpuCores {w.gpu_cores:.3f} (score {w.score:.3f})"
    )


def _why_not(option: GroupOption) -> str:
    reasons = Counter(option.unschedulable.values())
    if not reasons:
        return f"{option.node_group!r}: no pods to place"
    reason, count = reasons.most_common(1)[0]
    return f"{option.node_group!r}: no pod fits ({count} pod(s): {reason})"


def _choose(options: list[GroupOption], expander: Expander) -> tuple[str | None, str]:
    viable = [o for o in options if o.scheduled]
    rejected = [o for o in options if not o.scheduled]
    if not viable:
        detail = "; ".join(_why_not(o) for o in rejected) or "no node groups given"
        return None, f"No node group can schedule any pending pod. {detail}."
    remaining = viable
    steps: list[str] = []
    for name in expander.names:
        if len(remaining) <= 1:
            break
        before = len(remaining)
        remaining = _apply(name, remaining, expander)
        steps.append(f"{name} kept {len(remaining)} of {before}")
    chosen = remaining[0]
    chain = ",".join(expander.names)
    parts = [f"Expander {chain} chose {_describe(chosen)}."]
    if len(viable) == 1:
        parts.append("It was the only node group that could schedule any pod.")
    else:
        if steps:
            parts.append("Steps: " + "; ".join(steps) + ".")
        if len(remaining) > 1:
            parts.append("Remaining ties go to the earliest node group in the request.")
        others = [_describe(o) for o in viable if o is not chosen]
        parts.append("Other options: " + "; ".join(others) + ".")
    if rejected:
        parts.append("Not options: " + "; ".join(_why_not(o) for o in rejected) + ".")
    unsched = len(chosen.unschedulable)
    if unsched:
        parts.append(f"{unsched} pod(s) stay pending even with this scale-up.")
    return chosen.node_group, " ".join(parts)


# -- entry point ---------------------------------------------------------------------------------------


def estimate(
    sim: Simulator,
    pods: Sequence[PendingPods],
    groups: Sequence[GroupTemplate],
    expander: Expander | None = None,
    max_nodes_per_scale_up: int = DEFAULT_MAX_NODES_PER_SCALE_UP,
) -> EstimateResult:
    """Bin-pack ``pods`` onto new nodes of each group; one option per group (input order) + choice.

    Raises ``EstimateError`` for unusable input (malformed pod, bad weights, duplicate ids).
    """
    expander = expander or Expander()
    equivalences = _group_pods(pods)
    parsed: dict[bytes, tuple[PodContext, Resources]] = {}
    for eq in equivalences:
        try:
            meta = eq.pod.get("metadata")
            annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
            try:
                spec_key = orjson.dumps([eq.pod.get("spec"), annotations], option=orjson.OPT_SORT_KEYS)
            except TypeError as exc:
                raise PodError(str(exc)) from None
            cached = parsed.get(spec_key)
            if cached is None:  # pods without a controller are separate groups but often identical
                cached = parsed[spec_key] = (sim.pod_context(eq.pod), pod_demand(eq.pod))
            eq.ctx, eq.demand = cached
            eq.spec_key = spec_key
        except PodError as exc:
            raise EstimateError(f"pod {eq.ids[0] if eq.ids else pod_id(eq.pod)}: {exc}") from None
        except WeightsError as exc:
            meta = eq.pod.get("metadata")
            name = meta.get("name", "") if isinstance(meta, Mapping) else ""
            raise EstimateError(f"calcScore failed {exc} for pod {name}") from None
    equivalences = [eq for eq in equivalences if eq.ids]
    names: set[str] = set()
    for group in groups:
        if group.name in names:
            raise EstimateError(f"node group {group.name!r} is listed twice")
        names.add(group.name)
        problem = node_problem(group.template)
        if problem:
            raise EstimateError(f"node group {group.name!r}: template {problem}")
    options = []
    for group in groups:
        try:
            options.append(_estimate_group(sim, group, equivalences, max_nodes_per_scale_up))
        except PodError as exc:  # a template with unparseable status quantities
            raise EstimateError(f"node group {group.name!r}: {exc}") from None
    chosen, explanation = _choose(options, expander)
    return EstimateResult(options, chosen, explanation)
