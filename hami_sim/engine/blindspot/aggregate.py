"""Aggregate capacity: the extended resources a node advertises as the sum of its cards' memory and cores,
so that CA's ``NodeResourcesFit`` counts a pod's device memory against the node's total (a necessary
condition for HAMi's per-card fit). Which vendors can, and under which names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from ..model import DeviceUsage
from ..vendors import Vendor, default_vendors

__all__ = ["AGGREGATE_VENDORS", "AggregateNames", "aggregate_capacity", "aggregate_names"]

#: The vendors whose memory and cores names a node may advertise as the sum of its cards (each
#: backend says so, ``Vendor.sums_capacity``). HAMi
#: v2.10.0's NVIDIA device plugin registers only the device count with kubelet, its ``gpumem`` is MiB
#: per card (times ``memoryFactor``) and ``gpucores`` a percentage of each card (100 per card). The
#: others are left out: Cambricon's, Moore Threads' and AWS Neuron's device plugins advertise their
#: own memory or cores names (a patch would fight them), Iluvatar, Cambricon and Moore Threads count
#: memory in 256/512 MiB units, Ascend scales it by its template factor, Enflame by its own spec.
AGGREGATE_VENDORS = frozenset(v.common_word for v in default_vendors() if v.sums_capacity)


class AggregateNames(NamedTuple):
    """A vendor's pod resource names for device memory and cores, and the MiB one memory unit is."""

    memory: str
    cores: str
    memory_unit: int = 1


def aggregate_names(vendors: Iterable[Vendor]) -> dict[str, AggregateNames]:
    """Per vendor (common word) whose cards may be summed (``Vendor.sums_capacity``), the pod resource
    names of device memory and cores: what a node advertises as the sum of its cards in aggregate mode."""
    out: dict[str, AggregateNames] = {}
    for vendor in vendors:
        if not vendor.sums_capacity:
            continue
        config = getattr(vendor, "config", None)
        memory = getattr(config, "resource_memory_name", "")
        cores = getattr(config, "resource_core_name", "")
        factor = getattr(config, "memory_factor", 1)
        unit = factor if isinstance(factor, int) and factor > 1 else 1
        if isinstance(memory, str) and memory and isinstance(cores, str) and cores:
            out[vendor.common_word] = AggregateNames(memory, cores, unit)
    return out


def aggregate_capacity(devices: Iterable[DeviceUsage], names: Mapping[str, AggregateNames]) -> dict[str, int]:
    """The extended resources a node advertises in aggregate mode: per name, the sum of its healthy
    cards' memory (in the vendor's memory unit, rounded down) and cores."""
    memory: dict[str, int] = {}
    out: dict[str, int] = {}
    units: dict[str, int] = {}
    for dev in devices:
        entry = names.get(dev.vendor)
        if entry is None or not dev.health:
            continue
        memory[entry.memory] = memory.get(entry.memory, 0) + dev.totalmem
        units[entry.memory] = entry.memory_unit
        out[entry.cores] = out.get(entry.cores, 0) + dev.totalcore
    for name, mib in memory.items():
        out[name] = mib // units[name]
    return out
