"""What the estimator answers: one option per node group (CA's ``expander.Option``), the choice and the
scale-up plan, the upcoming nodes' absorptions, and the list of where it departs from CA on purpose."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ca_releases import DEFAULT_VERSION
from ..model import DeviceUsage
from ..scaleup import ScaleUpPlan
from ..scheduler_filters import Resources

__all__ = ["DIFFERENCES", "EstimateResult", "EstimatedNode", "GroupOption", "UpcomingNode", "Waste"]

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
    cut_short: bool = False  # the estimate's time limit ran out before the group was packed (skipped)
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


@dataclass(slots=True)
class UpcomingNode:
    """An upcoming node as CA's snapshot holds it (template copy, DaemonSet pods) and the pending pods
    it absorbed before the estimate."""

    name: str
    node_group: str
    pods: list[str]
    devices: list[DeviceUsage]
