"""NVIDIA MIG (HAMi v2.10.0 ``pkg/device/nvidia``): how a MIG-mode GPU gives instances, and how
live usage counts the MIG reservations pods carry.

Two halves, both NVIDIA's alone, used by ``nvidia.py`` and (through ``Vendor.reservations``) by
``allocations``:

- the fit side: a MIG-mode GPU may supply several instances of one request; each takes the smallest
  profile with a free placement (``choose_mig_slot``), which ``mig_fits``, ``take_slot`` and
  ``placed`` apply;
- the usage side: a pod's ``hami.io/vgpu-mig-allocations`` (``decode_mig_allocations``) and how
  HAMi's ``getNodesUsage`` counts them per device, marking a device unhealthy where the reservations
  disagree with its mode (``MigReservations``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from .. import reasons as R
from ..model import ContainerDevice, DeviceUsage, MigPlacement, MigProfile

if TYPE_CHECKING:
    from ..allocations import NodeUsage, PodAllocation

__all__ = [
    "HAMI_CORE_MODE",
    "MIG_ALLOCATIONS",
    "MIG_MODE",
    "MIG_RESERVATIONS",
    "MigAllocation",
    "MigAllocationError",
    "MigReservations",
    "PROFILE_MIG",
    "ProfileMig",
    "choose_mig_slot",
    "decode_mig_allocations",
    "mig_fits",
    "placed",
    "take_slot",
]

MIG_MODE = "mig"
HAMI_CORE_MODE = "hami-core"
MIG_ALLOCATIONS = "hami.io/vgpu-mig-allocations"  # nvidia.MigAllocationsAnnotation


# -- the fit side -----------------------------------------------------------------------------------
def choose_mig_slot(
    profiles: tuple[MigProfile, ...], in_use: list[MigPlacement], memory: int
) -> tuple[MigProfile, MigPlacement] | None:
    """Pick a MIG profile and placement: smallest (memory, slices) profile with a free placement.

    Placements are tried start-descending for ``1g.``/``3g.`` profiles, ascending otherwise.
    """
    for profile in sorted(profiles, key=lambda p: (p.memory_mb, p.slice_count)):
        if profile.memory_mb < memory:
            continue
        descending = profile.name.startswith(("1g.", "3g."))
        for placement in sorted(profile.placements, key=lambda p: p.start, reverse=descending):
            if not any(placement.overlaps(used) for used in in_use):
                return profile, placement
    return None


def mig_fits(dev: DeviceUsage, memreq: int, collected: list[ContainerDevice]) -> bool:
    """Whether ``dev`` still has a slot for ``memreq`` MiB after the instances this walk already
    collected on it (each placed first, in order)."""
    in_use = [placement for _, placement in dev.mig_in_use]
    for prior in collected:
        if prior.uuid != dev.id:
            continue
        slot = choose_mig_slot(dev.mig_profiles, in_use, prior.usedmem)
        if slot is None:
            return False
        in_use.append(slot[1])
    return choose_mig_slot(dev.mig_profiles, in_use, memreq) is not None


def take_slot(dev: DeviceUsage, chosen: ContainerDevice) -> str | None:
    """``AddResourceUsage`` on a MIG device: the chosen instance takes a slot and its profile's
    memory and cores; an error text when no placement is left."""
    slot = choose_mig_slot(dev.mig_profiles, [p for _, p in dev.mig_in_use], chosen.usedmem)
    if slot is None:
        return f"AddResourceUsage failed for device {dev.id}: no MIG placement fits {chosen.usedmem} MiB"
    profile, placement = slot
    dev.mig_in_use.append((profile.name, placement))
    dev.used += 1
    dev.usedmem += profile.memory_mb
    dev.usedcores += profile.core
    return None


def placed(dev: DeviceUsage, chosen: ContainerDevice) -> ContainerDevice:
    """On a MIG device: the profile and slot ``take_slot`` took last, with its memory and cores."""
    if dev.mode != MIG_MODE or not dev.mig_in_use:
        return chosen
    name, placement = dev.mig_in_use[-1]
    profile = next(p for p in dev.mig_profiles if p.name == name)
    return ContainerDevice(
        chosen.idx, chosen.uuid, chosen.type, profile.memory_mb, profile.core, name, placement
    )


# -- the usage side ---------------------------------------------------------------------------------
class MigAllocationError(ValueError):
    """A MIG allocations annotation that does not decode."""


@dataclass(slots=True, frozen=True)
class MigAllocation:
    """One MIG reservation of ``hami.io/vgpu-mig-allocations`` (HAMi ``nvidia.MigAllocation``)."""

    gpu_uuid: str
    profile: str
    placement: MigPlacement
    container_index: int = 0
    device_index: int = 0


def decode_mig_allocations(text: str) -> list[MigAllocation]:
    """``nvidia.DecodeMigAllocations``: a JSON list; incomplete or duplicate entries are errors."""
    if not text:
        return []
    try:
        raw = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise MigAllocationError(f"MIG allocations are not JSON: {exc}") from None
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise MigAllocationError("MIG allocations are not a JSON list")
    out: list[MigAllocation] = []
    seen: set[tuple[int, int]] = set()
    for i, item in enumerate(raw):
        entry = _mig_entry(item, i)
        key = (entry.container_index, entry.device_index)
        if key in seen:
            raise MigAllocationError(f"duplicate MIG allocation for container {key[0]} device {key[1]}")
        seen.add(key)
        out.append(entry)
    return out


def _mig_entry(item: object, i: int) -> MigAllocation:
    if not isinstance(item, Mapping):
        raise MigAllocationError(f"MIG allocation {i} is not an object")
    placement = item.get("placement")
    placement = placement if isinstance(placement, Mapping) else {}
    values = (item.get("containerIndex", 0), item.get("deviceIndex", 0))
    start, size = placement.get("start", 0), placement.get("size", 0)
    if not all(isinstance(v, int) for v in (*values, start, size)):
        raise MigAllocationError(f"MIG allocation {i} has a non-integer index or placement")
    gpu, profile = item.get("gpuUUID") or "", item.get("profile") or ""
    if values[0] < 0 or values[1] < 0 or not gpu or not profile or size == 0:
        raise MigAllocationError(f"MIG allocation {i} is incomplete")
    if _runtime_fields(item) not in (0, 3):
        raise MigAllocationError(f"MIG allocation {i} has partial runtime identity")
    return MigAllocation(str(gpu), str(profile), MigPlacement(start, size), values[0], values[1])


def _runtime_fields(item: Mapping) -> int:
    """How many of the runtime identity fields are set (all or none, once the device plugin ran)."""
    return sum(1 for k in ("migUUID", "gpuInstanceID", "computeInstanceID") if item.get(k) not in (None, ""))


class MigReservations:
    """NVIDIA's rule for live usage (``Vendor.reservations``): a pod's MIG reservations go to the
    devices its allocation names, in order, and HAMi's ``getNodesUsage`` marks a device unhealthy
    where they disagree with its mode."""

    __slots__ = ()

    annotation = MIG_ALLOCATIONS

    def decode(self, text: str) -> tuple[MigAllocation, ...]:
        """The pod's reservations; none when they do not decode (HAMi ignores them then)."""
        try:
            return tuple(decode_mig_allocations(text))
        except MigAllocationError:
            return ()

    def count(self, usage: NodeUsage, pod: PodAllocation, registered: Mapping[str, str]) -> None:
        """Count one pod's reservations on the node's devices (``registered``: UUID -> mode)."""
        pending: dict[str, list[MigAllocation]] = {}
        for alloc in pod.mig:
            pending.setdefault(alloc.gpu_uuid, []).append(alloc)
        for _vendor, dev in pod.devices:
            mode = registered.get(dev.uuid)
            if mode is not None:
                _count_device(usage, pod, dev.uuid, mode, pending)
        _leftover(usage, pod, registered, pending)


def _count_device(
    usage: NodeUsage, pod: PodAllocation, uuid: str, mode: str, pending: dict[str, list[MigAllocation]]
) -> None:
    """One allocated device: it takes its first pending reservation; a hami-core device with one,
    or a MIG device without one, goes unhealthy."""
    use = usage.devices[uuid]
    allocations = pending.get(uuid)
    if allocations:
        if mode == HAMI_CORE_MODE:
            use.unhealthy = True
            usage.problems.append((pod.key, f"a MIG task runs on hami-core GPU {uuid}"))
            return
        first = allocations.pop(0)
        use.mig.append((first.profile, first.placement))
    elif mode == MIG_MODE:
        use.unhealthy = True
        usage.problems.append((pod.key, f"MIG pod lacks a profile/placement reservation on {uuid}"))


def _leftover(
    usage: NodeUsage,
    pod: PodAllocation,
    registered: Mapping[str, str],
    pending: dict[str, list[MigAllocation]],
) -> None:
    """Reservations no device entry consumed: restored on a MIG device, else the device(s) go unhealthy."""
    for uuid, allocations in pending.items():
        if not allocations:
            continue
        mode = registered.get(uuid)
        if mode is None:
            usage.problems.append((pod.key, f"MIG reservations reference unknown device {uuid}"))
            for other, other_mode in registered.items():
                if other_mode == MIG_MODE:
                    usage.devices[other].unhealthy = True
        elif mode != MIG_MODE:
            usage.problems.append((pod.key, f"MIG reservations reference non-MIG device {uuid}"))
            usage.devices[uuid].unhealthy = True
        else:
            usage.devices[uuid].mig.extend((a.profile, a.placement) for a in allocations)


#: the one instance NVIDIA's backend declares (stateless)
MIG_RESERVATIONS = MigReservations()


class ProfileMig:
    """The MIG rules of v2.10.0 as ``NvidiaVendor.mig`` answers them (the release-chosen
    counterpart of ``nvidia_mig_templates.TemplateMig``)."""

    __slots__ = ()

    refusal = R.CARD_MIG_TOPOLOGY_INFEASIBLE
    reservations = MIG_RESERVATIONS

    def fits(self, dev: DeviceUsage, memreq: int, written: int, collected: list[ContainerDevice]) -> bool:
        """Fit's MIG check on the memory the request resolved to (``written`` is not read)."""
        return mig_fits(dev, memreq, collected)

    def take(self, dev: DeviceUsage, chosen: ContainerDevice) -> str | None:
        return take_slot(dev, chosen)

    def placed(self, dev: DeviceUsage, chosen: ContainerDevice) -> ContainerDevice:
        return placed(dev, chosen)


PROFILE_MIG = ProfileMig()
