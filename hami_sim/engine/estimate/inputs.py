"""What the estimator is asked: pending pods, node groups to grow, the snapshot's other nodes, and the
bounds on one request's work.

Frozen values, as the API and the gRPC expander build them; ``EstimateError`` is the one error a caller
turns into a 400."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..model import Inventory
from ..scaleup import GroupSize

__all__ = [
    "ClusterNode",
    "DEFAULT_MAX_NODES_PER_SCALE_UP",
    "EstimateError",
    "GroupTemplate",
    "MAX_WORK",
    "PendingPods",
    "TIME_LIMIT_SECONDS",
    "UpcomingNodes",
]

DEFAULT_MAX_NODES_PER_SCALE_UP = 1000


# One request may not occupy a worker without bound: 100,000 pods x 100 inline groups
# ran 64.5 s and answered 433 MB. The budget counts pod x group placements before any packing (a 400);
# the time limit is checked between pod shapes and groups: past it no further group is packed, and the
# answer names the groups cut short (as CA's max-binpacking-time), never a stuck worker.
MAX_WORK = 1_000_000
TIME_LIMIT_SECONDS = 20.0


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
    inventory: Inventory | None = None  # the template's, when the caller resolved it (else resolved here)

    @property
    def size(self) -> GroupSize:
        return GroupSize(self.name, self.current_size, self.max_size)


@dataclass(slots=True, frozen=True)
class PendingPods:
    """A pending pod; with ``count`` it stands for that many replicas with ids ``<id>#0..n-1``."""

    pod: Mapping
    count: int | None = None


@dataclass(slots=True, frozen=True)
class ClusterNode:
    """A node already in CA's snapshot (an existing or upcoming node) with the pods on it: seen by the
    affinity and topology-spread filters (its labels, its pods), never a binpacking target."""

    node: Mapping
    pods: tuple[Mapping, ...] = ()


@dataclass(slots=True, frozen=True)
class UpcomingNodes:
    """``count`` nodes a group is already adding (CA's upcoming nodes; its target size counts them)."""

    node_group: str
    count: int
