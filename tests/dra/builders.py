"""Small builders of ``resource.k8s.io/v1`` JSON for the DRA tables, named after what they build.

They mirror the vocabulary of the upstream allocator tests (one device per slice unless told,
pools of one slice at generation 1, a class that selects its driver) so a ported case reads like
its origin, but produce the plain API JSON the engine parses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

DRIVER_A, DRIVER_B = "driver-a", "driver-b"
CLASS_A, CLASS_B = "class-a", "class-b"
NODE_1, NODE_2 = "node-1", "node-2"


def node(name: str = NODE_1, region: str = "region-1") -> dict:
    return {"metadata": {"name": name, "labels": {"region": region, "planet": "earth"}}}


def device_class(name: str, driver: str, multiple: bool | None = None) -> dict:
    expression = f'device.driver == "{driver}"'
    if multiple is not None:
        expression += f" && device.allowMultipleAllocations == {str(multiple).lower()}"
    return {"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def range_policy(value: int) -> dict:
    """A capacity with the upstream tests' range policy: default 2, min 2, step 2, max 4."""
    return {
        "value": str(value),
        "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}},
    }


def values_policy(value: int, default: int, *more: int) -> dict:
    """A capacity whose valid values are its default (the smallest) and ``more``."""
    valid = [str(default), *map(str, more)]
    return {"value": str(value), "requestPolicy": {"default": str(default), "validValues": valid}}


def device(
    name: str, capacity: Mapping | None = None, attributes: Mapping | None = None, *, multiple: bool = False
) -> dict:
    body: dict = {"name": name}
    if capacity:
        body["capacity"] = {
            k: v if isinstance(v, Mapping) else {"value": str(v)} for k, v in capacity.items()
        }
    if attributes:
        body["attributes"] = attributes
    if multiple:
        body["allowMultipleAllocations"] = True
    return body


def resource_slice(
    name: str,
    where: str | dict,
    pool: str,
    driver: str,
    *devices: dict,
    count: int = 1,
    generation: int = 1,
) -> dict:
    """A slice; ``where`` is a node name, ``"all"`` or a node selector."""
    spec: dict = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
        "devices": list(devices),
    }
    if isinstance(where, dict):
        spec["nodeSelector"] = where
    elif where == "all":
        spec["allNodes"] = True
    else:
        spec["nodeName"] = where
    return {"metadata": {"name": name}, "spec": spec}


def one_device(name: str, where: str | dict, pool: str, driver: str, **kw: int) -> dict:
    return resource_slice(name, where, pool, driver, device("device-1"), **kw)


def labels_in(key: str, *values: str) -> dict:
    return {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]
    }


def request(
    name: str,
    class_name: str,
    count: int = 1,
    *selectors: str,
    capacity: int | None = None,
    all_devices: bool = False,
) -> dict:
    exactly: dict = {"deviceClassName": class_name}
    if all_devices:
        exactly["allocationMode"] = "All"
    else:
        exactly["allocationMode"] = "ExactCount"
        exactly["count"] = count
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if capacity is not None:
        exactly["capacity"] = {"requests": {"capacity-0": str(capacity)}}
    return {"name": name, "exactly": exactly}


def claim(name: str, *requests: dict) -> dict:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": list(requests)}},
    }


@dataclass(frozen=True)
class Case:
    """One allocator case. ``expect`` is one list per claim of ``(request, "driver/pool/device",
    consumed)`` with ``consumed`` None for a whole device and a dict for a share; None = no fit."""

    name: str
    claims: Sequence[dict]
    classes: Sequence[dict] = ()
    slices: Sequence[dict] = ()
    node: dict = field(default_factory=node)
    dedicated: Sequence[str] = ()
    shares: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    expect: Sequence[Sequence[tuple]] | None = None
    error: str = ""
    origin: str = ""
