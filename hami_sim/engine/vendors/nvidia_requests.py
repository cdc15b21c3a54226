"""NVIDIA's ``GenerateResourceRequests``: one container's count, memory, percentage and cores.

Two rule sets, chosen by the release (``HamiRules.nvidia_request_checks``): v2.10.0 checks the
values (a percentage of 0 or below is unset, above 100 is 100, a memory request past int32 asks
nothing); v2.9.0 and v2.8.3 take them as written, wrapped to int32 as Go's conversions do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import ContainerDeviceRequest
from ..quantity import as_int64, parse_quantity
from .request_rules import MAX_INT32, int32

if TYPE_CHECKING:
    from .base import ResourceGetter
    from .nvidia import NvidiaConfig

__all__ = ["checked_request", "request_as_written"]

NVIDIA = "NVIDIA"
_UNSET = 101  # HAMi's "no percentage asked"


def _int(raw: object | None) -> int | None:
    return None if raw is None else as_int64(parse_quantity(raw))


def _percentage(raw: object | None) -> int:
    """The memory percentage clamped to 1..100; unset (101) when absent or below 1."""
    pct = _int(raw)
    if pct is None or pct < 1:
        return _UNSET
    return min(pct, 100)


def _checked_memory(c: NvidiaConfig, resources: ResourceGetter) -> int | None:
    """The memory request in MiB times ``memoryFactor`` (0 when absent); None when it does not
    read as an int64 or the factor would take it past int32."""
    mem_raw = resources.get(c.resource_memory_name)
    if mem_raw is None:
        return 0
    mem = as_int64(parse_quantity(mem_raw))
    if mem is None or mem < 0 or mem > MAX_INT32 // max(c.memory_factor, 1):
        return None
    return mem * c.memory_factor if c.memory_factor > 1 else mem


def _cores(c: NvidiaConfig, resources: ResourceGetter) -> int:
    """The cores request (int32), else ``defaultCores``."""
    cores = _int(resources.get(c.resource_core_name))
    return int(c.default_cores) if cores is None else int32(cores)


def _request(c: NvidiaConfig, nums: int, memnum: int, mempnum: int, cores: int) -> ContainerDeviceRequest:
    if mempnum == _UNSET and memnum == 0:
        if c.default_memory != 0:
            memnum = c.default_memory
        else:
            mempnum = 100
    return ContainerDeviceRequest(int32(nums), NVIDIA, int32(memnum), mempnum, cores)


def checked_request(c: NvidiaConfig, resources: ResourceGetter) -> ContainerDeviceRequest | None:
    """v2.10.0: the count, then memory (MiB, else a percentage of the card, else the default), then
    cores; an unreadable count or memory asks nothing."""
    count_raw = resources.get(c.resource_count_name)
    nums = _int(count_raw)
    if nums is None:
        return None
    memnum = _checked_memory(c, resources)
    if memnum is None:
        return None
    mempnum = _percentage(resources.get(c.resource_memory_percentage_name))
    return _request(c, nums, memnum, mempnum, _cores(c, resources))


def request_as_written(c: NvidiaConfig, resources: ResourceGetter) -> ContainerDeviceRequest | None:
    """v2.9.0 and v2.8.3: an unreadable memory or percentage is left out (0 MiB, unset), a readable
    one counts as written (times ``memoryFactor``, then wrapped to int32): 0% asks no memory, 150%
    more than the card holds."""
    nums = _int(resources.get(c.resource_count_name))
    if nums is None:
        return None
    mem = _int(resources.get(c.resource_memory_name))
    memnum = 0 if mem is None else (mem * c.memory_factor if c.memory_factor > 1 else mem)
    pct = _int(resources.get(c.resource_memory_percentage_name))
    mempnum = _UNSET if pct is None else int32(pct)
    return _request(c, nums, memnum, mempnum, _cores(c, resources))
