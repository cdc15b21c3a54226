"""The basic Kubernetes scheduling checks the estimator needs, besides HAMi's device fit.

CA's estimator runs kube-scheduler's filter plugins on every hypothetical node. HAMi's device
resources are ``ignoredByScheduler``, so what is left for a template node is: NodeResourcesFit
(``resources.py``, re-exported here: cpu, memory, ephemeral-storage, pod count and scalar resources),
TaintToleration (NoSchedule/NoExecute) and NodeAffinity (``nodeSelector`` plus required node
affinity), here. The filters that count other pods (NodePorts, InterPodAffinity,
PodTopologySpread) live in ``interpod.py``. The reason texts are kube-scheduler's, so an operator
recognises them from ``FailedScheduling`` events.

Static checks (taints, selector, affinity) depend only on the pod and the template, so the estimator
runs them once per equivalence group and node group; the resource check runs per placement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .resources import (
    Resources,
    containers_demand,
    insufficient,
    is_scalar_resource,
    node_allocatable,
    node_capacity,
    pod_demand,
)

__all__ = [
    "Resources",
    "is_scalar_resource",
    "pod_demand",
    "containers_demand",
    "node_allocatable",
    "node_capacity",
    "insufficient",
    "untolerated_taint",
    "matches_node_selector",
    "matches_required_affinity",
    "node_selector_matches",
    "static_mismatch",
    "unschedulable",
    "node_problem",
    "UNSCHEDULABLE_TAINT",
    "NODE_AFFINITY_MISMATCH",
]

NODE_AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")
#: the taint kube-scheduler's NodeUnschedulable treats ``spec.unschedulable`` as (and CA's templates drop)
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
_UNSCHEDULABLE_NODE = {"spec": {"taints": [UNSCHEDULABLE_TAINT]}}


def _tolerates(toleration: Mapping, taint: Mapping) -> bool:
    """``Toleration.ToleratesTaint``: effect (empty = all), key (empty + Exists = all), operator."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def _tolerations(pod: Mapping) -> list[Mapping]:
    """The pod's tolerations that are objects (anything else tolerates nothing)."""
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    tolerations = spec.get("tolerations") if isinstance(spec, Mapping) else None
    return [t for t in tolerations if isinstance(t, Mapping)] if isinstance(tolerations, list) else []


def untolerated_taint(pod: Mapping, node: Mapping) -> str:
    """TaintToleration: the first NoSchedule/NoExecute taint the pod does not tolerate, or ""."""
    spec = node.get("spec") if isinstance(node, Mapping) else None
    taints = spec.get("taints") if isinstance(spec, Mapping) else None
    if not isinstance(taints, list) or not taints:
        return ""
    tolerations = _tolerations(pod)
    for taint in taints:
        if not isinstance(taint, Mapping) or taint.get("effect") not in _SCHEDULE_EFFECTS:
            continue
        if not any(_tolerates(t, taint) for t in tolerations):
            return f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '') or ''}}}"
    return ""


def _labels(node: Mapping) -> Mapping[str, str]:
    meta = node.get("metadata") if isinstance(node, Mapping) else None
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def matches_node_selector(pod: Mapping, node: Mapping) -> bool:
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    selector = spec.get("nodeSelector") if isinstance(spec, Mapping) else None
    if not isinstance(selector, Mapping) or not selector:
        return True
    labels = _labels(node)
    return all(labels.get(k) == v for k, v in selector.items())


def _requirement(expr: Mapping, value: str | None) -> bool:
    """One ``NodeSelectorRequirement`` against a label (or field) value; None = absent."""
    operator = expr.get("operator")
    values = expr.get("values") or []
    if not isinstance(values, list):
        return False
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt"):
        if value is None or len(values) != 1:
            return False
        try:
            have, want = int(value), int(values[0])
        except (TypeError, ValueError):
            return False
        return have > want if operator == "Gt" else have < want
    return False


def _term_matches(term: Mapping, node: Mapping, labels: Mapping[str, str]) -> bool:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not isinstance(exprs, list) or not isinstance(fields, list) or not (exprs or fields):
        return False  # a null or empty term matches no objects
    for expr in exprs:
        if not isinstance(expr, Mapping) or not _requirement(expr, labels.get(expr.get("key", ""))):
            return False
    return _fields_match(fields, node)


def _fields_match(fields: list, node: Mapping) -> bool:
    """A term's ``matchFields``: only ``metadata.name`` is a node field kube-scheduler supports."""
    name = (node.get("metadata") or {}).get("name")
    for expr in fields:
        if (
            not isinstance(expr, Mapping)
            or expr.get("key") != "metadata.name"
            or not _requirement(expr, name)
        ):
            return False
    return True


def matches_required_affinity(pod: Mapping, node: Mapping) -> bool:
    """``requiredDuringSchedulingIgnoredDuringExecution``: terms are ORed, expressions ANDed."""
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    affinity = spec.get("affinity") if isinstance(spec, Mapping) else None
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    required = (
        node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node_affinity, Mapping)
        else None
    )
    if not isinstance(required, Mapping):
        return True
    return node_selector_matches(required, node)


def node_selector_matches(selector: Mapping, node: Mapping) -> bool:
    """A ``NodeSelector`` (its ``nodeSelectorTerms`` ORed, each term's expressions ANDed): a pod's
    required node affinity, and the node selection of a DRA ResourceSlice or device."""
    terms: Sequence = selector.get("nodeSelectorTerms") or []
    if not isinstance(terms, list):
        return False
    labels = _labels(node)
    return any(isinstance(t, Mapping) and _term_matches(t, node, labels) for t in terms)


def static_mismatch(pod: Mapping, node: Mapping) -> str:
    """Checks that depend only on pod and template: "" when they pass, else kube-scheduler's reason."""
    if not matches_node_selector(pod, node) or not matches_required_affinity(pod, node):
        return NODE_AFFINITY_MISMATCH
    return untolerated_taint(pod, node)


def unschedulable(pod: Mapping, node: Mapping) -> str:
    """kube-scheduler's NodeUnschedulable: a ``spec.unschedulable`` (cordoned) node holds only pods that
    tolerate ``node.kubernetes.io/unschedulable:NoSchedule``; "" when the pod may go there."""
    spec = node.get("spec")
    if not (isinstance(spec, Mapping) and spec.get("unschedulable") is True):
        return ""
    return "node(s) were unschedulable" if untolerated_taint(pod, _UNSCHEDULABLE_NODE) else ""


def node_problem(node: object) -> str:
    """Why ``node`` could not have come from the API server ("" when it could).

    ``metadata.labels`` and ``metadata.annotations`` are ``map[string]string`` in Go: a client would
    have rejected anything else, and the engine reads them as strings (null counts as absent).
    """
    if not isinstance(node, Mapping):
        return "must be a Node object"
    meta = node.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, Mapping):
        return "metadata must be an object"
    problem = _string_maps_problem(meta)
    if problem:
        return problem
    spec = node.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        return "spec must be an object"
    taints = spec.get("taints") if isinstance(spec, Mapping) else None
    if taints is not None and (
        not isinstance(taints, list) or not all(isinstance(t, Mapping) for t in taints)
    ):
        return "spec.taints must be a list of objects"
    return ""


def _string_maps_problem(meta: Mapping) -> str:
    """Labels and annotations: ``map[string]string`` (null values count as absent), or why not."""
    for key in ("labels", "annotations"):
        values = meta.get(key)
        if values is None:
            continue
        if not isinstance(values, Mapping):
            return f"metadata.{key} must be an object"
        for name, value in values.items():
            if value is not None and not isinstance(value, str):
                return f"metadata.{key}[{name}] must be a string"
    return ""
