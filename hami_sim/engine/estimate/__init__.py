"""Multi-pod scale-up estimate: CA's binpacking estimator with HAMi's device fit carried pod to pod.

A stateless extender answers every template node with zero device usage, so CA's estimator believes
one node holds far more GPU pods than it can. This module runs the whole binpacking in one call, the
way CA's ``BinpackingNodeEstimator`` does:

- pods form CA's equivalence groups (``equivalence_groups.py``: same controller, labels and spec but for
  projected volumes, env and hostname; annotations too, as HAMi reads them); groups are ordered by the
  share of the template they take (``cpu/allocatable cpu + memory/allocatable memory``, descending),
  ties by device memory requested (descending), then input order;
- per group: place pods on the nodes added so far, round-robin from the node after the last match,
  until one fails; then for each remaining pod try the last added node, else add a new node; stop
  the group when its pod does not fit an empty node (or the node limit is reached);
- a node's devices carry the usage of the pods already on it (``PodFit.usage_after``), so the second
  12000 MiB pod on a 23028 MiB A10 goes to the other card, and the third needs a new node.
- a pod fits a node when kube-scheduler's filters pass (``scheduler_filters.py``: taints, node affinity,
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
controller (one equivalence group each, as in CA) share parsing with identical pods; fresh nodes
an equivalence group fills alone take its pods a node at a time (``bulk``). That keeps 10,000 pods
well under a second.

The package, in the order an estimate runs: ``inputs`` (what is asked) -> ``parsed_groups`` (pods
parsed once per equivalence group) -> ``upcoming`` (pods absorbed by nodes being added) ->
``template_node``, ``fitter``, ``ca_filters``, ``packing`` and ``bulk`` (one node group's binpacking)
-> ``ca_expanders``, ``chain`` and ``explain`` (CA's expander chain and its sentence) -> ``results``;
``entry.estimate`` runs them. Each module's ``__all__`` is what the others may import from it; a
leading underscore is private to its module (``tests/engine/test_internal_api.py``).
"""

from __future__ import annotations

from ..scaleup import ScaleUpLimits
from .ca_expanders import EXPANDERS, Expander, expander_filter, parse_expander
from .chain import choose
from .entry import estimate
from .fitter import Shape, device_signature
from .inputs import (
    DEFAULT_MAX_NODES_PER_SCALE_UP,
    MAX_WORK,
    TIME_LIMIT_SECONDS,
    ClusterNode,
    EstimateError,
    GroupTemplate,
    PendingPods,
    UpcomingNodes,
)
from .parsed_groups import entry_ids, group_pending_pods
from .results import DIFFERENCES, EstimatedNode, EstimateResult, GroupOption, UpcomingNode, Waste

__all__ = [
    "EXPANDERS",
    "DEFAULT_MAX_NODES_PER_SCALE_UP",
    "MAX_WORK",
    "TIME_LIMIT_SECONDS",
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
    "entry_ids",
    # for the tests that look inside: the equivalence grouping, the usage signature, the shape
    "group_pending_pods",
    "device_signature",
    "Shape",
]
