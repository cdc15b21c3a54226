"""How HAMi's Ascend backend reads a container's request (``GenerateResourceRequests``), per release.

``huawei.com/<cw>`` NPUs, ``huawei.com/<cw>-memory`` MiB (x ``memoryFactor``; none = 100 % of the
NPU) and ``huawei.com/<cw>-core`` (a percentage, read into ``Coresreq``). Three rules of the release
table apply (``HamiRules``):

- ``request_range_guards`` (v2.10, #2601): a count outside 1..MaxInt32, a negative memory, a memory
  past int32 (before or after ``memoryFactor``) or cores outside 0..MaxInt32 give no request;
  before, the values were narrowed to int32 as written;
- ``ascend_memory_as_asked`` (v2.10): the scheduler takes the memory as asked; before, a container
  that asks memory but no ``-core`` (hard slicing) asked the vNPU template the memory rounds up to
  (``trimMemory``: the smallest template that holds it, else the whole card, else 0);
- ``ascend_vnpu_core`` (v2.9, #1771): the ``-core`` resource is read; v2.8 reads no cores and
  rounds every memory up to its template.
"""

from __future__ import annotations

from fractions import Fraction

from ..hami_releases import HamiRules
from ..model import ContainerDeviceRequest
from ..quantity import QuantityError, parse_quantity
from .ascend_chips import AscendConfig
from .base import ResourceGetter
from .request_rules import MAX_INT32, int32, int64, quantity_int

__all__ = ["ascend_request"]


def ascend_request(
    config: AscendConfig, resources: ResourceGetter, rules: HamiRules
) -> ContainerDeviceRequest | None:
    """The container's Ascend request under ``rules``; None when it asks none (or is refused)."""
    nums = _quantity(resources, config.resource_name)
    if nums is None or nums.denominator != 1:
        return None
    if rules.request_range_guards:
        if nums <= 0 or nums > MAX_INT32:
            return None
        memnum, corenum = _guarded_memory(config, resources), _guarded_cores(config, resources)
        if memnum is None or corenum is None:
            return None
    else:
        memnum, corenum = _memory_as_written(config, resources), _cores_as_written(config, resources)
    asks_memory = quantity_int(resources.get(config.resource_memory_name)) is not None
    hard_sliced = resources.get(config.resource_core_name) is None
    if not rules.ascend_vnpu_core:  # v2.8: no -core resource; every memory is a template's
        corenum, hard_sliced = 0, True
    if asks_memory and hard_sliced and not rules.ascend_memory_as_asked:
        memnum = config.trim_memory(memnum)[0]
    pct = 100 if memnum == 0 else 0
    return ContainerDeviceRequest(int32(int(nums)), config.common_word, int32(memnum), pct, corenum)


def _guarded_memory(config: AscendConfig, resources: ResourceGetter) -> int | None:
    """v2.10: the ``-memory`` MiB x ``memoryFactor``: 0 when absent or not an integer, None (no
    request) when negative or past int32."""
    mem = _quantity(resources, config.resource_memory_name)
    if mem is None or mem.denominator != 1:
        return None if mem is not None and mem < 0 else 0
    if mem < 0 or mem > MAX_INT32:
        return None
    value = int(mem) * max(config.memory_factor, 1)
    return value if value <= MAX_INT32 else None


def _guarded_cores(config: AscendConfig, resources: ResourceGetter) -> int | None:
    """v2.10: the ``-core`` percentage (Go's ``Value()``): 0 when absent, None outside 0..MaxInt32."""
    cores = _quantity(resources, config.resource_core_name)
    if cores is None:
        return 0
    value = _go_value(cores)
    return value if 0 <= value <= MAX_INT32 else None


def _memory_as_written(config: AscendConfig, resources: ResourceGetter) -> int:
    """Before v2.10: the ``-memory`` integer x ``memoryFactor`` (a 64-bit product); 0 when absent or
    not an integer."""
    mem = quantity_int(resources.get(config.resource_memory_name))
    if mem is None:
        return 0
    return int64(mem * config.memory_factor) if config.memory_factor > 1 else mem


def _cores_as_written(config: AscendConfig, resources: ResourceGetter) -> int:
    """Before v2.10: ``int32(Value())`` of ``-core``; 0 when absent."""
    cores = _quantity(resources, config.resource_core_name)
    return int32(_go_value(cores)) if cores is not None else 0


def _quantity(resources: ResourceGetter, name: str) -> Fraction | None:
    """``limits[name]`` else ``requests[name]`` as an exact number; None when absent or unreadable."""
    if not name:
        return None
    raw = resources.get(name)
    if raw is None:
        return None
    try:
        return parse_quantity(raw)
    except QuantityError:
        return None


def _go_value(q: Fraction) -> int:
    """Go ``Quantity.Value()``: the integer value, rounded away from zero."""
    whole = abs(q.numerator) // q.denominator + (1 if abs(q.numerator) % q.denominator else 0)
    return whole if q >= 0 else -whole
