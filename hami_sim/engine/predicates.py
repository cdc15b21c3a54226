"""The basic Kubernetes scheduling checks the estimator needs, besides HAMi's device fit.

CA's estimator runs kube-scheduler's filter plugins on every hypothetical node. HAMi's device
resources are ``ignoredByScheduler``, so what is left here for a template node is: NodeResourcesFit
(cpu, memory, ephemeral-storage, pod count and scalar resources, with kube-scheduler's request
arithmetic for init containers and sidecars), TaintToleration (NoSchedule/NoExecute), and
NodeAffinity (``nodeSelector`` plus required node affinity). The filters that count other pods
(NodePorts, InterPodAffinity, PodTopologySpread) live in ``interpod.py``. The reason texts are kube-scheduler's, so an operator
recognises them from ``FailedScheduling`` events.

Static checks (taints, selector, affinity) depend only on the pod and the template, so the estimator
runs them once per equivalence group and node group; the resource check runs per placement and is
plain integer arithmetic on a slotted ``Resources``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from .quantity import QuantityError, as_int64, parse_quantity
from .requests import PodError

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
    "static_mismatch",
    "node_problem",
    "NODE_AFFINITY_MISMATCH",
]

NODE_AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(slots=True)
class Resources:
    """Schedulable amounts: cpu in millicores, memory and ephemeral-storage in bytes, pod slots, and
    kube-scheduler's scalar resources (extended resources such as ``example.com/foo``, hugepages) by
    name in whole units (None = none, so the common case costs nothing)."""

    cpu: int = 0
    memory: int = 0
    ephemeral: int = 0
    pods: int = 0
    scalars: dict[str, int] | None = None

    def copy(self) -> Resources:
        scalars = dict(self.scalars) if self.scalars else None
        return Resources(self.cpu, self.memory, self.ephemeral, self.pods, scalars)

    def take(self, demand: Resources) -> None:
        """Subtract a pod's demand (one pod slot included) from what is left of a node."""
        self.cpu -= demand.cpu
        self.memory -= demand.memory
        self.ephemeral -= demand.ephemeral
        self.pods -= 1
        if demand.scalars:
            left = self.scalars if self.scalars is not None else {}
            for name, amount in demand.scalars.items():
                left[name] = left.get(name, 0) - amount
            self.scalars = left

    def _combine(self, other: Resources, op: Callable[[int, int], int]) -> None:
        self.cpu = op(self.cpu, other.cpu)
        self.memory = op(self.memory, other.memory)
        self.ephemeral = op(self.ephemeral, other.ephemeral)
        if other.scalars or self.scalars:
            mine = self.scalars or {}
            theirs = other.scalars or {}
            self.scalars = {k: op(mine.get(k, 0), theirs.get(k, 0)) for k in mine.keys() | theirs.keys()}

    def add(self, other: Resources) -> None:
        self._combine(other, _plus)

    def maximum(self, other: Resources) -> None:
        self._combine(other, max)


def _plus(a: int, b: int) -> int:
    return a + b


def _ceil(value: Fraction) -> int:
    """``Quantity.Value()``/``MilliValue()`` round up, as kube-scheduler reads them."""
    return math.ceil(value)


def is_scalar_resource(name: str) -> bool:
    """kube-scheduler's ``IsScalarResourceName``: extended (``example.com/foo``) and prefixed native
    (``kubernetes.io/...``) resources, hugepages and attachable volumes; not cpu, memory, pods."""
    if "/" in name:
        return not name.startswith("requests.")
    return name.startswith(("hugepages-", "attachable-volumes-"))


def _scalars(values: Mapping, where: str) -> dict[str, int] | None:
    out: dict[str, int] | None = None
    for name, raw in values.items():
        if not isinstance(name, str) or not is_scalar_resource(name) or raw is None:
            continue
        try:
            amount = _ceil(parse_quantity(raw))
        except QuantityError as exc:
            raise PodError(f"{where}[{name}]: {exc}") from None
        if out is None:
            out = {}
        out[name] = amount
    return out


def _amounts(values: object, where: str) -> Resources:
    out = Resources()
    if not isinstance(values, Mapping):
        return out
    for name, attr, scale in (
        ("cpu", "cpu", 1000),
        ("memory", "memory", 1),
        ("ephemeral-storage", "ephemeral", 1),
    ):
        raw = values.get(name)
        if raw is None:
            continue
        try:
            setattr(out, attr, _ceil(parse_quantity(raw) * scale))
        except QuantityError as exc:
            raise PodError(f"{where}[{name}]: {exc}") from None
    if not values.keys() <= _BASIC:
        out.scalars = _scalars(values, where)
    return out


_BASIC = frozenset(("cpu", "memory", "ephemeral-storage", "pods"))


def _container_requests(container: Mapping, where: str) -> Resources:
    resources = container.get("resources") if isinstance(container, Mapping) else None
    resources = resources if isinstance(resources, Mapping) else {}
    requests = resources.get("requests")
    limits = resources.get("limits")
    req = _amounts(requests, f"{where}.resources.requests")
    lim = _amounts(limits, f"{where}.resources.limits")
    # The API server defaults a missing request to its limit; pods straight from YAML may not have it.
    req_map = requests if isinstance(requests, Mapping) else {}
    if "cpu" not in req_map:
        req.cpu = lim.cpu
    if "memory" not in req_map:
        req.memory = lim.memory
    if "ephemeral-storage" not in req_map:
        req.ephemeral = lim.ephemeral
    if lim.scalars:
        defaulted = {k: v for k, v in lim.scalars.items() if k not in req_map}
        if defaulted:
            req.scalars = {**(req.scalars or {}), **defaulted}
    return req


def _restartable(container: object) -> bool:
    """A sidecar: an init container with ``restartPolicy: Always`` (runs beside the app containers)."""
    return isinstance(container, Mapping) and container.get("restartPolicy") == "Always"


def pod_demand(pod: Mapping, ignored: frozenset[str] = frozenset()) -> Resources:
    """kube-scheduler's pod request (``resource.PodRequests``): the app containers plus every sidecar
    (restartable init container), or the peak of an init container running beside the sidecars
    started before it, whichever is larger; plus the pod overhead. Scalar resources included but
    ``ignored`` (NodeResourcesFit's ``ignoredResources``: HAMi's, which HAMi's own Fit judges)."""
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    spec = spec if isinstance(spec, Mapping) else {}
    total = Resources(pods=1)
    containers = spec.get("containers") or []
    inits = spec.get("initContainers") or []
    if not isinstance(containers, list) or not isinstance(inits, list):
        raise PodError("pod.spec.containers and pod.spec.initContainers must be arrays")
    for i, container in enumerate(containers):
        total.add(_container_requests(container, f"pod.spec.containers[{i}]"))
    sidecars = Resources()
    peak = Resources()
    for i, container in enumerate(inits):
        r = _container_requests(container, f"pod.spec.initContainers[{i}]")
        if _restartable(container):
            total.add(r)
            sidecars.add(r)
            peak.maximum(sidecars)
        else:
            r.add(sidecars)
            peak.maximum(r)
    total.maximum(peak)
    total.add(_amounts(spec.get("overhead"), "pod.spec.overhead"))
    if total.scalars and ignored:
        total.scalars = {k: v for k, v in total.scalars.items() if k not in ignored} or None
    return total


def containers_demand(pod: Mapping) -> Resources:
    """The app containers' requests only: what CA's least-waste expander sums (no init, no overhead)."""
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    containers = spec.get("containers") if isinstance(spec, Mapping) else None
    total = Resources(pods=1)
    for i, container in enumerate(containers if isinstance(containers, list) else []):
        r = _container_requests(container, f"pod.spec.containers[{i}]")
        total.cpu += r.cpu
        total.memory += r.memory
    return total


def _status_amounts(node: Mapping, key: str) -> Resources:
    status = node.get("status") if isinstance(node, Mapping) else None
    status = status if isinstance(status, Mapping) else {}
    values = status.get(key)
    if not isinstance(values, Mapping):
        return Resources()
    out = _amounts(values, f"node.status.{key}")
    pods = values.get("pods")
    if pods is not None:
        try:
            out.pods = as_int64(parse_quantity(pods)) or 0
        except QuantityError as exc:
            raise PodError(f"node.status.{key}[pods]: {exc}") from None
    return out


def node_allocatable(node: Mapping) -> Resources:
    """``status.allocatable`` (falling back to ``capacity`` when a template carries only that)."""
    status = node.get("status") if isinstance(node, Mapping) else None
    if isinstance(status, Mapping) and isinstance(status.get("allocatable"), Mapping):
        return _status_amounts(node, "allocatable")
    return _status_amounts(node, "capacity")


def node_capacity(node: Mapping) -> Resources:
    """``status.capacity`` (CA's least-waste expander measures waste against capacity)."""
    status = node.get("status") if isinstance(node, Mapping) else None
    if isinstance(status, Mapping) and isinstance(status.get("capacity"), Mapping):
        return _status_amounts(node, "capacity")
    return _status_amounts(node, "allocatable")


def insufficient(demand: Resources, free: Resources) -> str:
    """NodeResourcesFit on what is left of a node; "" when the pod fits, else the reasons."""
    if (
        demand.pods <= free.pods
        and demand.cpu <= free.cpu
        and demand.memory <= free.memory
        and demand.ephemeral <= free.ephemeral
        and not (demand.scalars and _short_scalars(demand, free))
    ):
        return ""
    reasons = ["Too many pods"] if demand.pods > free.pods else []
    if demand.cpu > free.cpu and demand.cpu > 0:
        reasons.append("Insufficient cpu")
    if demand.memory > free.memory and demand.memory > 0:
        reasons.append("Insufficient memory")
    if demand.ephemeral > free.ephemeral and demand.ephemeral > 0:
        reasons.append("Insufficient ephemeral-storage")
    reasons.extend(f"Insufficient {name}" for name in _short_scalars(demand, free))
    return ", ".join(reasons)


def _short_scalars(demand: Resources, free: Resources) -> list[str]:
    """The scalar resources the pod asks for more of than the node has left (sorted names)."""
    if not demand.scalars:
        return []
    left = free.scalars or {}
    return sorted(
        name for name, amount in demand.scalars.items() if amount > 0 and amount > left.get(name, 0)
    )


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


def untolerated_taint(pod: Mapping, node: Mapping) -> str:
    """TaintToleration: the first NoSchedule/NoExecute taint the pod does not tolerate, or ""."""
    spec = node.get("spec") if isinstance(node, Mapping) else None
    taints = spec.get("taints") if isinstance(spec, Mapping) else None
    if not isinstance(taints, list) or not taints:
        return ""
    pod_spec = pod.get("spec") if isinstance(pod, Mapping) else None
    tolerations = pod_spec.get("tolerations") if isinstance(pod_spec, Mapping) else None
    tolerations = [t for t in tolerations if isinstance(t, Mapping)] if isinstance(tolerations, list) else []
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
    terms: Sequence = required.get("nodeSelectorTerms") or []
    if not isinstance(terms, list):
        return False
    labels = _labels(node)
    return any(isinstance(t, Mapping) and _term_matches(t, node, labels) for t in terms)


def static_mismatch(pod: Mapping, node: Mapping) -> str:
    """Checks that depend only on pod and template: "" when they pass, else kube-scheduler's reason."""
    if not matches_node_selector(pod, node) or not matches_required_affinity(pod, node):
        return NODE_AFFINITY_MISMATCH
    return untolerated_taint(pod, node)


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
    for key in ("labels", "annotations"):
        values = meta.get(key)
        if values is None:
            continue
        if not isinstance(values, Mapping):
            return f"metadata.{key} must be an object"
        for name, value in values.items():
            if value is not None and not isinstance(value, str):
                return f"metadata.{key}[{name}] must be a string"
    spec = node.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        return "spec must be an object"
    taints = spec.get("taints") if isinstance(spec, Mapping) else None
    if taints is not None and (
        not isinstance(taints, list) or not all(isinstance(t, Mapping) for t in taints)
    ):
        return "spec.taints must be a list of objects"
    return ""
