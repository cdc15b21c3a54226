"""The DRA API objects the allocator reads, parsed from ``resource.k8s.io/v1`` JSON into frozen values.

Parsing is where bad input stops: a malformed object raises ``DraError`` naming the field, so the
allocator itself only ever sees well-formed values. Quantities stay exact (``Fraction``), as the
API's ``resource.Quantity`` is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from hami_sim.engine.quantity import QuantityError, parse_quantity

__all__ = [
    "ALL",
    "EXACT_COUNT",
    "DraError",
    "Unsupported",
    "Semver",
    "RequestPolicy",
    "Capacity",
    "Device",
    "ResourceSlice",
    "DeviceClass",
    "DeviceRequest",
    "Claim",
    "AllocatedDevice",
    "parse_slice",
    "parse_class",
    "parse_claim",
    "qualified",
]

EXACT_COUNT = "ExactCount"
ALL = "All"
EMPTY: Mapping = MappingProxyType({})


class DraError(ValueError):
    """A DRA object or claim the allocator cannot use: said as the scheduler would say it."""


class Unsupported(DraError):
    """A claim feature this simulation does not model (so it refuses instead of guessing)."""


@dataclass(frozen=True, slots=True)
class Semver:
    """A ``version`` attribute: compared as semantic versions, never as strings."""

    text: str


AttributeValue = int | bool | str | Semver


@dataclass(frozen=True, slots=True)
class RequestPolicy:
    """How a multi-allocatable device's capacity may be requested (``requestPolicy``)."""

    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    range_min: Fraction | None = None
    range_max: Fraction | None = None
    range_step: Fraction | None = None

    @property
    def has_range(self) -> bool:
        return self.range_min is not None


@dataclass(frozen=True, slots=True)
class Capacity:
    value: Fraction
    policy: RequestPolicy | None = None


@dataclass(frozen=True, slots=True)
class Device:
    """One device of a slice. ``attributes`` are keyed by fully qualified name (``domain/name``; a
    bare name belongs to the slice's driver), as CEL and constraints read them; ``capacity`` by its
    name as written, which is what a claim's capacity requests must match."""

    name: str
    attributes: Mapping[str, AttributeValue]
    capacity: Mapping[str, Capacity]
    allow_multiple: bool = False


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str = ""
    all_nodes: bool = False
    node_selector: Mapping | None = None
    devices: tuple[Device, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    name: str
    class_name: str
    mode: str = EXACT_COUNT
    count: int = 1
    selectors: tuple[str, ...] = ()
    capacity: Mapping[str, Fraction] | None = None


@dataclass(frozen=True, slots=True)
class AllocatedDevice:
    """A device another claim holds: whole (``consumed`` None) or a share of its capacity."""

    driver: str
    pool: str
    device: str
    consumed: Mapping[str, Fraction] | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    name: str
    requests: tuple[DeviceRequest, ...]
    allocated: tuple[AllocatedDevice, ...] = ()


def qualified(name: str, driver: str) -> str:
    """``FullyQualifiedName``: a bare attribute or capacity name is in the driver's domain."""
    return name if "/" in name else f"{driver}/{name}"


def _mapping(value: object, where: str) -> Mapping:
    if value is None:
        return EMPTY
    if not isinstance(value, Mapping):
        raise DraError(f"{where} must be an object")
    return value


def _list(value: object, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise DraError(f"{where} must be a list")
    return value


def _text(value: object, where: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise DraError(f"{where} must be a non-empty string")
    return value


def _quantity(value: object, where: str) -> Fraction:
    try:
        return parse_quantity(value)
    except QuantityError as error:
        raise DraError(f"{where}: {error}") from None


def _int(value: object, where: str, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise DraError(f"{where} must be an integer")
    return value


def _attribute(raw: object, where: str) -> AttributeValue:
    """One ``DeviceAttribute``: exactly one of int, bool, string, version."""
    fields = _mapping(raw, where)
    if len(fields) != 1:
        raise DraError(f"{where} must set exactly one of int, bool, string, version")
    ((kind, value),) = fields.items()
    if kind == "version" and isinstance(value, str):
        return Semver(value)
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DraError(f"{where}.{kind} is not a valid {kind} attribute")


def _policy(raw: object, where: str) -> RequestPolicy | None:
    if raw is None:
        return None
    fields = _mapping(raw, where)
    default = fields.get("default")
    valid_range = _mapping(fields.get("validRange"), f"{where}.validRange")

    def optional(value: object, name: str) -> Fraction | None:
        return None if value is None else _quantity(value, f"{where}.{name}")

    return RequestPolicy(
        default=optional(default, "default"),
        valid_values=tuple(
            _quantity(v, f"{where}.validValues") for v in _list(fields.get("validValues"), where)
        ),
        range_min=optional(valid_range.get("min"), "validRange.min"),
        range_max=optional(valid_range.get("max"), "validRange.max"),
        range_step=optional(valid_range.get("step"), "validRange.step"),
    )


def _device(raw: object, driver: str, where: str) -> Device:
    fields = _mapping(raw, where)
    for unsupported in ("consumesCounters", "taints", "bindingConditions"):
        if fields.get(unsupported):
            raise Unsupported(f"{where}: {unsupported} is not simulated")
    attributes = {
        qualified(name, driver): _attribute(value, f"{where}.attributes[{name}]")
        for name, value in _mapping(fields.get("attributes"), f"{where}.attributes").items()
    }
    capacity = {}
    for name, value in _mapping(fields.get("capacity"), f"{where}.capacity").items():
        entry = _mapping(value, f"{where}.capacity[{name}]")
        capacity[name] = Capacity(
            _quantity(entry.get("value"), f"{where}.capacity[{name}].value"),
            _policy(entry.get("requestPolicy"), f"{where}.capacity[{name}].requestPolicy"),
        )
    return Device(
        name=_text(fields.get("name"), f"{where}.name"),
        attributes=MappingProxyType(attributes),
        capacity=MappingProxyType(capacity),
        allow_multiple=fields.get("allowMultipleAllocations") is True,
    )


def parse_slice(obj: Mapping) -> ResourceSlice:
    """A ``ResourceSlice`` object (``metadata`` + ``spec``)."""
    name = _text(_mapping(obj.get("metadata"), "metadata").get("name"), "metadata.name")
    spec = _mapping(obj.get("spec"), f"slice {name}: spec")
    where = f"slice {name}"
    if spec.get("perDeviceNodeSelection") or spec.get("sharedCounters"):
        raise Unsupported(
            f"{where}: partitionable devices (counters, per-device node selection) are not simulated"
        )
    driver = _text(spec.get("driver"), f"{where}: spec.driver")
    pool = _mapping(spec.get("pool"), f"{where}: spec.pool")
    selector = spec.get("nodeSelector")
    return ResourceSlice(
        name=name,
        driver=driver,
        pool=_text(pool.get("name"), f"{where}: spec.pool.name"),
        generation=_int(pool.get("generation"), f"{where}: spec.pool.generation", 0),
        slice_count=_int(pool.get("resourceSliceCount"), f"{where}: spec.pool.resourceSliceCount", 1),
        node_name=_text(spec.get("nodeName"), f"{where}: spec.nodeName", required=False),
        all_nodes=spec.get("allNodes") is True,
        node_selector=_mapping(selector, f"{where}: spec.nodeSelector") if selector is not None else None,
        devices=tuple(
            _device(d, driver, f"{where}: device #{i}")
            for i, d in enumerate(_list(spec.get("devices"), f"{where}: spec.devices"))
        ),
    )


def _selectors(raw: object, where: str) -> tuple[str, ...]:
    expressions = []
    for i, selector in enumerate(_list(raw, where)):
        cel = _mapping(_mapping(selector, f"{where} #{i}").get("cel"), f"{where} #{i}.cel")
        expressions.append(_text(cel.get("expression"), f"{where} #{i}.cel.expression"))
    return tuple(expressions)


def parse_class(obj: Mapping) -> DeviceClass:
    name = _text(_mapping(obj.get("metadata"), "metadata").get("name"), "metadata.name")
    spec = _mapping(obj.get("spec"), f"class {name}: spec")
    return DeviceClass(name, _selectors(spec.get("selectors"), f"class {name}: selector"))


def _request(raw: object, where: str) -> DeviceRequest:
    fields = _mapping(raw, where)
    name = _text(fields.get("name"), f"{where}.name")
    if fields.get("firstAvailable"):
        raise Unsupported(f"request {name}: prioritized lists (firstAvailable) are not simulated")
    exactly = _mapping(fields.get("exactly"), f"request {name}.exactly")
    if exactly.get("adminAccess") or exactly.get("tolerations"):
        raise Unsupported(f"request {name}: admin access and device tolerations are not simulated")
    mode = exactly.get("allocationMode") or EXACT_COUNT
    if mode not in (EXACT_COUNT, ALL):
        raise DraError(f"request {name}: unsupported allocation mode {mode}")
    requests = _mapping(_mapping(exactly.get("capacity"), "capacity").get("requests"), "capacity.requests")
    return DeviceRequest(
        name=name,
        class_name=_text(exactly.get("deviceClassName"), f"request {name}.deviceClassName", required=False),
        mode=mode,
        count=_int(exactly.get("count"), f"request {name}.count", 1),
        selectors=_selectors(exactly.get("selectors"), f"request {name}: selector"),
        capacity=MappingProxyType(
            {k: _quantity(v, f"request {name}.capacity[{k}]") for k, v in requests.items()}
        )
        if exactly.get("capacity") is not None
        else None,
    )


def _allocated(status: Mapping) -> tuple[AllocatedDevice, ...]:
    allocation = _mapping(status.get("allocation"), "status.allocation")
    results = _list(_mapping(allocation.get("devices"), "devices").get("results"), "results")
    held = []
    for i, raw in enumerate(results):
        result = _mapping(raw, f"status.allocation.devices.results #{i}")
        consumed = result.get("consumedCapacity")
        held.append(
            AllocatedDevice(
                driver=_text(result.get("driver"), "driver"),
                pool=_text(result.get("pool"), "pool"),
                device=_text(result.get("device"), "device"),
                consumed=MappingProxyType(
                    {
                        k: _quantity(v, f"consumedCapacity[{k}]")
                        for k, v in _mapping(consumed, "consumedCapacity").items()
                    }
                )
                if result.get("shareID") and consumed is not None
                else None,
            )
        )
    return tuple(held)


def parse_claim(obj: Mapping) -> Claim:
    """A ``ResourceClaim``: its requests and, when allocated, the devices it holds."""
    name = _text(_mapping(obj.get("metadata"), "metadata").get("name"), "metadata.name")
    devices = _mapping(_mapping(obj.get("spec"), "spec").get("devices"), f"claim {name}: spec.devices")
    if devices.get("constraints"):
        raise Unsupported(f"claim {name}: constraints (matchAttribute, distinctAttribute) are not simulated")
    return Claim(
        name=name,
        requests=tuple(
            _request(r, f"claim {name}: request #{i}")
            for i, r in enumerate(_list(devices.get("requests"), "requests"))
        ),
        allocated=_allocated(_mapping(obj.get("status"), "status")),
    )
