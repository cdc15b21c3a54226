"""CA's filters as the estimator applies them on top of ``engine.scheduler_filters`` and ``engine.interpod``:
the snapshot the affinity and spread filters count in, the filters that depend only on the pod and
the node (checked once per group), and CA's hostname-spread test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..interpod import HOSTNAME_LABEL, PodTerms, pod_terms
from ..scheduler_filters import node_problem, static_mismatch, unschedulable
from ..topology import TopologyIndex
from .inputs import ClusterNode, EstimateError
from .parsed_groups import Equivalence

__all__ = ["SnapshotNode", "cluster_snapshot", "hostname_spread", "static_reason", "topology_index"]


def hostname_spread(pod: Mapping) -> bool:
    """CA's ``isPodUsingHostNameTopologyKey``: any topology spread constraint (whenUnsatisfiable of
    either kind) keyed on ``kubernetes.io/hostname``."""
    spec = pod.get("spec")
    constraints = spec.get("topologySpreadConstraints") if isinstance(spec, Mapping) else None
    if not isinstance(constraints, list):
        return False
    return any(isinstance(c, Mapping) and c.get("topologyKey") == HOSTNAME_LABEL for c in constraints)


def static_reason(pod: Mapping, node: Mapping) -> str:
    """The filters that depend only on the pod and the node (selectors, node affinity, taints,
    NodeUnschedulable on a cordoned template): kube-scheduler's reason, or "" when they pass."""
    return static_mismatch(pod, node) or unschedulable(pod, node)


@dataclass(slots=True, frozen=True)
class SnapshotNode:
    node: Mapping
    labels: Mapping[str, str]
    pods: tuple[PodTerms, ...]
    raw_pods: tuple[Mapping, ...] | None = None  # an existing node's pods (None: an upcoming node)


def cluster_snapshot(cluster: Sequence[ClusterNode]) -> list[SnapshotNode]:
    out = []
    for i, entry in enumerate(cluster):
        problem = node_problem(entry.node)
        if problem:
            raise EstimateError(f"cluster node {i}: {problem}")
        meta = entry.node.get("metadata")
        labels = meta.get("labels") if isinstance(meta, Mapping) else None
        out.append(
            SnapshotNode(
                entry.node,
                labels or {},
                tuple(pod_terms(p) for p in entry.pods if isinstance(p, Mapping)),
                tuple(p for p in entry.pods if isinstance(p, Mapping)),
            )
        )
    return out


def topology_index(
    equivalences: list[Equivalence], daemon_terms: Sequence[PodTerms], cluster: Sequence[SnapshotNode]
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
