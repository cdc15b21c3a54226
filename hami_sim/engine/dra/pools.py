"""Which devices a node can see: the resource pools of the slices that target it.

A driver publishes a pool as one or more slices of one generation. The allocator only allocates from
a pool whose slices it has all seen (complete), at its newest generation, and refuses a pool whose
device names repeat (invalid). Pools come in (driver, pool) order and slices in name order, so the
first fitting device is the one the scheduler's allocator would take.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hami_sim.engine.dra.objects import Device, ResourceSlice
from hami_sim.engine.scheduler_filters import node_selector_matches

__all__ = ["Pool", "gather_pools", "slice_targets"]


@dataclass(frozen=True, slots=True)
class Pool:
    driver: str
    name: str
    slices: tuple[ResourceSlice, ...] = ()
    incomplete: bool = False
    invalid: str = ""

    def devices(self) -> Iterable[tuple[ResourceSlice, Device]]:
        for resource_slice in self.slices:
            for device in resource_slice.devices:
                yield resource_slice, device


def slice_targets(resource_slice: ResourceSlice, node: Mapping) -> bool:
    """Node selection of a slice: its node name, all nodes, or a node selector (else: no node)."""
    if resource_slice.node_name:
        return bool((node.get("metadata") or {}).get("name") == resource_slice.node_name)
    if resource_slice.all_nodes:
        return True
    if resource_slice.node_selector is not None:
        return node_selector_matches(resource_slice.node_selector, node)
    return False


def _newest(slices: Iterable[ResourceSlice]) -> dict[tuple[str, str], list[ResourceSlice]]:
    """Per pool, the slices of the newest generation among those given."""
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for resource_slice in slices:
        key = (resource_slice.driver, resource_slice.pool)
        kept = pools.get(key)
        if kept is None or resource_slice.generation > kept[0].generation:
            pools[key] = [resource_slice]
        elif resource_slice.generation == kept[0].generation:
            kept.append(resource_slice)
    return pools


def _duplicate_device(slices: Iterable[ResourceSlice]) -> str:
    seen: set[str] = set()
    for resource_slice in slices:
        for device in resource_slice.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return ""


def _pool(key: tuple[str, str], slices: list[ResourceSlice], everywhere: list[ResourceSlice]) -> Pool | None:
    """One pool as the node sees it, or None when a newer generation exists elsewhere (obsolete)."""
    generation, wanted = slices[0].generation, slices[0].slice_count
    if len(slices) != wanted:
        same_pool = [s for s in everywhere if (s.driver, s.pool) == key]
        if any(s.generation > generation for s in same_pool):
            return None
        if sum(s.generation == generation for s in same_pool) != wanted:
            # kept with its slices so a verdict can say what they hold; never allocated from
            return Pool(key[0], key[1], tuple(sorted(slices, key=lambda s: s.name)), incomplete=True)
    ordered = tuple(sorted(slices, key=lambda s: s.name))
    return Pool(key[0], key[1], ordered, invalid=_duplicate_device(ordered))


def gather_pools(slices: Iterable[ResourceSlice], node: Mapping) -> tuple[Pool, ...]:
    """The pools whose slices target ``node``, in the allocator's (driver, pool) order."""
    everywhere = list(slices)
    targeting = [s for s in everywhere if slice_targets(s, node)]
    pools = [
        pool for key, kept in _newest(targeting).items() if (pool := _pool(key, kept, everywhere)) is not None
    ]
    return tuple(sorted(pools, key=lambda p: (p.driver, p.name)))
