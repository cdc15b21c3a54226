"""Request rules several HAMi backends share: reading a container's resources as HAMi does.

Each helper is one rule that several ``GenerateResourceRequests`` repeat (the device count, a
count + memory + cores request, v2.10's memory guard, the count-only request); a backend's
``container_request`` calls the ones it follows and writes the rest itself.
"""

from __future__ import annotations

from typing import Protocol

from ..model import ContainerDeviceRequest
from ..quantity import QuantityError, as_int64, parse_quantity
from .base import ResourceGetter

__all__ = [
    "MAX_INT32",
    "CountMemoryCoreConfig",
    "go_div",
    "int32",
    "int64",
    "quantity_int",
    "resource_int",
    "resource_value",
    "requested_count",
    "resource_int32",
    "sliced_request",
    "count_request",
    "count_memory_core_request",
    "plain_memory_request",
]

MAX_INT32 = 2**31 - 1


class CountMemoryCoreConfig(Protocol):
    """A config block with count, memory and core resource names (Cambricon, Hygon, Iluvatar)."""

    @property
    def resource_count_name(self) -> str: ...

    @property
    def resource_memory_name(self) -> str: ...

    @property
    def resource_core_name(self) -> str: ...


def go_div(a: int, b: int) -> int:
    """Go integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def int32(value: int) -> int:
    """Go's ``int32(v)`` conversion (wraps)."""
    return (value + 2**31) % 2**32 - 2**31


def quantity_int(value: object) -> int | None:
    """``Quantity.AsInt64()``: the exact integer, or None (fractional, out of range, not a quantity)."""
    if value is None:
        return None
    try:
        return as_int64(parse_quantity(value))
    except QuantityError:
        return None


def resource_int(resources: ResourceGetter, name: str) -> tuple[bool, int | None]:
    """(present, AsInt64 value) of ``limits[name]`` else ``requests[name]``; empty names are absent."""
    if not name:
        return False, None
    raw = resources.get(name)
    if raw is None:
        return False, None
    return True, quantity_int(raw)


def resource_value(resources: ResourceGetter, name: str) -> int | None:
    """``AsInt64`` of an optional resource; None when absent, unnamed or not an integer."""
    return resource_int(resources, name)[1]


def requested_count(resources: ResourceGetter, name: str) -> int | None:
    """The device count a container asks for (``int32`` of ``AsInt64``); None when it asks none or the
    quantity is not an integer (HAMi then skips the container for this vendor)."""
    nums = resource_value(resources, name)
    return int32(nums) if nums is not None else None


def resource_int32(resources: ResourceGetter, name: str, *, scale: int = 1, default: int = 0) -> int:
    """``int32(AsInt64 x scale)`` of an optional resource, ``default`` when absent or not an integer."""
    value = resource_value(resources, name)
    return int32(value * scale) if value is not None else default


def sliced_request(nums: int, vendor: str, memnum: int, corenum: int) -> ContainerDeviceRequest:
    """A per-device request where no memory means the whole card (``MemPercentagereq`` 100)."""
    return ContainerDeviceRequest(nums, vendor, memnum, 100 if memnum == 0 else 0, corenum)


def int64(value: int) -> int:
    """Go's 64-bit ``int`` arithmetic (wraps)."""
    return (value + 2**63) % 2**64 - 2**63


def count_memory_core_request(
    resources: ResourceGetter,
    vendor: str,
    config: CountMemoryCoreConfig,
    *,
    memory_scale: int = 1,
    default_cores: int = 0,
    per_device: bool = False,
) -> ContainerDeviceRequest | None:
    """The request of the count + memory + cores vendors (Cambricon, Hygon, Iluvatar, Mthreads) as
    written, without the range guards v2.10 added (#2285, #2388): ``N`` devices of
    ``memory x memory_scale`` MiB each (none: the whole card) and a cores percentage
    (``default_cores`` when absent), all ``int32``; None when the container asks no count.

    As in HAMi, "no memory" (the whole card) is decided on the scaled value before it is narrowed to
    int32, so a memory past int32 (16Gi read as bytes) that wraps to 0 asks neither memory nor the
    whole card; a memory or core value that is not an integer is ignored. ``per_device``: the
    container's memory and cores are divided between its devices (Mthreads); a count that narrows to
    0 is then no request (HAMi divides by zero there and the call fails).

    ``config`` carries ``resource_count_name``, ``resource_memory_name`` and ``resource_core_name``.
    """
    nums = requested_count(resources, config.resource_count_name)
    if nums is None:
        return None
    mem = resource_value(resources, config.resource_memory_name)
    memnum = int64(mem * memory_scale) if mem is not None else 0
    cores = resource_value(resources, config.resource_core_name)
    corenum = int32(cores) if cores is not None else default_cores
    pct = 100 if memnum == 0 else 0
    memreq = int32(memnum)
    if per_device:
        if nums == 0:
            return None
        memreq, corenum = int32(go_div(memreq, nums)), int32(go_div(corenum, nums))
    return ContainerDeviceRequest(nums, vendor, memreq, pct, corenum)


def plain_memory_request(
    resources: ResourceGetter,
    vendor: str,
    config: CountMemoryCoreConfig,
    *,
    memory_scale: int,
    default_cores: int = 0,
) -> ContainerDeviceRequest | None:
    """``count_memory_core_request`` with v2.10 Cambricon's and Iluvatar's memory guard: a memory
    quantity that is not a plain integer, is negative or overflows int32 once scaled gives no request
    (HAMi refuses it rather than under-allocate). Hygon's v2.10 guard also checks the cores, so it
    is not this one."""
    present, mem = resource_int(resources, config.resource_memory_name)
    if present and (mem is None or mem < 0 or mem > MAX_INT32 // memory_scale):
        return None
    return count_memory_core_request(
        resources, vendor, config, memory_scale=memory_scale, default_cores=default_cores
    )


def count_request(
    resources: ResourceGetter, name: str, vendor: str, fixed: tuple[int, int, int] = (0, 100, 0)
) -> ContainerDeviceRequest | None:
    """The count-only request (Biren, Vastai, MetaX GPU, Enflame GCU, Kunlunxin): ``N`` devices of
    ``name``, each with the fixed (memory, memory %, cores) of the backend; None when none asked."""
    nums = requested_count(resources, name)
    if nums is None:
        return None
    return ContainerDeviceRequest(nums, vendor, *fixed)
