"""CA's scale-up limits around the binpacking estimate (``core/scaleup``, ``estimator`` thresholds).

The estimator answers how many nodes each group would need; CA then bounds that number in three
places, and this module is their one home:

- while binpacking (CA's threshold-based limiter): ``maxNodesPerScaleUp`` (0 = no limit), the
  group's ``max_size`` minus its current size (plus the similar groups' room when balancing), and
  ``maxNodesTotal`` minus the cluster's nodes; the smallest positive limit wins, and a limit that is
  used up (room <= 0) allows no node at all;
- before binpacking (``filterValidScaleUpNodeGroups``): a group at its max size, or whose one new
  node would exceed a cluster resource limit (cores, memory, GPUs), is no option;
- after the expander chose (``GetCappedNewNodeCount``, ``ApplyLimits``, balancing): the chosen
  count is capped by ``maxNodesTotal`` and the resource limits, then split over similar groups
  (balance-similar-node-groups) the way ``BalanceScaleUpBetweenGroups`` does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .quantity import QuantityError, parse_quantity
from .scheduler_filters import UNSCHEDULABLE_TAINT, node_allocatable, node_capacity

__all__ = [
    "DEFAULT_GROUP_BUDGET",
    "DEFAULT_TOTAL_BUDGET",
    "ScaleUpLimits",
    "GroupSize",
    "ScaleUpPlan",
    "min_limit",
    "node_limit",
    "limit_source",
    "skip_reason",
    "similar_templates",
    "balance",
    "cap_new_nodes",
    "sanitize_template",
    "daemon_set_pod",
    "UNSCHEDULABLE_TAINT",
]

# CA's own taints and the node-condition taints CA strips from a template (utils/taints SanitizeTaints)
CA_TAINTS = frozenset({"ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler"})
CONDITION_TAINTS = frozenset(
    {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/unschedulable",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/network-unavailable",
        "node.kubernetes.io/pid-pressure",
        "node.cloudprovider.kubernetes.io/uninitialized",
        "node.cloudprovider.kubernetes.io/shutdown",
        "cloud.google.com/impending-node-termination",
        "NodeWithImpairedVolumes",
    }
)
STRIPPED_PREFIXES = (
    "ignore-taint.cluster-autoscaler.kubernetes.io/",
    "startup-taint.cluster-autoscaler.kubernetes.io/",
    "status-taint.cluster-autoscaler.kubernetes.io/",
)

DEFAULT_GROUP_BUDGET = 10.0  # CA's --max-nodegroup-binpacking-duration
DEFAULT_TOTAL_BUDGET = 300.0  # CA's --max-binpacking-time

# CA's BasicIgnoredLabels: labels that differ between otherwise identical groups
BASIC_IGNORED_LABELS = frozenset(
    {
        "kubernetes.io/hostname",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "beta.kubernetes.io/fluentd-ds-ready",
        "kops.k8s.io/instancegroup",
    }
)
MAX_ALLOCATABLE_DIFFERENCE = 0.05  # CA's default --max-allocatable-difference-ratio
MAX_CAPACITY_MEMORY_DIFFERENCE = 0.015  # CA's default --max-capacity-memory-difference-ratio


@dataclass(slots=True, frozen=True)
class ScaleUpLimits:
    """CA's flags that bound a scale-up, and what the cluster holds today.

    ``None`` resource totals mean no limit; ``cores_total`` counts whole cores, ``memory_total``
    bytes, ``gpu_total`` physical devices (HAMi's inventory), compared against the cluster's
    ``current_*`` plus each new node's template capacity.
    """

    max_nodes_per_scale_up: int = 1000
    max_nodes_total: int = 0
    current_nodes: int = 0
    cores_total: int | None = None
    memory_total: int | None = None
    gpu_total: int | None = None
    current_cores: int = 0
    current_memory: int = 0
    current_gpus: int = 0
    balance_similar: bool = False
    ignored_labels: frozenset[str] = frozenset()
    group_budget: float = DEFAULT_GROUP_BUDGET
    total_budget: float = DEFAULT_TOTAL_BUDGET
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)


@dataclass(slots=True, frozen=True)
class GroupSize:
    """A group's size as CA's cloud provider reports it; ``max_size`` None = not known (no limit)."""

    name: str
    current: int
    max_size: int | None


@dataclass(slots=True)
class ScaleUpPlan:
    """What CA would ask the cloud provider for: new sizes per group, and what capped the count."""

    node_group: str
    estimated: int
    node_count: int
    capped_by: list[str] = field(default_factory=list)
    groups: list[tuple[str, int, int]] = field(default_factory=list)  # (name, current, new size)


def min_limit(base: int, target: int) -> int:
    """CA's ``getMinLimit``: -1 (nothing allowed) wins, then the smallest positive; 0 = no limit."""
    if base < 0 or target < 0:
        return -1
    if (base == 0 or base > target) and target > 0:
        return target
    return base


def _room(size: GroupSize) -> int:
    return max(0, size.max_size - size.current) if size.max_size is not None else 0


def node_limit(size: GroupSize, similar: Sequence[GroupSize], limits: ScaleUpLimits) -> int:
    """CA's threshold limiter for one group: -1 = no new node, 0 = no limit, else at most that many."""
    limit = min_limit(0, limits.max_nodes_per_scale_up)
    if size.max_size is not None:
        room = _room(size) + sum(_room(s) for s in similar)
        limit = min_limit(limit, room if room > 0 else -1)
    if limits.max_nodes_total:
        left = limits.max_nodes_total - limits.current_nodes
        limit = min_limit(limit, left if left > 0 else -1)
    return limit


def limit_source(size: GroupSize, similar: Sequence[GroupSize], limits: ScaleUpLimits, limit: int) -> str:
    """Which of CA's limits allows only ``limit`` new nodes (``node_limit``'s answer), in words a user
    can act on: the group's max size, ``--max-nodes-total`` or ``--max-nodes-per-scale-up``."""
    if size.max_size is not None:
        room = _room(size) + sum(_room(s) for s in similar)
        if room == limit:
            text = f"node group {size.name}'s max size {size.max_size} with {size.current} node(s) now"
            return text + (" (and its similar groups' room)" if room != _room(size) else "")
    if limits.max_nodes_total and limits.max_nodes_total - limits.current_nodes == limit:
        return (
            f"--max-nodes-total {limits.max_nodes_total} with {limits.current_nodes} node(s) in the cluster"
        )
    if limits.max_nodes_per_scale_up == limit:
        return f"CA's per-scale-up limit --max-nodes-per-scale-up {limits.max_nodes_per_scale_up}"
    return "maxNewNodes"


def _resources_left(template: Mapping, gpus: int, limits: ScaleUpLimits) -> dict[str, tuple[int, int]]:
    """(left in the cluster, one new node's amount) for every resource that has a limit."""
    capacity = node_capacity(template)
    rows = {
        # CA counts whole cores (Quantity.Value rounds up)
        "cores": (limits.cores_total, limits.current_cores, -(-capacity.cpu // 1000)),
        "memory": (limits.memory_total, limits.current_memory, capacity.memory),
        "gpus": (limits.gpu_total, limits.current_gpus, gpus),
    }
    return {
        name: (max(0, maximum - current), delta)
        for name, (maximum, current, delta) in rows.items()
        if maximum is not None
    }


def skip_reason(size: GroupSize, template: Mapping, gpus: int, limits: ScaleUpLimits) -> str:
    """Why CA's ``filterValidScaleUpNodeGroups`` would not consider the group at all ("" if it would)."""
    if size.max_size is not None and size.current >= size.max_size:
        return f"max node group size reached ({size.current}/{size.max_size})"
    exceeded = [
        name for name, (left, delta) in _resources_left(template, gpus, limits).items() if delta > left
    ]
    if exceeded:
        return f"max cluster {', '.join(exceeded)} limit reached"
    return ""


def cap_new_nodes(
    estimated: int, template: Mapping, gpus: int, limits: ScaleUpLimits
) -> tuple[int, list[str]]:
    """CA's ``GetCappedNewNodeCount`` then ``ApplyLimits`` for the chosen group: (count, what capped)."""
    count, capped = estimated, []
    if limits.max_nodes_total and count + limits.current_nodes > limits.max_nodes_total:
        count = max(0, limits.max_nodes_total - limits.current_nodes)
        capped.append(f"maxNodesTotal ({limits.max_nodes_total})")
    for name, (left, delta) in _resources_left(template, gpus, limits).items():
        if delta > 0 and left < delta * count:
            count = left // delta
            capped.append(f"{name} total")
    return count, capped


def _quantities(node: Mapping, key: str) -> dict[str, float] | None:
    status = node.get("status")
    values = status.get(key) if isinstance(status, Mapping) else None
    if not isinstance(values, Mapping):
        return {}
    try:
        return {str(k): float(parse_quantity(str(v))) for k, v in values.items()}
    except (QuantityError, ValueError, TypeError):
        return None


def _within(a: float, b: float, ratio: float) -> bool:
    larger, smaller = max(a, b), min(a, b)
    return larger - smaller <= larger * ratio


def _labels(node: Mapping, ignored: frozenset[str]) -> dict[str, str]:
    meta = node.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    if not isinstance(labels, Mapping):
        return {}
    return {k: v for k, v in labels.items() if k not in ignored}


def similar_templates(a: Mapping, b: Mapping, ignored: frozenset[str] = frozenset()) -> bool:
    """CA's generic node-info comparator on two templates: the same capacity (memory within 1.5%),
    allocatable within 5%, the same labels but for the ignored ones (hostname, zone, region, ...)."""
    cap_a, cap_b = _quantities(a, "capacity"), _quantities(b, "capacity")
    if cap_a is None or cap_b is None or cap_a.keys() != cap_b.keys():
        return False
    for name, value in cap_a.items():
        if name == "memory":
            if not _within(value, cap_b[name], MAX_CAPACITY_MEMORY_DIFFERENCE):
                return False
        elif value != cap_b[name]:
            return False
    alloc_a, alloc_b = node_allocatable(a), node_allocatable(b)
    for x, y in ((alloc_a.cpu, alloc_b.cpu), (alloc_a.memory, alloc_b.memory), (alloc_a.pods, alloc_b.pods)):
        if not _within(x, y, MAX_ALLOCATABLE_DIFFERENCE):
            return False
    ignore = BASIC_IGNORED_LABELS | ignored
    return _labels(a, ignore) == _labels(b, ignore)


@dataclass(slots=True)
class _Growth:
    name: str
    current: int
    new: int
    max_size: int | None

    def full(self) -> bool:
        return self.max_size is not None and self.new >= self.max_size


def balance(sizes: Sequence[GroupSize], new_nodes: int) -> list[tuple[str, int, int]]:
    """CA's ``BalanceScaleUpBetweenGroups``: grow the smallest groups first, one node at a time, up to
    their max size; returns (name, current, new size) for the groups that grow."""
    infos = [_Growth(s.name, s.current, s.current, s.max_size) for s in sizes if s.max_size != s.current]
    capacity = sum((s.max_size - s.current) if s.max_size is not None else new_nodes for s in sizes)
    new_nodes = min(new_nodes, max(0, capacity))
    infos.sort(key=lambda info: info.current)
    start = current = 0
    while new_nodes > 0 and start < len(infos):
        info = infos[current]
        if not info.full():
            info.new += 1
            new_nodes -= 1
        else:
            infos[start], infos[current] = infos[current], infos[start]
            start += 1
        if current < len(infos) - 1 and info.new > infos[current + 1].new:
            current += 1
        else:
            current = start
    return [(i.name, i.current, i.new) for i in infos if i.new != i.current]


def _kept(taint: object) -> bool:
    key = taint.get("key") if isinstance(taint, Mapping) else None
    if not isinstance(key, str):
        return True
    return key not in CA_TAINTS and key not in CONDITION_TAINTS and not key.startswith(STRIPPED_PREFIXES)


def sanitize_template(node: Mapping) -> tuple[Mapping, list[str]]:
    """CA's sanitised template: without CA's own taints (ToBeDeleted, DeletionCandidate), the
    node-condition taints and the ignore/startup/status-taint prefixes. Returns (node, removed keys);
    the node is the same object when nothing was removed."""
    spec = node.get("spec")
    if not isinstance(spec, Mapping) or not isinstance(spec.get("taints"), list):
        return node, []
    taints: list = spec["taints"]
    kept = [t for t in taints if _kept(t)]
    if len(kept) == len(taints):
        return node, []
    removed = [str(t.get("key")) for t in taints if not _kept(t) and isinstance(t, Mapping)]
    return {**node, "spec": {**spec, "taints": kept}}, removed


def _object(value: object) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def daemon_set_pod(ds: Mapping) -> dict:
    """The pod a DaemonSet would create on a fresh node (its pod template, owned by the DaemonSet),
    with the unschedulable toleration the DaemonSet controller adds to every daemon pod."""
    meta = _object(ds.get("metadata"))
    pod_spec = dict(_object(_object(_object(ds.get("spec")).get("template")).get("spec")))
    tolerations = list(pod_spec.get("tolerations") or [])
    tolerations.append({"key": UNSCHEDULABLE_TAINT["key"], "operator": "Exists", "effect": "NoSchedule"})
    pod_spec["tolerations"] = tolerations
    name = str(meta.get("name") or "daemonset")
    return {
        "metadata": {
            "name": f"{name}-pod",
            "namespace": meta.get("namespace") or "default",
            "uid": f"daemonset/{meta.get('namespace') or 'default'}/{name}",
            "ownerReferences": [
                {"kind": "DaemonSet", "name": name, "uid": meta.get("uid", ""), "controller": True}
            ],
        },
        "spec": pod_spec,
    }
