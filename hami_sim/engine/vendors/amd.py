"""AMD Instinct GPUs (HAMi ``pkg/device/amd``): JSON registration, CU-percentage sharing.

``hami.io/node-amd-register`` carries the device plugin's ``[]DeviceInfo`` (devmem MiB, devcore =
compute units, count = split count). Requests are read from **limits only**: ``amd.com/gpu`` (1..
MaxInt32), ``amd.com/gpumem`` MiB (0..MaxInt32; absent or 0 = the whole card) and ``amd.com/gpucores``
as a CU percentage 1..100 (absent = 100); an out-of-range value drops the container's request.
Fit turns the percentage into CUs (``devcore x pct / 100``, at least 1) and a whole-memory request
into a whole-card CU request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import reasons as R
from ..hami_releases import HamiRules
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .amd_cards import AmdCardsVendor
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor, uuid_check
from .fit_loop import Rejections, collected_count
from .node_codecs import json_devices
from .registry import (
    CUSTOMINFO_HELP,
    MEMORY_PANEL,
    SLOTS_PANEL,
    Backend,
    CapacityPanel,
    ProfileFields,
    Registration,
    RenderInput,
    VendorDescriptor,
    render_json,
)
from .request_rules import MAX_INT32, go_div, quantity_int
from .selection import UuidCheck

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = ["DESCRIPTOR", "AmdConfig", "AmdVendor", "AMD", "AMD_REGISTER"]

AMD = "AMD"
AMD_REGISTER = "hami.io/node-amd-register"
AMD_USE_TYPE = "amd.com/use-gputype"
AMD_NOUSE_TYPE = "amd.com/nouse-gputype"
AMD_USE_UUID = "amd.com/use-gpu-uuid"
AMD_NOUSE_UUID = "amd.com/nouse-gpu-uuid"


@dataclass(slots=True, frozen=True)
class AmdConfig:
    """The ``amd:`` block of HAMi's device config."""

    resource_count_name: str = "amd.com/gpu"
    resource_memory_name: str = "amd.com/gpumem"
    resource_core_name: str = "amd.com/gpucores"


def _listed(value: str | None, card: str) -> bool | None:
    """None when the annotation is absent or blank; else whether a non-empty entry is in ``card``."""
    if value is None or not value.strip():
        return None
    return any(entry.strip() and entry.strip().upper() in card for entry in value.split(","))


def check_amd_type(annotations: Mapping[str, str], card_type: str) -> bool:
    """``checkAMDType``: upper-cased substring selection by ``amd.com/use-gputype`` /
    ``nouse-gputype``. Blank entries never match; a use list that is not blank constrains even when
    all its entries are blank (``", "`` selects nothing), unlike the shared ``CheckType``."""
    card = card_type.upper()
    if _listed(annotations.get(AMD_USE_TYPE), card) is False:
        return False
    return _listed(annotations.get(AMD_NOUSE_TYPE), card) is not True


def _limit(limits: Mapping[str, object], name: str, low: int, high: int, default: int) -> int | None:
    """An optional limit (``default`` when unnamed or absent) that must be an integer in low..high
    (None: the container's request is dropped)."""
    if not name or limits.get(name) is None:
        return default
    value = quantity_int(limits[name])
    return value if value is not None and low <= value <= high else None


class AmdVendor(Vendor):
    common_word = AMD
    allocated_annotation = (
        "hami.io/amd-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    )
    config_class = AmdConfig
    resource_fields = ("resource_count_name", "resource_memory_name", "resource_core_name")
    drop_unset_names = True  # AMD's backend skips unset names (see container_request)
    register_key = AMD_REGISTER

    def node_reads(self) -> NodeReads:
        return NodeReads(registers=(AMD_REGISTER,), json_devices=True)

    def under(self, rules: HamiRules) -> Vendor | None:
        """Before v2.10 (``amd_vgpu`` off) HAMi's AMD backend gave whole cards from capacity
        (``amd_cards``), configured by the same count and memory names."""
        if rules.amd_vgpu:
            return super().under(rules)
        return AmdCardsVendor(self.config).under(rules)

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        return json_devices(annotations, AMD_REGISTER, AMD, "no gpu found on node"), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        c = self.config
        limits = resources.limits  # AMD reads limits only
        raw = limits.get(c.resource_count_name)
        if raw is None:
            return None
        nums = quantity_int(raw)
        if nums is None or nums <= 0 or nums > MAX_INT32:
            return None
        memnum = _limit(limits, c.resource_memory_name, 0, MAX_INT32, 0)
        cores = _limit(limits, c.resource_core_name, 1, 100, 100)
        if memnum is None or cores is None:
            return None
        return ContainerDeviceRequest(nums, AMD, memnum, 0, cores)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """AMD's own Fit, not ``common_fit``: health first, a case-insensitive type, memory 0 = the whole
        card, cores as a CU percentage (a whole-memory request takes every CU), the model recorded as
        the type. v2.10 AMD does not read ``hami.io/device-cordon`` (NVIDIA's only)."""
        annotations = pod.annotations
        nums = request.nums
        reject = Rejections()
        counts, device_reasons = reject.counts, reject.device_reasons
        collected: list[ContainerDevice] = []
        allows = uuid_check(self.release_rules)

        for dev in reversed(devices):
            reason = _selection_reason(dev, request, annotations, policy, allows)
            if reason is None:
                reason, memreq, corereq = _slice(dev, request)
            if reason is not None:
                reject(dev, reason)
                continue
            if nums > 0:
                nums -= 1
                # HAMi records the registered model as the allocation's type
                collected.append(ContainerDevice(dev.index, dev.id, dev.type, memreq, corereq))
            if nums == 0:
                return FitOutcome(True, collected, "", device_reasons)
        if collected:
            counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = collected_count(self.release_rules, collected)
        return FitOutcome(False, [], R.gen_reason(counts, len(devices)), device_reasons)


def _selection_reason(
    dev: DeviceUsage,
    request: ContainerDeviceRequest,
    annotations: Mapping[str, str],
    policy: GpuPolicy,
    allows: UuidCheck,
) -> str | None:
    """The first of AMD's card checks (health, type, UUID, slots, mutex) that rejects ``dev``."""
    if not dev.health:
        return R.CARD_NOT_HEALTH
    if request.type.lower() != AMD.lower() or not check_amd_type(annotations, dev.type):
        return R.CARD_TYPE_MISMATCH
    if not allows(annotations, dev.id, AMD_USE_UUID, AMD_NOUSE_UUID):
        return R.CARD_UUID_MISMATCH
    if dev.count <= dev.used:
        return R.CARD_TIME_SLICING_EXHAUSTED
    if policy.mutex and dev.used > 0:
        return R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT
    return None


def _slice(dev: DeviceUsage, request: ContainerDeviceRequest) -> tuple[str | None, int, int]:
    """(rejection or None, memory, compute units) of the slice ``dev`` would give: memory 0 is the
    whole card, cores are a CU percentage, and a whole-memory request takes every CU."""
    memreq = request.memreq
    if memreq <= 0 and dev.totalmem > 0:
        memreq = dev.totalmem
    if dev.totalmem - dev.usedmem < memreq:
        return R.CARD_INSUFFICIENT_MEMORY, memreq, 0
    corereq = 0
    if request.coresreq > 0:
        if dev.totalcore <= 0:
            return R.CARD_INSUFFICIENT_CORE, memreq, 0
        corereq = min(max(go_div(dev.totalcore * request.coresreq, 100), 1), dev.totalcore)
    elif dev.totalmem > 0 and memreq >= dev.totalmem:
        corereq = dev.totalcore
    if dev.totalcore - dev.usedcores < corereq:
        return R.CARD_INSUFFICIENT_CORE, memreq, corereq
    return None, memreq, corereq


def _render(vendor: Vendor, data: RenderInput, count_name: str) -> Registration:
    """The registration for the release's AMD backend: v2.10's JSON annotation (with the slots in
    capacity), or before v2.10 (``AmdCardsVendor``) the whole cards alone, counted in capacity as
    AMD's device plugin advertises them."""
    if isinstance(vendor, AmdCardsVendor):
        out = Registration()
        out.capacity[count_name] = str(len(data.devices))
        return out
    return render_json(vendor, data, count_name)


PROFILE = ProfileFields(
    label="AMD GPU",
    panels=(MEMORY_PANEL, CapacityPanel("compute units", "devcore", "usedcores"), SLOTS_PANEL),
    codec="json",
    help="hami.io/node-amd-register JSON; devcore = compute units",
    render=_render,
    extras={"custominfo": CUSTOMINFO_HELP},
)

DESCRIPTOR = VendorDescriptor(
    block="amd", order=90, config_class=AmdConfig, backends=(Backend(AmdVendor, lambda word: PROFILE),)
)
