"""Enflame GCUs (HAMi ``pkg/device/enflame``): whole GCUs (``GCU``) and DRS slices (``Enflame``).

- Whole GCUs: ``status.capacity[enflame.com/gcu]`` exclusive devices; ``enflame.com/gcu: N`` takes N
  idle GCUs (a used one is ``ExclusiveDeviceAllocateConflict``).
- DRS (vGCU, v2.10): ``EnflameDrsVendor`` below (before v2.10, shared GCUs: ``enflame_shared``); its rules (the ``enflame.com/gcu-drs-capacity``
  registration, profile selection, the per-device checks and slice accounting) in ``enflame_drs.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import reasons as R
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor
from .enflame_drs import (
    DRS_CAPACITY,
    DRS_PROFILE,
    ENFLAME,
    MODE_BY_SPEC,
    MODE_DIRECT,
    MODE_NOT_FIT,
    decode_drs,
    drs_reason,
    profile_fits_int32,
    profile_slices,
    quantity_value,
    select_profile,
)
from .enflame_shared import GCU_COUNT, EnflameSharedVendor
from .fit_loop import Rejections, collected_count
from .node_codecs import capacity_devices
from .registry import Backend, ProfileFields, Registration, RenderInput, VendorDescriptor, capacity_renderer
from .request_rules import MAX_INT32, count_request, int32, resource_int
from .selection import uuid_check

if TYPE_CHECKING:
    from ..hami_releases import HamiRules
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = [
    "DESCRIPTOR",
    "EnflameConfig",
    "EnflameGcuVendor",
    "EnflameDrsVendor",
    "GCU",
]

GCU = "GCU"


@dataclass(slots=True, frozen=True)
class EnflameConfig:
    """The ``enflame:`` block of HAMi's device config."""

    resource_count_name: str = "enflame.com/gcu"
    resource_drs_name: str = "enflame.com/drs-gcu"
    resource_memory_name: str = "enflame.com/gcu-memory"
    resource_core_name: str = "enflame.com/gcu-core"


class EnflameGcuVendor(Vendor):
    """Whole, exclusive Enflame GCUs from node capacity (HAMi ``gcu.go``)."""

    common_word = GCU
    allocated_annotation = "hami.io/enflame-gcu-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    config_class = EnflameConfig
    resource_fields = ("resource_count_name",)

    def node_reads(self) -> NodeReads:
        """The GCU count in capacity; the GCUs are named after the node."""
        return NodeReads(capacity=(self.config.resource_count_name,), name="id")

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        return capacity_devices(
            node, self.config.resource_count_name, GCU, id_infix=GCU, split=1, devmem=100, devcore=100
        ), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """``N`` whole GCUs: 100 MiB, 100 %, 100 cores each (the whole card)."""
        return count_request(resources, self.config.resource_count_name, GCU, (100, 100, 100))

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """Only health, the type and "is the GCU idle" are checked; a placement takes the whole card.

        Not ``common_fit``: HAMi's ``gcu.go`` Fit skips UUID selection, the split count and mutex, and
        records the request's own memory and cores.
        """
        nums = request.nums
        reject = Rejections()
        counts, device_reasons = reject.counts, reject.device_reasons
        collected: list[ContainerDevice] = []
        for dev in reversed(devices):
            reason = ""
            if not dev.health:
                reason = R.CARD_NOT_HEALTH
            elif request.type != GCU:
                reason = R.CARD_TYPE_MISMATCH
            elif dev.used > 0:
                reason = R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT
            if reason:
                reject(dev, reason)
                continue
            if nums > 0:
                nums -= 1
                collected.append(ContainerDevice(dev.index, dev.id, GCU, request.memreq, request.coresreq))
            if nums == 0:
                return FitOutcome(True, collected, "", device_reasons)
        if collected:
            counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = collected_count(self.release_rules, collected)
        return FitOutcome(False, collected, R.gen_reason(counts, len(devices)), device_reasons)


class EnflameDrsVendor(Vendor):
    """Enflame DRS slices (vGCU)."""

    common_word = ENFLAME
    allocated_annotation = "hami.io/enflame-vgpu-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    config_class = EnflameConfig
    resource_fields = ("resource_drs_name", "resource_memory_name", "resource_core_name")

    def under(self, rules: HamiRules) -> Vendor | None:
        """Before v2.10 (``enflame_drs`` off) HAMi's Enflame backend shared whole GCUs by percentage
        (``enflame_shared``)."""
        if rules.enflame_drs:
            return super().under(rules)
        return EnflameSharedVendor().under(rules)

    def node_reads(self) -> NodeReads:
        """The DRS capacity annotation; the slices are named after the node."""
        return NodeReads(registers=(DRS_CAPACITY,), name="id")

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        raw = annotations.get(DRS_CAPACITY)
        if raw is None:
            return [], {}
        return decode_drs(raw, node), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """A slice count (``drs-gcu``), else memory and cores for the smallest covering profile."""
        c = self.config
        present, slices = resource_int(resources, c.resource_drs_name)
        if present and slices is not None and slices > 0:
            if slices > MAX_INT32:
                return None
            return ContainerDeviceRequest(1, ENFLAME, slices, MODE_DIRECT, 0)
        mem_raw = resources.get(c.resource_memory_name)
        core_raw = resources.get(c.resource_core_name)
        if mem_raw is None and core_raw is None:
            return None
        mem = quantity_value(mem_raw) if mem_raw is not None else 0
        core = quantity_value(core_raw) if core_raw is not None else 0
        if mem is None or core is None or mem > MAX_INT32 or core > MAX_INT32:
            return None
        return ContainerDeviceRequest(1, ENFLAME, int32(mem), MODE_BY_SPEC, int32(core))

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """The request's profile (else ``ModeNotFit``), then HAMi's DRS checks per device from the
        end (``drs_reason``), stopping once enough devices were collected."""
        profile = select_profile(devices, request)
        if profile is None or not profile_fits_int32(profile):
            return FitOutcome(False, [], R.gen_reason({MODE_NOT_FIT: 1}, len(devices)))
        memory = profile.memory_gb * 1024
        cores = profile.core_percent
        reject = Rejections()
        nums = request.nums
        collected: list[ContainerDevice] = []
        allows = uuid_check(self.release_rules)
        for dev in reversed(devices):
            why = drs_reason(dev, request, pod.annotations, policy.mutex, memory, cores, allows)
            if why:
                reject(dev, why)
                continue
            if nums > 0:
                nums -= 1
                collected.append(ContainerDevice(dev.index, dev.id, ENFLAME, memory, cores))
            if nums == 0:
                return FitOutcome(True, collected, "", reject.device_reasons)
        if collected:
            reject.counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = len(collected)
        return FitOutcome(False, collected, R.gen_reason(reject.counts, len(devices)), reject.device_reasons)

    def add_usage(self, dev: DeviceUsage, chosen: ContainerDevice) -> str | None:
        """The chosen profile's slices (found by its memory; HAMi carries them in the chosen device's
        ``drsSlice``), clamped to int32 like HAMi's ``clampToInt32``."""
        slices = profile_slices(dev, chosen)
        dev.used = min(dev.used + slices, MAX_INT32)
        dev.usedmem += chosen.usedmem
        dev.usedcores += chosen.usedcores
        return None


def _gcu_capacity(config: EnflameConfig, devices: Sequence[DeviceInfo]) -> dict[str, str]:
    return {config.resource_count_name: str(len(devices))}


GCU_PROFILE = ProfileFields(
    label="Enflame GCU (capacity)",
    device_noun="GCU",
    codec="capacity",
    help="status.capacity enflame.com/gcu = cards (exclusive)",
    render=capacity_renderer(_gcu_capacity),
    fixed={"type": GCU, "count": 1, "devmem": 100, "devcore": 100, "numa": 0},
)


def _render_vgcu(vendor: Vendor, data: RenderInput, count_name: str) -> Registration:
    """A DRS profile as the release's vGCU backend reads it: v2.10's DRS capacity annotation, or
    before v2.10 (``EnflameSharedVendor``) the profile's GCUs counted in ``enflame.com/gcu-count``."""
    if isinstance(vendor, EnflameSharedVendor):
        out = Registration()
        out.capacity[GCU_COUNT] = str(len(data.devices))
        return out
    return DRS_PROFILE.render(vendor, data, count_name)


VGCU_PROFILE = dataclasses.replace(DRS_PROFILE, render=_render_vgcu)

DESCRIPTOR = VendorDescriptor(
    block="enflame",
    order=40,
    config_class=EnflameConfig,
    backends=(
        Backend(EnflameGcuVendor, lambda word: GCU_PROFILE),
        Backend(EnflameDrsVendor, lambda word: VGCU_PROFILE),
    ),
)
