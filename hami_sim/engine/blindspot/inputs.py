"""What both views are given: CA's scheduler profile, the nodes (with their live cards for HAMi's
view) and the pending pods."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..model import NodeState
from ..scheduler_filters import Resources
from .aggregate import AggregateNames

__all__ = ["NO_LIVE_USAGE", "CAProfile", "Pending", "ViewNode"]

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
