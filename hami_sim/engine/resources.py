"""kube-scheduler's NodeResourcesFit as the estimator needs it: a pod's request (``resource.PodRequests``:
app containers, sidecars, init containers' peak, overhead, scalar resources), a node's allocatable and
capacity, and the fit of one on what is left of the other, with kube-scheduler's reason texts.

Apart from the other filters (``scheduler_filters``: taints, selectors, node affinity) because it is the one
that runs per placement: plain integer arithmetic on a slotted ``Resources``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
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
]


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
    _add_init_containers(total, inits)
    total.add(_amounts(spec.get("overhead"), "pod.spec.overhead"))
    if total.scalars and ignored:
        total.scalars = {k: v for k, v in total.scalars.items() if k not in ignored} or None
    return total


def _add_init_containers(total: Resources, inits: list) -> None:
    """Sidecars run beside the app containers, so they add up; a plain init container runs alone
    but beside the sidecars started before it, so only its peak counts, if it is the larger."""
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
    return _shortages(demand, free)


def _shortages(demand: Resources, free: Resources) -> str:
    """kube-scheduler's reasons for a pod that does not fit, in its order (the failure path only)."""
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
