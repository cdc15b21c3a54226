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

The package: ``inputs`` (the profile, nodes and pods), ``aggregate`` (aggregate capacity),
``placement`` (the loop both views share) and ``views`` (the entry points).
"""

from __future__ import annotations

from .aggregate import AGGREGATE_VENDORS, AggregateNames, aggregate_capacity, aggregate_names
from .inputs import NO_LIVE_USAGE, CAProfile, Pending, ViewNode
from .views import DrainViews, PodViews, drain_views, pod_views

__all__ = [
    "AGGREGATE_VENDORS",
    "NO_LIVE_USAGE",
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
