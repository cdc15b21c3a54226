"""Multi-pod scale-up estimate: CA's binpacking estimator with HAMi's device fit carried pod to pod.

A stateless extender answers every template node with zero device usage, so CA's estimator believes
one node holds far more GPU pods than it can. This module runs the whole binpacking in one call, the
way CA's ``BinpackingNodeEstimator`` does (design.md section 7):

- pods form CA's equivalence groups (``equivalence.py``: same controller, labels and spec but for
  projected volumes, env and hostname; annotations too, as HAMi reads them); groups are ordered by the
  share of the template they take (``cpu/allocatable cpu + memory/allocatable memory``, descending),
  ties by device memory requested (descending), then input order;
- per group: place pods on the nodes added so far, round-robin from the node after the last match,
  until one fails; then for each remaining pod try the last added node, else add a new node; stop
  the group when its pod does not fit an empty node (or the node limit is reached);
- a node's devices carry the usage of the pods already on it (``PodFit.usage_after``), so the second
  12000 MiB pod on a 23028 MiB A10 goes to the other card, and the third needs a new node.
- a pod fits a node when kube-scheduler's filters pass (``predicates.py``: taints, node affinity,
  NodeUnschedulable, resources with sidecars and extended resources; ``interpod.py``: host ports,
  required pod (anti-)affinity and topology spread, counted over the snapshot: the nodes added so
  far with their pods and DaemonSet pods, plus ``cluster`` nodes and upcoming nodes) and HAMi's Fit;
- upcoming nodes (``upcoming``) first take the pods they can hold, as CA's FilterOutSchedulable.

Speed: pods of one shape (same parsed request, policies and resource demand) fit identically, so a
fit depends only on the node's device usage (numbers, MIG placements and the ``custom_info`` Fit
reads, e.g. a MetaX sGPU card's QoS tag). Verdicts are memoised per (shape, usage signature);
each shape keeps a sorted list of candidate nodes, from which a node that rejected it leaves until a
placement changes that node, so the round-robin scan does not walk over full nodes again and again
(except for shapes with pod affinity or topology spread, which a placement elsewhere can make fit);
device lists are treated as immutable and shared between nodes in the same state; pods without a
controller (one equivalence group each, as in CA) share parsing with identical pods. That keeps
10,000 pods well under a second.
"""

from __future__ import annotations

import random
import time
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import orjson
import re2

from .ca_releases import DEFAULT_VERSION, CARelease, ca_release
from .equivalence import PodGroup, group_pods
from .hami_expander import RETURN_MODES, keep_options
from .interpod import (
    HOSTNAME_LABEL,
    PORTS_CONFLICT,
    SPREAD_MISMATCH,
    PodTerms,
    TopologyIndex,
    pod_terms,
    ports_conflict,
)
from .model import DeviceUsage, NodeState
from .names import estimated_node_name, pod_id, template_node_name
from .policy import WeightsError
from .predicates import (
    Resources,
    containers_demand,
    insufficient,
    node_allocatable,
    node_capacity,
    node_problem,
    pod_demand,
    static_mismatch,
    untolerated_taint,
)
from .requests import PodError
from .scaleup import (
    UNSCHEDULABLE_TAINT,
    GroupSize,
    ScaleUpLimits,
    ScaleUpPlan,
    balance,
    cap_new_nodes,
    node_limit,
    sanitize_template,
    similar_templates,
    skip_reason,
)
from .simulate import Inventory, PodContext, Simulator

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
    "ClusterNode",
    "UpcomingNodes",
    "UpcomingNode",
    "ScaleUpLimits",
    "DIFFERENCES",
    "choose",
    "expander_filter",
    "estimate",
]

# CA's names and meaning; ``least-waste-gpu`` is ours (least-waste plus device memory and cores)
EXPANDERS = ("least-waste", "least-waste-gpu", "most-pods", "least-nodes", "priority", "random", "grpc")
# CA's price expander ranks by the cloud provider's node prices; node groups here carry no price
_NEEDS_PRICES = (
    "expander price ranks node groups by the cloud provider's node prices, which hami-sim's node groups "
    "do not carry; simulate with one of: "
)
# Where the estimate departs from CA on purpose (the response lists them; docs/sessions.md too)
DIFFERENCES = (
    "HAMi device fit (with usage carried from pod to pod) is checked on top of CA's predicates",
    "random: 'chosen' is the first of the tied candidates in request order, or a seeded pick with "
    "randomSeed; 'candidates' lists the set CA would pick from at random",
    "gpuTotal counts physical devices from HAMi's inventory, of any type (CA: nvidia.com/gpu "
    "capacity per GPU type)",
    "balance-similar-node-groups compares templates (capacity, allocatable, labels) and, for the "
    "final split, the sets of pods the groups schedule; CA compares the equivalence groups that fit "
    "an empty template",
    "DaemonSet pods take cpu, memory, pod slots, host ports and extended resources on a fresh node, never "
    "HAMi devices",
    "equivalence groups compare annotations too (HAMi's device fit reads them); CA compares the "
    "controller, labels and the spec without projected volumes, env and hostname",
    "equivalence groups that tie on CA's score keep request order (CA's come out of a Go map)",
    "upcomingNodes: pending pods try live nodes (existingNodes) first, then the upcoming nodes; CA's "
    "FilterOutSchedulable scans both in one round-robin",
    "pod (anti-)affinity namespaceSelector: the only namespace label known is "
    "kubernetes.io/metadata.name (a selector on any other label matches no namespace)",
    "hostname topology-spread retry (CA 1.33.1 and later): the other new nodes are tried first, then "
    "the snapshot's existing nodes in input order (CA: its snapshot's order, upcoming nodes "
    "included); a pod asking for HAMi devices is never retried on an existing node",
)
DEFAULT_MAX_NODES_PER_SCALE_UP = 1000


class EstimateError(ValueError):
    """Input the estimator cannot use; ``str()`` is the client-facing message (HTTP 400)."""


@dataclass(slots=True, frozen=True)
class GroupTemplate:
    """A node group to grow: CA's id, a template Node, and how many nodes it may still add."""

    name: str
    template: Mapping
    max_new_nodes: int | None = None
    max_size: int | None = None  # CA's MaxSize(); None = not known (only our limits apply)
    current_size: int = 0  # CA's TargetSize(): the group's live nodes
    daemon_pods: tuple[Mapping, ...] = ()  # pods of DaemonSets that would run on a fresh node

    @property
    def size(self) -> GroupSize:
        return GroupSize(self.name, self.current_size, self.max_size)


@dataclass(slots=True, frozen=True)
class PendingPods:
    """A pending pod; with ``count`` it stands for that many replicas with ids ``<id>#0..n-1``."""

    pod: Mapping
    count: int | None = None


@dataclass(slots=True, frozen=True)
class Expander:
    """An expander chain (CA's ``--expander=a,b``) and the priority expander's regex table."""

    names: tuple[str, ...] = ("least-waste",)
    priorities: tuple[tuple[int, re2._Regexp], ...] = ()
    seed: int | None = None  # random: a seeded pick among the candidates, else the first
    grpc_mode: str = "most-placed"  # grpc: what hami-sim's expander answers (EXPANDER_RETURN)


def parse_expander(
    value: object, priorities: object = None, seed: object = None, grpc_mode: str = "most-placed"
) -> Expander:
    """``"least-waste"``, ``"priority,least-waste"``, ``["priority", "least-waste"]`` or
    ``{"name": ..., "priorities": ...}``, checked as CA's expander factory does: every name known,
    none twice, nothing after ``random`` (it always answers one option, so a later one never runs).
    ``grpc`` is hami-sim's own gRPC expander step (``hami_expander.keep_options``, answering as
    ``grpc_mode``), the one CA runs with ``--expander=grpc,...`` pointed at hami-sim.

    Priorities use CA's priority-expander ConfigMap shape, ``{"<int>": ["<regex>", ...]}``; the
    inverse ``{"<regex>": <int>}`` is accepted too.
    """
    if isinstance(value, Mapping):
        priorities = value.get("priorities", priorities)
        value = value.get("name")
    names = _expander_names("least-waste" if value is None else value)
    table = _priority_table(priorities) if priorities is not None else []
    if "priority" in names and not table:
        raise EstimateError("the priority expander needs a priorities map")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise EstimateError("randomSeed must be an integer")
    if grpc_mode not in RETURN_MODES:
        raise EstimateError(f"grpc expander mode {grpc_mode!r}: one of {', '.join(RETURN_MODES)}")
    return Expander(names, tuple(table), seed, grpc_mode)


def _expander_names(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(part, str) for part in value):
        parts = [part.strip() for part in value]
    else:
        parts = []
    names = tuple(part for part in parts if part)
    if not names:
        raise EstimateError(
            "expander must be a name such as 'least-waste' or a chain 'priority,least-waste' "
            '(or ["priority", "least-waste"])'
        )
    for i, name in enumerate(names):
        if name == "price":
            raise EstimateError(_NEEDS_PRICES + ", ".join(EXPANDERS))
        if name not in EXPANDERS:
            raise EstimateError(f"unknown expander {name!r}; supported: {', '.join(EXPANDERS)}")
        if name in names[:i]:
            raise EstimateError(
                f"expander {name} was specified multiple times; each expander may appear only once"
            )
        if i and names[i - 1] == "random":
            raise EstimateError(
                f"expander {name} comes after random, which always answers one option, so {name} "
                "would never be used"
            )
    return names


# One request may not occupy a worker without bound (issue 16 item 2): 100,000 pods x 100 inline groups
# ran 64.5 s and answered 433 MB. The budget counts pod x group placements before any packing; the
# time limit is checked between pod shapes, so an answer is a 400 with the reason, never a stuck worker.
MAX_WORK = 1_000_000
TIME_LIMIT_SECONDS = 20.0

# Priority regexes come from the caller and are matched against group names it also chooses. Python's
# backtracking ``re`` froze a worker on ``(a+)+$`` against 28-character names (issue 16 item 1); RE2
# matches in time linear in the name, and is the regexp dialect CA's priority expander (Go) uses.
MAX_PRIORITY_PATTERNS = 1000
MAX_PATTERN_CHARS = 1024
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is the caller's 400, not a line in our logs
_RE2_OPTIONS.max_mem = 1 << 20  # a pattern whose automaton needs more is refused, not built


def _compile_priority(pattern: str) -> re2._Regexp:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise EstimateError(f"priority regex of {len(pattern)} characters; at most {MAX_PATTERN_CHARS}")
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        raise EstimateError(
            f"invalid priority regex {pattern[:100]!r} (RE2 syntax, as CA's): {exc}"
        ) from None


def _priority_table(priorities: object) -> list[tuple[int, re2._Regexp]]:
    """``{"<int>": ["<regex>", ...]}`` (or the inverse ``{"<regex>": <int>}``) as (priority, regex)."""
    if not isinstance(priorities, Mapping):
        raise EstimateError('priorities must be an object {"<priority>": ["<regex>", ...]}')
    table: list[tuple[int, re2._Regexp]] = []
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
            if len(table) >= MAX_PRIORITY_PATTERNS:
                raise EstimateError(f"more than {MAX_PRIORITY_PATTERNS} priority regexes")
            table.append((prio, _compile_priority(pattern)))
    return table


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
    skipped: str = ""  # why CA would not consider the group at all (max size, resource limits)
    node_limit: int | None = None  # the most new nodes binpacking may add (None = no limit)
    timed_out: bool = False  # max-nodegroup-binpacking-duration stopped the binpacking
    requested_cpu: int = 0  # app containers' requests of the scheduled pods (least-waste's sums)
    requested_memory: int = 0
    daemon_pods: list[str] = field(default_factory=list)  # DaemonSet pods on every new node
    # pods CA's hostname-topology retry put on an existing node (name -> pod ids); CA counts each
    # such node in the option's node count, as if it were new
    on_existing: dict[str, list[str]] = field(default_factory=dict)


@dataclass(slots=True)
class EstimateResult:
    options: list[GroupOption]
    chosen: str | None
    explanation: str
    candidates: list[str] = field(default_factory=list)  # the tie CA's random fallback picks from
    scale_up: ScaleUpPlan | None = None
    binpacking_seconds: float = 0.0
    binpacking_time_exceeded: bool = False  # over max-binpacking-time (CA 1.32 only logs it)
    upcoming: list[UpcomingNode] | None = None  # the upcoming nodes and the pods they absorbed
    upcoming_scheduled: list[str] = field(default_factory=list)  # absorbed pods, in placement order
    ca_version: str = DEFAULT_VERSION  # the CA release whose binpacking the estimate followed


# -- equivalence groups ------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class _Equivalence:
    """An equivalence group, parsed: its pod's context and resource demand."""

    pod: Mapping
    ids: list[str]
    order: int
    ctx: PodContext
    demand: Resources
    containers: Resources  # app containers only (least-waste)
    spec_key: bytes  # CA's comparison key (+ annotations): equal keys fit and filter identically
    terms: PodTerms  # host ports, required pod (anti-)affinity, topology spread


def _group_pods(entries: Sequence[PendingPods]) -> list[PodGroup]:
    """CA's equivalence groups (``equivalence.group_pods``) of the pending pods; checks the ids."""
    listed: list[tuple[Mapping, list[str]]] = []
    seen: set[str] = set()
    for position, entry in enumerate(entries):
        pod = entry.pod
        if type(pod) is not dict and not isinstance(pod, Mapping):
            raise EstimateError(f"pods[{position}] must be a Pod object")
        base = pod_id(pod)
        ids = [base] if entry.count is None else [f"{base}#{i}" for i in range(entry.count)]
        for pid in ids:
            if pid in seen:
                raise EstimateError(f"duplicate pod id {pid!r}: give pods distinct metadata.uid or names")
            seen.add(pid)
        listed.append((pod, ids))
    try:
        return group_pods(listed)
    except TypeError as exc:
        raise EstimateError(f"pods: {exc}") from None


# -- one node group ----------------------------------------------------------------------------------


class _Node:
    __slots__ = ("name", "state", "sig", "free", "pods", "ports", "topo")

    def __init__(self, name: str, state: NodeState, sig: tuple, free: Resources, ports: set | None) -> None:
        self.name = name
        self.state = state
        self.sig = sig
        self.free = free
        self.pods: list[str] = []
        self.ports = ports  # host ports in use (None = none)
        self.topo = -1  # the node's index in the packer's TopologyIndex (-1 = not indexed)


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
    """Everything Fit reads that placements change: usage numbers, MIG placements, ``custom_info``,
    the pods on a device (``pod_infos``).

    Computed only for fresh templates and on memo misses, so canonicalising ``custom_info`` is cheap;
    a dict shared by several devices (MetaX GPU topology tables) is canonicalised once per call (the
    list keeps it alive, so its ``id`` is stable here); devices without it keep the plain tuple.
    """
    keys: dict[int, bytes] = {}
    out: list[tuple] = []
    for d in devices:
        info = d.custom_info
        if info:
            key = keys.get(id(info))
            if key is None:
                key = keys[id(info)] = _info_key(info)
            entry: tuple = (d.used, d.usedmem, d.usedcores, tuple(d.mig_in_use) if d.mig_in_use else (), key)
        elif d.mig_in_use:
            entry = (d.used, d.usedmem, d.usedcores, tuple(d.mig_in_use))
        else:
            entry = (d.used, d.usedmem, d.usedcores)
        if d.pod_infos:  # the app classes of the pods on a MetaX sGPU card decide its Fit
            entry = (*entry, tuple(tuple(sorted(i.items())) for i in d.pod_infos))
        out.append(entry)
    return tuple(out)


class _Fitter:
    """Fits one pod shape on nodes of one group: kube-scheduler's filters, then HAMi's device fit
    memoised by device-usage signature (the only part that depends on the devices)."""

    __slots__ = ("sim", "ctx", "demand", "devices", "memo", "terms", "index", "pod")

    def __init__(self, sim: Simulator, eq: _Equivalence, index: TopologyIndex | None) -> None:
        self.sim = sim
        self.pod = eq.pod
        self.ctx = eq.ctx
        self.demand = eq.demand
        self.devices = eq.ctx.pod.requests.has_requests
        self.memo: dict[tuple, tuple[str, list[DeviceUsage] | None, tuple]] = {}
        self.terms = eq.terms
        self.index = index

    def check(self, node: _Node) -> tuple[str, list[DeviceUsage] | None, tuple]:
        """("" or the reason, devices after placing, their signature)."""
        terms = self.terms
        if terms.ports and node.ports and ports_conflict(terms.ports, node.ports):
            return PORTS_CONFLICT, None, node.sig
        reason = insufficient(self.demand, node.free)
        if reason:
            return reason, None, node.sig
        if self.index is not None:
            reason = self.index.problem(terms, node.topo)
            if reason:
                return reason, None, node.sig
        if not self.devices:
            return "", node.state.devices, node.sig
        cached = self.memo.get(node.sig)
        if cached is None:
            cached = self._evaluate(node)
            self.memo[node.sig] = cached
        return cached

    def _evaluate(self, node: _Node) -> tuple[str, list[DeviceUsage] | None, tuple]:
        verdict = self.sim.evaluate(self.ctx, node.name, node.state)
        if verdict.fits and verdict.fit is not None and verdict.fit.usage_after is not None:
            after = list(verdict.fit.usage_after)
            return "", after, _signature(after)
        return verdict.reason or "pod does not fit", None, node.sig

    def place(self, node: _Node, pid: str, devices: list[DeviceUsage] | None, sig: tuple) -> None:
        node.free.take(self.demand)
        node.pods.append(pid)
        if self.terms.ports:
            node.ports = set(node.ports or ()) | self.terms.ports
        if self.index is not None:
            self.index.add_pod(node.topo, self.terms)
        if devices is not None and devices is not node.state.devices:
            node.state = NodeState(node.name, devices, node.state.pair_scores, node.state.cordoned)
            node.sig = sig


class _Shape:
    """Pods that fit identically (same parsed request, policies and resource demand).

    They share one fit memo and one sorted list of candidate node indices: a node that rejected the
    shape leaves the list until a placement changes that node, so the round-robin scan does not walk
    over full nodes again and again. ``seen`` = how many of the group's nodes the list covers.
    """

    __slots__ = ("fitter", "cands", "seen", "dynamic")

    def __init__(self, fitter: _Fitter) -> None:
        self.fitter = fitter
        self.cands: list[int] = []
        self.seen = 0
        # pod affinity and topology spread: a node may start to fit after a placement elsewhere, so
        # no node leaves the candidate list
        self.dynamic = fitter.index is not None and fitter.terms.dynamic


def _device_memory(eq: _Equivalence, devmem: int) -> int:
    total = 0
    for requests in eq.ctx.pod.requests.containers:
        for req in requests.values():
            mem = req.memreq if req.memreq > 0 else devmem * req.mem_percentage_req // 100
            total += req.nums * mem
    return total


def _template_name(group: GroupTemplate) -> str:
    meta = group.template.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) and name else template_node_name(group.name, None)


class _Template:
    """What every new node of a group starts as: the template's name, resources and devices."""

    __slots__ = (
        "group",
        "name",
        "node",
        "allocatable",
        "inventory",
        "devices",
        "sig",
        "limit",
        "fresh",
        "daemons",
        "daemon_terms",
        "ports",
    )

    def __init__(self, sim: Simulator, group: GroupTemplate, limit: int | None) -> None:
        self.group = group.name
        self.name = _template_name(group)
        self.node = group.template
        self.allocatable = node_allocatable(group.template)
        self.inventory: Inventory = sim.inventory(group.template)
        self.devices: list[DeviceUsage] = (
            self.inventory.state(self.name).devices if not self.inventory.error else []
        )
        self.sig = _signature(self.devices)
        self.limit = limit
        self.daemons: list[str] = []
        self.daemon_terms: list[PodTerms] = []
        self.ports: set | None = None  # the DaemonSet pods' host ports on every new node
        self.fresh = self._fresh(group, sim.managed_resources())

    def _fresh(self, group: GroupTemplate, ignored: frozenset[str]) -> Resources:
        """A new node's free resources after the DaemonSet pods CA places on it (the ones whose
        selectors, affinity and tolerations let them run there and that fit)."""
        free = self.allocatable.copy()
        for pod in group.daemon_pods:
            if static_mismatch(pod, self.node):
                continue
            demand = pod_demand(pod, ignored)
            if insufficient(demand, free):
                continue
            free.take(demand)
            self.daemons.append(pod_id(pod))
            terms = pod_terms(pod)
            self.daemon_terms.append(terms)
            if terms.ports:
                self.ports = (self.ports or set()) | terms.ports
        return free

    def new_node(self, index: int, name: str = "") -> _Node:
        name = name or estimated_node_name(self.name, index)
        state = NodeState(name, self.devices, self.inventory.pair_scores, self.inventory.cordoned)
        return _Node(name, state, self.sig, self.fresh.copy(), set(self.ports) if self.ports else None)

    def node_object(self, name: str) -> tuple[Mapping, Mapping[str, str]]:
        """A new node as the topology filters see it: CA's sanitised copy has the template's labels
        with ``kubernetes.io/hostname`` set to the new node's name."""
        meta = self.node.get("metadata")
        labels = meta.get("labels") if isinstance(meta, Mapping) else None
        labels = {**(labels if isinstance(labels, Mapping) else {}), HOSTNAME_LABEL: name}
        return {"metadata": {"name": name, "labels": labels}, "spec": self.node.get("spec") or {}}, labels

    def order(self, equivalences: list[_Equivalence], pod_requests: bool = True) -> list[_Equivalence]:
        """CA's order: share of the template (cpu + memory), then device memory, both descending.

        The share is of the pod's full request (init containers, sidecars, overhead) from CA 1.33 on,
        of the app containers' requests only before (``pod_requests=False``)."""
        alloc = self.allocatable
        devmem = self.devices[0].totalmem if self.devices else 0

        def share(eq: _Equivalence) -> float:
            demand = eq.demand if pod_requests else eq.containers
            cpu = demand.cpu / alloc.cpu if alloc.cpu else 0.0
            mem = demand.memory / alloc.memory if alloc.memory else 0.0
            return cpu + mem

        return sorted(equivalences, key=lambda eq: (-share(eq), -_device_memory(eq, devmem), eq.order))


_UNSCHEDULABLE_NODE = {"spec": {"taints": [UNSCHEDULABLE_TAINT]}}


def _hostname_spread(pod: Mapping) -> bool:
    """CA's ``isPodUsingHostNameTopologyKey``: any topology spread constraint (whenUnsatisfiable of
    either kind) keyed on ``kubernetes.io/hostname``."""
    spec = pod.get("spec")
    constraints = spec.get("topologySpreadConstraints") if isinstance(spec, Mapping) else None
    if not isinstance(constraints, list):
        return False
    return any(isinstance(c, Mapping) and c.get("topologyKey") == HOSTNAME_LABEL for c in constraints)


def _cordoned(pod: Mapping, node: Mapping) -> str:
    """kube-scheduler's NodeUnschedulable: a ``spec.unschedulable`` template holds only pods that
    tolerate ``node.kubernetes.io/unschedulable:NoSchedule``."""
    spec = node.get("spec")
    if not (isinstance(spec, Mapping) and spec.get("unschedulable") is True):
        return ""
    return "node(s) were unschedulable" if untolerated_taint(pod, _UNSCHEDULABLE_NODE) else ""


class _GroupPacker:
    """CA's binpacking estimator for one node group, one equivalence group at a time.

    State carried from one equivalence group to the next: the nodes added so far, the last added one,
    the round-robin position (CA's predicate checker resumes after the node it matched last), each
    pod shape's candidate list, and which shapes dropped which node from their list.
    """

    __slots__ = (
        "sim",
        "template",
        "option",
        "nodes",
        "last",
        "rr",
        "shapes",
        "rejecters",
        "static",
        "deadline",
        "clock",
        "index",
        "hostname_retry",
        "cluster",
        "existing",
    )

    def __init__(
        self,
        sim: Simulator,
        template: _Template,
        limits: ScaleUpLimits,
        index: TopologyIndex | None = None,
        hostname_retry: bool = True,
        cluster: Sequence[_SnapshotNode] = (),
    ) -> None:
        self.sim = sim
        self.cluster = cluster  # the snapshot's other nodes, at the same positions in ``index``
        self.existing: list[tuple[_Node, Mapping]] | None = None  # retry targets, built on first use
        self.hostname_retry = hostname_retry  # CA >= 1.33.1 (ca_releases.CARelease.hostname_retry)
        self.template = template
        self.index = index  # the snapshot for affinity and spread (None: no pod needs it)
        self.option = GroupOption(template.group)
        self.nodes: list[_Node] = []
        self.last: _Node | None = None
        self.rr = 0
        self.shapes: dict[tuple, _Shape] = {}
        self.rejecters: dict[int, list[_Shape]] = {}  # node index -> shapes that dropped it
        self.static: dict[bytes, str] = {}  # spec key -> static_mismatch reason
        # CA's limiter asks the clock before each new node: no node after the group's budget
        self.clock = limits.clock
        self.deadline = limits.clock() + limits.group_budget if limits.group_budget > 0 else None

    def pack(self, eq: _Equivalence) -> None:
        """Place the group's pods: on the nodes so far (step 1), then on the last or new nodes (2)."""
        ids = eq.ids
        reason = self._unschedulable(eq)
        if reason:
            for pid in ids:
                self.option.unschedulable[pid] = reason
            return
        shape = self._shape(eq)
        placed = self._fill_existing(shape, ids)
        retry = self.hostname_retry and self.index is not None and _hostname_spread(eq.pod)
        stop_reason = ""
        while placed < len(ids):
            stop_reason = self._place_on_last_or_new(shape, ids[placed], retry)
            if stop_reason:
                break
            placed += 1
        for pid in ids[placed:]:
            self.option.unschedulable[pid] = stop_reason
        self.option.scheduled.extend(ids[:placed])
        self.option.requested_cpu += placed * eq.containers.cpu
        self.option.requested_memory += placed * eq.containers.memory

    def _unschedulable(self, eq: _Equivalence) -> str:
        """Why no node of the group can ever hold the pod (selectors, taints; no devices), or ""."""
        reason = self.static.get(eq.spec_key)
        if reason is None:
            reason = self.static[eq.spec_key] = static_mismatch(eq.pod, self.template.node) or _cordoned(
                eq.pod, self.template.node
            )
        inventory = self.template.inventory
        if not reason and inventory.error and eq.ctx.pod.requests.has_requests:
            reason = inventory.error
        return reason

    def _shape(self, eq: _Equivalence) -> _Shape:
        d = eq.demand
        key: tuple = (eq.ctx.key, d.cpu, d.memory, d.ephemeral, d.pods)
        if self.index is not None or eq.terms.ports or d.scalars:
            key += (eq.spec_key,)  # labels, ports, terms and scalars are the equivalence group's own
        shape = self.shapes.get(key)
        if shape is None:
            shape = self.shapes[key] = _Shape(_Fitter(self.sim, eq, self.index))
        return shape

    def _new_node(self) -> _Node:
        """Add a node to the snapshot (CA's ``addNewNodeToSnapshot``), with its DaemonSet pods."""
        node = self.last = self.template.new_node(len(self.nodes))
        self.nodes.append(node)
        if self.index is not None:
            obj, labels = self.template.node_object(node.name)
            node.topo = self.index.add_node(obj, labels)
            for terms in self.template.daemon_terms:
                self.index.add_pod(node.topo, terms)
        return node

    def _fill_existing(self, shape: _Shape, ids: list[str]) -> int:
        """Step 1: the nodes added so far, round-robin from the node after the last match, until a
        pod fits none. Returns how many of ``ids`` were placed."""
        i = 0
        while i < len(ids) and self.nodes:
            found = self._find(shape, self.rr)
            if found is None:
                break
            idx, (_, devices, sig) = found
            self._place(shape.fitter, idx, ids[i], devices, sig)
            self.rr = (idx + 1) % len(self.nodes)
            i += 1
        return i

    def _place_on_last_or_new(self, shape: _Shape, pid: str, retry: bool = False) -> str:
        """Step 2 for one pod: the last added node, else (``retry``: when the last node failed it on
        topology spread) the other new nodes, else a new node. "" when placed, else why the
        equivalence group stops (an empty node cannot hold the pod, or the node limit)."""
        fitter = shape.fitter
        last = self.last
        if last is not None:
            why, devices, sig = fitter.check(last)
            if not why:
                self._place(fitter, len(self.nodes) - 1, pid, devices, sig)
                return ""
            if retry and why == SPREAD_MISMATCH and self._retry_others(shape, pid):
                return ""
            if not last.pods:
                return why
        template = self.template
        if template.limit is not None and len(self.nodes) >= template.limit:
            return f"node limit reached: at most {template.limit} new node(s) for node group {template.group}"
        if self.deadline is not None and self.clock() > self.deadline:
            self.option.timed_out = True
            return f"max-nodegroup-binpacking-duration exceeded for node group {template.group}"
        last = self._new_node()
        why, devices, sig = fitter.check(last)
        if why:
            return why
        self._place(fitter, len(self.nodes) - 1, pid, devices, sig)
        return ""

    def _place(
        self, fitter: _Fitter, idx: int, pid: str, devices: list[DeviceUsage] | None, sig: tuple
    ) -> None:
        fitter.place(self.nodes[idx], pid, devices, sig)
        # the node changed: shapes that gave up on it must look at it again
        for shape in self.rejecters.pop(idx, ()):
            insort(shape.cands, idx)

    def _retry_others(self, shape: _Shape, pid: str) -> bool:
        """CA's hostname-topology retry (``binpacking_estimator.go``, CA 1.33.1+): the pod failed
        the last new node on a spread constraint, so before adding a node try every other new node,
        round-robin from the position the scans share; a hostname spread's minimum may have risen
        since those nodes were last tried."""
        nodes = self.nodes
        count = len(nodes)
        last = count - 1
        for step in range(count):
            idx = (self.rr + step) % count
            if idx == last:
                continue
            why, devices, sig = shape.fitter.check(nodes[idx])
            if not why:
                self._place(shape.fitter, idx, pid, devices, sig)
                self.rr = (idx + 1) % count
                return True
        return self._retry_existing(shape, pid)

    def _retry_existing(self, shape: _Shape, pid: str) -> bool:
        """The retry's other half: CA's filter skips only the last new node, so the snapshot's
        existing nodes are tried too (after the new ones here; CA's order is its snapshot's). A pod
        that asks for HAMi devices never fits one: their devices are not modelled here."""
        fitter = shape.fitter
        if fitter.devices:
            return False
        if self.existing is None:
            self.existing = self._existing_nodes()
        for node, raw in self.existing:
            if static_mismatch(fitter.pod, raw) or _cordoned(fitter.pod, raw):
                continue
            why, devices, sig = fitter.check(node)
            if not why:
                fitter.place(node, pid, devices, sig)
                self.option.on_existing.setdefault(node.name, []).append(pid)
                return True
        return False

    def _existing_nodes(self) -> list[tuple[_Node, Mapping]]:
        """The snapshot's existing nodes as binpacking targets: allocatable less their pods."""
        out = []
        ignored = self.sim.managed_resources()
        for idx, entry in enumerate(self.cluster):
            if entry.raw_pods is None:
                continue
            free = node_allocatable(entry.node)
            ports: set = set()
            for pod in entry.raw_pods:
                free.take(pod_demand(pod, ignored))
                ports |= pod_terms(pod).ports
            meta = entry.node.get("metadata")
            name = str(meta.get("name") if isinstance(meta, Mapping) else "") or f"cluster-node-{idx}"
            node = _Node(name, NodeState(name, []), (), free, ports or None)
            node.topo = idx
            out.append((node, entry.node))
        return out

    def _find(
        self, shape: _Shape, start: int
    ) -> tuple[int, tuple[str, list[DeviceUsage] | None, tuple]] | None:
        """CA's FitsAnyNodeMatching: the first fitting node at or after ``start``, wrapping around."""
        nodes = self.nodes
        if shape.dynamic:
            return self._scan(shape, start)
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
            self.rejecters.setdefault(idx, []).append(shape)
            start = idx
        return None

    def _scan(
        self, shape: _Shape, start: int
    ) -> tuple[int, tuple[str, list[DeviceUsage] | None, tuple]] | None:
        """``_find`` for shapes whose fit depends on other nodes: every node, every time."""
        nodes = self.nodes
        count = len(nodes)
        for step in range(count):
            idx = (start + step) % count
            result = shape.fitter.check(nodes[idx])
            if not result[0]:
                return idx, result
        return None


def _summarise(option: GroupOption, nodes: list[_Node], template: _Template) -> None:
    """The used nodes with their pods and devices, and the group's waste (least-waste's score)."""
    allocatable = template.allocatable
    used = [node for node in nodes if node.pods]
    option.node_count = len(used) + len(option.on_existing)
    gpu_total = gpu_used = core_total = core_used = 0
    for node in used:
        requested = Resources(
            allocatable.cpu - node.free.cpu,
            allocatable.memory - node.free.memory,
            allocatable.ephemeral - node.free.ephemeral,
            allocatable.pods - node.free.pods,
        )
        for dev in node.state.devices:
            gpu_total += dev.totalmem
            gpu_used += dev.usedmem
            core_total += dev.totalcore
            core_used += dev.usedcores
        option.nodes.append(EstimatedNode(node.name, node.pods, node.state.devices, requested))
    if used:
        capacity = node_capacity(template.node)
        cpu_total = capacity.cpu * option.node_count  # CA: the option's node count x the template
        mem_total = capacity.memory * option.node_count
        option.waste = Waste(
            _unused(cpu_total, option.requested_cpu),
            _unused(mem_total, option.requested_memory),
            _unused(gpu_total, gpu_used),
            _unused(core_total, core_used),
        )


def _unused(total: int, used: int) -> float:
    """CA's waste share; not clamped at 0 (CA's least-waste is not either)."""
    return (total - used) / total if total else 0.0


def _estimate_group(
    sim: Simulator,
    group: GroupTemplate,
    equivalences: list[_Equivalence],
    limits: ScaleUpLimits,
    similar: Sequence[GroupSize],
    deadline: float = float("inf"),
    cluster: Sequence[_SnapshotNode] = (),
    ca: CARelease | None = None,
) -> GroupOption:
    ca = ca or ca_release(DEFAULT_VERSION)
    template = _Template(sim, group, None)
    option = GroupOption(group.name)
    skipped = skip_reason(group.size, group.template, len(template.devices), limits)
    raw = node_limit(group.size, similar, limits) if not skipped else -1
    limit = None if raw == 0 else max(raw, 0)
    if group.max_new_nodes is not None:
        limit = group.max_new_nodes if limit is None else min(limit, group.max_new_nodes)
    template.limit = limit
    if skipped:
        option.skipped = skipped
        for eq in equivalences:
            for pid in eq.ids:
                option.unschedulable[pid] = skipped
        return option
    index = _topology_index(equivalences, template.daemon_terms, cluster)
    packer = _GroupPacker(sim, template, limits, index, ca.hostname_retry, cluster)
    packer.option.node_limit = limit
    packer.option.daemon_pods = template.daemons
    for eq in template.order(equivalences, ca.order_by_pod_requests):
        if time.monotonic() > deadline:
            raise EstimateError(
                f"the estimate ran past its time limit of {TIME_LIMIT_SECONDS:g} s (at node group "
                f"{group.name!r}); ask for fewer pods or node groups per request"
            )
        packer.pack(eq)
    _summarise(packer.option, packer.nodes, template)
    return packer.option


@dataclass(slots=True, frozen=True)
class ClusterNode:
    """A node already in CA's snapshot (an existing or upcoming node) with the pods on it: seen by the
    affinity and topology-spread filters (its labels, its pods), never a binpacking target."""

    node: Mapping
    pods: tuple[Mapping, ...] = ()


@dataclass(slots=True, frozen=True)
class _SnapshotNode:
    node: Mapping
    labels: Mapping[str, str]
    pods: tuple[PodTerms, ...]
    raw_pods: tuple[Mapping, ...] | None = None  # an existing node's pods (None: an upcoming node)


def _snapshot(cluster: Sequence[ClusterNode]) -> list[_SnapshotNode]:
    out = []
    for i, entry in enumerate(cluster):
        problem = node_problem(entry.node)
        if problem:
            raise EstimateError(f"cluster node {i}: {problem}")
        meta = entry.node.get("metadata")
        labels = meta.get("labels") if isinstance(meta, Mapping) else None
        out.append(
            _SnapshotNode(
                entry.node,
                labels or {},
                tuple(pod_terms(p) for p in entry.pods if isinstance(p, Mapping)),
                tuple(p for p in entry.pods if isinstance(p, Mapping)),
            )
        )
    return out


def _topology_index(
    equivalences: list[_Equivalence], daemon_terms: Sequence[PodTerms], cluster: Sequence[_SnapshotNode]
) -> TopologyIndex | None:
    """The snapshot the affinity and spread filters count in, or None when no pod has such a term
    (pending, DaemonSet or already in the snapshot): then the filters cannot fail and cost nothing."""
    others = [*daemon_terms, *(p for c in cluster for p in c.pods)]
    if not any(p.anti for p in others) and not any(eq.terms.constrained for eq in equivalences):
        return None
    index = TopologyIndex()
    for entry in cluster:
        idx = index.add_node(entry.node, entry.labels)
        for terms in entry.pods:
            index.add_pod(idx, terms)
    return index


# -- upcoming nodes ------------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class UpcomingNodes:
    """``count`` nodes a group is already adding (CA's upcoming nodes; its target size counts them)."""

    node_group: str
    count: int


@dataclass(slots=True)
class UpcomingNode:
    """An upcoming node as CA's snapshot holds it (template copy, DaemonSet pods) and the pending pods
    it absorbed before the estimate."""

    name: str
    node_group: str
    pods: list[str]
    devices: list[DeviceUsage]


@dataclass(slots=True)
class _Upcoming:
    nodes: list[tuple[_Node, _Template]] = field(default_factory=list)
    placed: dict[str, str] = field(default_factory=dict)  # pod id -> upcoming node name
    rr: int = 0  # CA's round-robin position over the snapshot's nodes


def _upcoming_nodes(
    sim: Simulator, groups: Sequence[GroupTemplate], upcoming: Sequence[UpcomingNodes]
) -> _Upcoming:
    by_name = {g.name: g for g in groups}
    state = _Upcoming()
    for entry in upcoming:
        group = by_name.get(entry.node_group)
        if group is None:
            raise EstimateError(
                f"upcoming nodes of {entry.node_group!r}: not one of the requested node groups"
            )
        template = _Template(sim, group, None)
        for i in range(entry.count):
            state.nodes.append((template.new_node(i, f"{template.name}-upcoming-{i}"), template))
    return state


def _absorb_upcoming(
    sim: Simulator,
    equivalences: list[_Equivalence],
    groups: Sequence[GroupTemplate],
    upcoming: Sequence[UpcomingNodes],
    cluster: Sequence[_SnapshotNode],
) -> tuple[_Upcoming, list[_Equivalence], list[_SnapshotNode]]:
    """CA's FilterOutSchedulable over the upcoming nodes: the pending pods, most important (highest
    ``spec.priority``) first, each on the first node that passes every filter and HAMi's Fit,
    round-robin from the node after the last match. Returns the placements, the equivalence groups
    left for the estimate and the upcoming nodes as snapshot nodes (with their pods) for it."""
    state = _upcoming_nodes(sim, groups, upcoming)
    templates = {id(t): t for _, t in state.nodes}
    daemon_terms = [terms for t in templates.values() for terms in t.daemon_terms]
    index = _topology_index(equivalences, daemon_terms, cluster)
    terms_on: list[list[PodTerms]] = []
    objects = []
    for node, template in state.nodes:
        obj, labels = template.node_object(node.name)
        objects.append((obj, labels))
        if index is not None:
            node.topo = index.add_node(obj, labels)
            for terms in template.daemon_terms:
                index.add_pod(node.topo, terms)
        terms_on.append(list(template.daemon_terms))
    left: list[_Equivalence] = []
    for eq in sorted(equivalences, key=lambda eq: (-_priority_of(eq.pod), eq.order)):
        rest = _absorb_group(sim, state, eq, index, terms_on)
        if rest:
            left.append(eq if len(rest) == len(eq.ids) else replace(eq, ids=rest))
    left.sort(key=lambda eq: eq.order)
    snapshot = [
        _SnapshotNode(obj, labels, tuple(terms))
        for (obj, labels), terms in zip(objects, terms_on, strict=True)
    ]
    return state, left, snapshot


def _priority_of(pod: Mapping) -> int:
    spec = pod.get("spec")
    value = spec.get("priority") if isinstance(spec, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _absorb_group(
    sim: Simulator,
    state: _Upcoming,
    eq: _Equivalence,
    index: TopologyIndex | None,
    terms_on: list[list[PodTerms]],
) -> list[str]:
    """Place ``eq``'s pods on the upcoming nodes; returns the ids left pending. Once a pod fits no
    node, its identical successors fit none either (nodes only fill up), unless its fit depends on
    other nodes (affinity, spread)."""
    fitters: dict[int, _Fitter | None] = {}
    nodes = state.nodes
    for pid in eq.ids:
        found = _first_upcoming(sim, state, eq, index, fitters)
        if found is None:
            if eq.terms.dynamic and index is not None:
                continue
            break
        idx, fitter, (_, devices, sig) = found
        fitter.place(nodes[idx][0], pid, devices, sig)
        terms_on[idx].append(eq.terms)
        state.placed[pid] = nodes[idx][0].name
        state.rr = (idx + 1) % len(nodes)
    return [pid for pid in eq.ids if pid not in state.placed]


def _first_upcoming(
    sim: Simulator,
    state: _Upcoming,
    eq: _Equivalence,
    index: TopologyIndex | None,
    fitters: dict[int, _Fitter | None],
) -> tuple[int, _Fitter, tuple[str, list[DeviceUsage] | None, tuple]] | None:
    """CA's SchedulePodOnAnyNodeMatching over the upcoming nodes, from the round-robin position."""
    nodes = state.nodes
    for step in range(len(nodes)):
        idx = (state.rr + step) % len(nodes)
        node, template = nodes[idx]
        fitter = _upcoming_fitter(sim, eq, template, index, fitters)
        if fitter is None:
            continue
        result = fitter.check(node)
        if not result[0]:
            return idx, fitter, result
    return None


def _upcoming_fitter(
    sim: Simulator,
    eq: _Equivalence,
    template: _Template,
    index: TopologyIndex | None,
    fitters: dict[int, _Fitter | None],
) -> _Fitter | None:
    """The group's fitter for one upcoming template (its own device memo), None where the template
    can never hold the pod (selectors, taints, unschedulable, no devices for a device pod)."""
    key = id(template)
    if key not in fitters:
        static = static_mismatch(eq.pod, template.node) or _cordoned(eq.pod, template.node)
        if not static and template.inventory.error and eq.ctx.pod.requests.has_requests:
            static = template.inventory.error
        fitters[key] = None if static else _Fitter(sim, eq, index)
    return fitters[key]


def _upcoming_result(state: _Upcoming) -> list[UpcomingNode]:
    return [
        UpcomingNode(node.name, template.group, node.pods, node.state.devices)
        for node, template in state.nodes
    ]


# -- expanders -----------------------------------------------------------------------------------------


def _best(options: list[GroupOption], key: Callable[[GroupOption], float]) -> list[GroupOption]:
    values = [key(o) for o in options]
    top = max(values)
    return [o for o, v in zip(options, values, strict=True) if v == top]


def _ca_waste(option: GroupOption) -> float:
    """CA's least-waste score: unused cpu share + unused memory share (app containers' requests)."""
    return option.waste.cpu + option.waste.memory


def _priority(option: GroupOption, expander: Expander) -> int | None:
    """The highest priority matching the group, counting only priorities >= -1 (CA's priority
    expander starts from -1, so a group matched only below -1 is treated as not matched)."""
    matched = [p for p, rx in expander.priorities if p >= -1 and rx.search(option.node_group)]
    return max(matched) if matched else None


def _by_priority(options: list[GroupOption], expander: Expander) -> list[GroupOption]:
    ranked = [(o, _priority(o, expander)) for o in options]
    found = [prio for _, prio in ranked if isinstance(prio, int)]
    if not found:
        return options  # CA: no priorities info for any option, nothing filtered
    top = max(found)
    return [o for o, prio in ranked if prio == top]


def expander_filter(
    name: str, options: list[GroupOption], expander: Expander, rng: random.Random | None = None
) -> list[GroupOption]:
    """One of CA's expander filters: the options it keeps (ties included)."""
    if name == "least-waste":
        return _best(options, lambda o: -_ca_waste(o))
    if name == "least-waste-gpu":
        return _best(options, lambda o: -o.waste.score)
    if name == "most-pods":
        return _best(options, lambda o: len(o.scheduled))
    if name == "least-nodes":
        return _best(options, lambda o: -o.node_count)
    if name == "random":
        return [_pick(options, rng)]
    if name == "grpc":
        return keep_options(options, expander.grpc_mode)
    return _by_priority(options, expander)


def _pick(options: list[GroupOption], rng: random.Random | None) -> GroupOption:
    """CA picks at random; we answer the first (request order) unless a seed is given."""
    return options[rng.randrange(len(options))] if rng is not None else options[0]


def _describe(option: GroupOption) -> str:
    total = len(option.scheduled) + len(option.unschedulable)
    w = option.waste
    return (
        f"{option.node_group!r}: {option.node_count} new node(s) for {len(option.scheduled)}/{total} pod(s), "
        f"waste cpu {w.cpu:.3f}, memory {w.memory:.3f}, gpuMemory {w.gpu_memory:.3f}, "
        f"gpuCores {w.gpu_cores:.3f} (score {w.score:.3f})"
    )


def _why_not(option: GroupOption) -> str:
    if option.skipped:
        return f"{option.node_group!r}: skipped ({option.skipped})"
    reasons = Counter(option.unschedulable.values())
    if not reasons:
        return f"{option.node_group!r}: no pods to place"
    reason, count = reasons.most_common(1)[0]
    return f"{option.node_group!r}: no pod fits ({count} pod(s): {reason})"


def choose(options: list[GroupOption], expander: Expander) -> tuple[GroupOption | None, list[str], str]:
    """CA's chain strategy: each filter narrows the options; one left wins, else random picks among
    the rest. Returns (chosen, the candidates random picked from, the explanation)."""
    viable = [o for o in options if o.scheduled and o.node_count > 0]
    rejected = [o for o in options if not (o.scheduled and o.node_count > 0)]
    if not viable:
        detail = "; ".join(_why_not(o) for o in rejected) or "no node groups given"
        return None, [], f"No node group can schedule any pending pod. {detail}."
    rng = random.Random(expander.seed) if expander.seed is not None else None
    remaining = viable
    steps: list[str] = []
    candidates: list[str] = []
    for name in expander.names:
        before = remaining
        remaining = expander_filter(name, remaining, expander, rng)
        steps.append(f"{name} kept {len(remaining)} of {len(before)}")
        if not remaining:  # an empty answer from the grpc expander: CA does not scale up this loop
            return None, [], f"Expander {','.join(expander.names)} kept no option: " + "; ".join(steps) + "."
        if name == "random":
            candidates = [o.node_group for o in before]
        if len(remaining) == 1:
            break
    if len(remaining) > 1:  # CA's fallback strategy: random among the rest
        candidates = [o.node_group for o in remaining]
        remaining = [_pick(remaining, rng)]
    chosen = remaining[0]
    return chosen, candidates, _explain(chosen, viable, rejected, expander, steps, candidates)


def _explain(
    chosen: GroupOption,
    viable: list[GroupOption],
    rejected: list[GroupOption],
    expander: Expander,
    steps: list[str],
    candidates: list[str],
) -> str:
    parts = [f"Expander {','.join(expander.names)} chose {_describe(chosen)}."]
    if len(viable) == 1:
        parts.append("It was the only node group that could schedule any pod.")
    else:
        parts.append("Steps: " + "; ".join(steps) + ".")
        if len(candidates) > 1:
            how = f"seeded pick (randomSeed {expander.seed})" if expander.seed is not None else "the first"
            parts.append(
                f"CA picks at random among {', '.join(repr(c) for c in candidates)}; this answer takes {how}."
            )
        others = [_describe(o) for o in viable if o is not chosen]
        parts.append("Other options: " + "; ".join(others) + ".")
    if rejected:
        parts.append("Not options: " + "; ".join(_why_not(o) for o in rejected) + ".")
    unsched = len(chosen.unschedulable)
    if unsched:
        parts.append(f"{unsched} pod(s) stay pending even with this scale-up.")
    return " ".join(parts)


# -- entry point ---------------------------------------------------------------------------------------


def estimate(
    sim: Simulator,
    pods: Sequence[PendingPods],
    groups: Sequence[GroupTemplate],
    expander: Expander | None = None,
    max_nodes_per_scale_up: int = DEFAULT_MAX_NODES_PER_SCALE_UP,
    max_work: int = MAX_WORK,
    time_limit: float = TIME_LIMIT_SECONDS,
    limits: ScaleUpLimits | None = None,
    cluster: Sequence[ClusterNode] = (),
    upcoming: Sequence[UpcomingNodes] = (),
    ca: CARelease | None = None,
) -> EstimateResult:
    """Bin-pack ``pods`` onto new nodes of each group; one option per group (input order) + choice,
    and the scale-up CA would ask for after its limits and balancing (``scale_up``).

    ``limits`` carries CA's flags; without it ``max_nodes_per_scale_up`` is the only one (0 = none).
    Raises ``EstimateError`` for unusable input (malformed pod, bad weights, duplicate ids), for more
    than ``max_work`` pod x group placements, and when packing runs past ``time_limit`` seconds.
    ``ca``: the CA release whose binpacking to follow (default: the newest supported).
    """
    ca = ca or ca_release(DEFAULT_VERSION)
    expander = expander or Expander()
    limits = limits or ScaleUpLimits(max_nodes_per_scale_up=max_nodes_per_scale_up)
    started = limits.clock()
    equivalences = _parse_groups(sim, _group_pods(pods))
    snapshot = _snapshot(cluster)
    _check_groups(groups)
    groups = [_sanitized(g) for g in groups]
    upcoming_nodes = sum(u.count for u in upcoming)
    work = sum(len(eq.ids) for eq in equivalences) * (len(groups) + upcoming_nodes)
    if work > max_work:
        raise EstimateError(
            f"{work} pod placements to simulate ({len(groups)} node groups + {upcoming_nodes} upcoming nodes "
            f"x pods) exceed the work budget of {max_work}; ask for fewer pods or node groups per request"
        )
    absorbed = None
    if upcoming:
        absorbed, equivalences, extra = _absorb_upcoming(sim, equivalences, groups, upcoming, snapshot)
        snapshot = [*snapshot, *extra]
        groups, limits = _count_upcoming(sim, groups, limits, upcoming)
    deadline = time.monotonic() + time_limit
    options = []
    for group in groups:
        similar = _similar(group, groups, limits)
        try:
            options.append(
                _estimate_group(
                    sim, group, equivalences, limits, [g.size for g in similar], deadline, snapshot, ca
                )
            )
        except PodError as exc:  # a template with unparseable status quantities
            raise EstimateError(f"node group {group.name!r}: {exc}") from None
    seconds = limits.clock() - started
    chosen, candidates, explanation = choose(options, expander)
    plan = _plan(chosen, options, groups, limits, sim) if chosen is not None else None
    if plan is not None and plan.capped_by:
        explanation += f" CA caps the scale-up at {plan.node_count} node(s) ({', '.join(plan.capped_by)})."
    result = EstimateResult(options, chosen.node_group if chosen else None, explanation, candidates, plan)
    result.binpacking_seconds = seconds
    result.ca_version = ca.version
    if absorbed is not None:
        result.upcoming = _upcoming_result(absorbed)
        result.upcoming_scheduled = list(absorbed.placed)
    result.binpacking_time_exceeded = limits.total_budget > 0 and seconds > limits.total_budget
    return result


def _count_upcoming(
    sim: Simulator, groups: list[GroupTemplate], limits: ScaleUpLimits, upcoming: Sequence[UpcomingNodes]
) -> tuple[list[GroupTemplate], ScaleUpLimits]:
    """Upcoming nodes count as CA counts them: in their group's target size (so toward its max
    size), in the cluster's node count for ``maxNodesTotal``, and with their template's cores,
    memory and devices in the cluster's totals (CA sums target size x template)."""
    counts: Counter[str] = Counter()
    for entry in upcoming:
        counts[entry.node_group] += entry.count
    cores = memory = gpus = 0
    for group in groups:
        if counts[group.name]:
            capacity = node_capacity(group.template)
            cores += counts[group.name] * -(-capacity.cpu // 1000)
            memory += counts[group.name] * capacity.memory
            gpus += counts[group.name] * len(_Template(sim, group, None).devices)
    groups = [
        replace(g, current_size=g.current_size + counts[g.name]) if counts[g.name] else g for g in groups
    ]
    return groups, replace(
        limits,
        current_nodes=limits.current_nodes + sum(counts.values()),
        current_cores=limits.current_cores + cores,
        current_memory=limits.current_memory + memory,
        current_gpus=limits.current_gpus + gpus,
    )


def _sanitized(group: GroupTemplate) -> GroupTemplate:
    """The group with CA's sanitised template (CA's own and node-condition taints removed)."""
    node, removed = sanitize_template(group.template)
    if not removed:
        return group
    return GroupTemplate(
        group.name,
        node,
        group.max_new_nodes,
        group.max_size,
        group.current_size,
        group.daemon_pods,
    )


def _similar(
    group: GroupTemplate, groups: Sequence[GroupTemplate], limits: ScaleUpLimits
) -> list[GroupTemplate]:
    """The other requested groups CA's balancing would treat as the same (templates only)."""
    if not limits.balance_similar:
        return []
    return [
        g
        for g in groups
        if g is not group
        and (g.max_size is None or g.current_size < g.max_size)
        and similar_templates(group.template, g.template, limits.ignored_labels)
    ]


def _plan(
    chosen: GroupOption,
    options: list[GroupOption],
    groups: Sequence[GroupTemplate],
    limits: ScaleUpLimits,
    sim: Simulator,
) -> ScaleUpPlan:
    """CA's steps after the expander: cap by maxNodesTotal and the resource limits, then balance."""
    by_name = {g.name: g for g in groups}
    group = by_name[chosen.node_group]
    devices = _Template(sim, group, None).devices
    count, capped = cap_new_nodes(chosen.node_count, group.template, len(devices), limits)
    plan = ScaleUpPlan(chosen.node_group, chosen.node_count, count, capped)
    targets = [group]
    scheduled = set(chosen.scheduled)
    for other in _similar(group, groups, limits):
        option = next(o for o in options if o.node_group == other.name)
        if not option.skipped and set(option.scheduled) == scheduled:
            targets.append(other)
    sizes = [t.size if t.max_size is not None else _open_size(t, count) for t in targets]
    plan.groups = balance(sizes, count)
    total = sum(new - current for _, current, new in plan.groups)
    if total < count:
        plan.capped_by.append("node group max sizes")
        plan.node_count = total
    return plan


def _open_size(group: GroupTemplate, count: int) -> GroupSize:
    """A group without a known max size can take the whole count (or its maxNewNodes)."""
    room = count if group.max_new_nodes is None else group.max_new_nodes
    return GroupSize(group.name, group.current_size, group.current_size + room)


def _parse_groups(sim: Simulator, grouped: list[PodGroup]) -> list[_Equivalence]:
    """Each group's pod context and demand (equal keys parsed once); groups of no pods dropped."""
    parsed: dict[bytes, tuple[PodContext, Resources, Resources, PodTerms]] = {}
    out: list[_Equivalence] = []
    managed = sim.managed_resources()
    for group in grouped:
        try:
            cached = parsed.get(group.key)
            if cached is None:  # pods without a controller are separate groups but often identical
                cached = parsed[group.key] = (
                    sim.pod_context(group.pod),
                    pod_demand(group.pod, managed),
                    containers_demand(group.pod),
                    pod_terms(group.pod),
                )
        except PodError as exc:
            raise EstimateError(f"pod {group.ids[0] if group.ids else pod_id(group.pod)}: {exc}") from None
        except WeightsError as exc:
            meta = group.pod.get("metadata")
            name = meta.get("name", "") if isinstance(meta, Mapping) else ""
            raise EstimateError(f"calcScore failed {exc} for pod {name}") from None
        if group.ids:
            ctx, demand, containers, terms = cached
            out.append(
                _Equivalence(group.pod, group.ids, group.order, ctx, demand, containers, group.key, terms)
            )
    return out


def _check_groups(groups: Sequence[GroupTemplate]) -> None:
    names: set[str] = set()
    for group in groups:
        if group.name in names:
            raise EstimateError(f"node group {group.name!r} is listed twice")
        names.add(group.name)
        problem = node_problem(group.template)
        if problem:
            raise EstimateError(f"node group {group.name!r}: template {problem}")
