"""Pod -> per-container device requests (HAMi ``Resourcereqs``), init containers first.

The pod is validated structurally here: wrong JSON types are a ``PodError`` (the Go client could
not have decoded them), never an exception deeper in the engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from .model import ContainerDeviceRequest, PodRequests, PodView
from .names import pod_id
from .quantity import QuantityError, parse_quantity
from .vendors.base import ResourceGetter, Vendor

# ``PodView`` and ``pod_id`` are re-exported: they live in ``model`` and ``names``
__all__ = ["PodError", "PodView", "parse_pod", "pod_id"]


class PodError(ValueError):
    """A pod that cannot be decoded as a Kubernetes Pod."""


def _mapping(value: object, where: str) -> Mapping:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PodError(f"{where} must be an object")
    return value


def _sequence(value: object, where: str) -> Sequence:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise PodError(f"{where} must be an array")
    return value


def _string(value: object, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise PodError(f"{where} must be a string")
    return value


def _container_requests(
    containers: Sequence, where: str, vendors: Sequence[Vendor]
) -> list[Mapping[str, ContainerDeviceRequest]]:
    out: list[Mapping[str, ContainerDeviceRequest]] = []
    for i, container in enumerate(containers):
        container = _mapping(container, f"{where}[{i}]")
        resources = _mapping(container.get("resources"), f"{where}[{i}].resources")
        limits = _mapping(resources.get("limits"), f"{where}[{i}].resources.limits")
        requests = _mapping(resources.get("requests"), f"{where}[{i}].resources.requests")
        for section, values in (("limits", limits), ("requests", requests)):
            for name, value in values.items():
                try:
                    parse_quantity(value)
                except QuantityError as exc:
                    raise PodError(f"{where}[{i}].resources.{section}[{name}]: {exc}") from None
        getter = ResourceGetter(limits, requests)
        per_vendor: dict[str, ContainerDeviceRequest] = {}
        for vendor in vendors:
            req = vendor.container_request(getter)
            if req is not None and req.nums > 0:
                per_vendor[req.type] = req
        out.append(MappingProxyType(per_vendor))
    return out


def parse_pod(pod: object, vendors: Sequence[Vendor]) -> PodView:
    """Decode a Pod object into a ``PodView``; raises ``PodError`` on a structurally bad pod."""
    if not isinstance(pod, Mapping):
        raise PodError("pod must be an object")
    meta = _mapping(pod.get("metadata"), "pod.metadata")
    spec = _mapping(pod.get("spec"), "pod.spec")
    annotations_raw = _mapping(meta.get("annotations"), "pod.metadata.annotations")
    annotations: dict[str, str] = {}
    for key, value in annotations_raw.items():
        annotations[key] = _string(value, f"pod.metadata.annotations[{key}]")
    owners = _sequence(meta.get("ownerReferences"), "pod.metadata.ownerReferences")
    owner = ""
    for ref in owners:
        if isinstance(ref, Mapping) and ref.get("controller"):
            owner = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            break
    init = _container_requests(
        _sequence(spec.get("initContainers"), "pod.spec.initContainers"), "pod.spec.initContainers", vendors
    )
    apps = _container_requests(
        _sequence(spec.get("containers"), "pod.spec.containers"), "pod.spec.containers", vendors
    )
    return PodView(
        name=_string(meta.get("name"), "pod.metadata.name"),
        namespace=_string(meta.get("namespace"), "pod.metadata.namespace") or "default",
        uid=_string(meta.get("uid"), "pod.metadata.uid"),
        annotations=MappingProxyType(annotations),
        requests=PodRequests(tuple(init + apps), len(init)),
        owner=owner,
    )
