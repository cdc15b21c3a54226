"""The Fit loop most HAMi backends share, and the rules it is built from.

HAMi's vendor packages are near-copies of one Fit loop (``pkg/device/<vendor>/device.go``): walk the
policy-sorted devices from the end (``slices.Backward``), reject a device on the first failing check,
count the reasons, and stop as soon as enough devices were collected. ``common_fit`` is that loop
once, with the switches of ``FitRules`` for the places the vendors differ (which checks they run,
what a chosen device records); a backend's ``fit`` calls it with its rules, or writes its own loop
from ``Rejections`` and ``core_reason`` where HAMi encodes a different one (AMD, MetaX sGPU, Vastai's
die mode, Enflame, Kunlunxin, Ascend, NVIDIA).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sized
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import reasons as R
from ..hami_releases import HamiRules
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceUsage, NodeState
from .base import FitOutcome, PriorDevices, type_allows, uuid_check
from .request_rules import go_div

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = [
    "FitRules",
    "Rejections",
    "core_reason",
    "memory_request",
    "common_fit",
    "same_device_rule",
    "collected_count",
]

_V2_10 = HamiRules()


def collected_count(release: HamiRules, collected: Sized) -> int:
    """What a failed Fit reports as ``AllocatedCardsInsufficientRequest`` (and NVIDIA as
    ``NumaNotFit``) for the devices it collected: each one (v2.10, #2238), else 1 for any (Go's
    ``len(tmpDevs)`` before: the number of device types collected)."""
    return len(collected) if release.insufficient_counts_devices else min(len(collected), 1)


class Rejections:
    """The first failing rule of each device, as every HAMi Fit counts them for ``GenReason``.

    ``counts`` aggregates reasons (HAMi's ``reason`` map); ``device_reasons`` keeps the first reason
    per device for decision records. Call the instance to reject a device.
    """

    __slots__ = ("counts", "device_reasons")

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.device_reasons: dict[str, str] = {}

    def __call__(self, dev: DeviceUsage, reason: str) -> None:
        counts = self.counts
        counts[reason] = counts.get(reason, 0) + 1
        self.device_reasons.setdefault(dev.id, reason)


def core_reason(dev: DeviceUsage, coresreq: int, totalcore: int | None = None) -> str:
    """The NVIDIA-derived core checks after memory: insufficient cores, a whole-card request on a used
    card, a card whose compute is used up for a core-less request; "" when the device passes.

    The order is NVIDIA's (``NvidiaVendor.fit`` uses it too), which the other vendors' Fits copied.
    ``totalcore``: the card's cores when not its registered ones (Ascend soft slicing: 100).
    """
    total = dev.totalcore if totalcore is None else totalcore
    if total - dev.usedcores < coresreq:
        return R.CARD_INSUFFICIENT_CORE
    if total == 100 and coresreq == 100 and dev.used > 0:
        return R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT
    if total != 0 and dev.usedcores == total and coresreq == 0:
        return R.CARD_COMPUTE_UNITS_EXHAUSTED
    return ""


def memory_request(request: ContainerDeviceRequest, dev: DeviceUsage) -> int:
    """The MiB a request takes of ``dev`` in NVIDIA's Fit (Ascend's copies it): its memory, else its
    percentage of the card, else 0."""
    if request.memreq > 0:
        return request.memreq
    if request.mem_percentage_req != 101:
        return go_div(dev.totalmem * request.mem_percentage_req, 100)
    return 0


@dataclass(slots=True, frozen=True)
class FitRules:
    """Where a vendor's Fit departs from the common loop."""

    use_uuid: str  # UUID-selection annotations (``device.CheckUUID``); "" = the backend never selects
    nouse_uuid: str
    use_type: str = ""  # type-selection annotations (``device.CheckType``); "" = none
    nouse_type: str = ""
    type_use_alone: bool = False  # before v2.10 a present use list alone decided the type (Hygon)
    check_memory_and_cores: bool = True  # False: count-only vendors (Biren, Vastai, Metax GPU, GCU)
    clamp_cores: bool = True  # cores above 100 are clamped (the NVIDIA-derived vendors)
    record_memory: bool = True  # False: the chosen device records 0 MiB (Biren/Vastai)


def _resolve_memreq(request: ContainerDeviceRequest, dev: DeviceUsage) -> int:
    memreq = request.memreq if request.memreq > 0 else 0
    if request.mem_percentage_req != 101 and request.memreq == 0:
        memreq = go_div(dev.totalmem * request.mem_percentage_req, 100)
    return memreq


def common_fit(
    vendor: str,
    rules: FitRules,
    devices: list[DeviceUsage],
    request: ContainerDeviceRequest,
    pod: PodView,
    node: NodeState,
    policy: GpuPolicy,
    *,
    accept: Callable[[DeviceUsage, ContainerDeviceRequest], str] | None = None,
    release: HamiRules = _V2_10,
) -> FitOutcome:
    """The shared vendor Fit loop (HAMi v2.10 check order), walking the devices from the end.

    Per device, the first failing check counts its reason: health, request/type selection, UUID
    selection, split count, mutex, memory, cores, exclusive use, exhausted compute, then the vendor's
    own ``accept`` rule (returns a reason or ""). The reason string aggregates with ``gen_reason``
    over the devices handed in; a partial collection adds ``AllocatedCardsInsufficientRequest``
    counted as the devices collected (``len(tmpDevs[k.Type])``). ``hami.io/device-cordon`` is not
    read here: at v2.10 only NVIDIA's Fit reads it.
    """
    annotations = pod.annotations
    nums = request.nums
    coresreq = request.coresreq
    reject = Rejections()
    counts, device_reasons = reject.counts, reject.device_reasons
    collected: list[ContainerDevice] = []
    mutex = policy.mutex

    for dev in reversed(devices):
        why = _device_reason(vendor, rules, dev, request, annotations, mutex, release)
        if why:
            reject(dev, why)
            continue
        memreq = 0
        if rules.check_memory_and_cores:
            if rules.clamp_cores and coresreq > 100:
                coresreq = 100
            memreq = _resolve_memreq(request, dev)
            if dev.totalmem - dev.usedmem < memreq:
                reject(dev, R.CARD_INSUFFICIENT_MEMORY)
                continue
            why = core_reason(dev, coresreq)
            if why:
                reject(dev, why)
                continue
        if accept is not None:
            why = accept(dev, request)
            if why:
                reject(dev, why)
                continue
        if nums > 0:
            collected.append(
                ContainerDevice(dev.index, dev.id, vendor, memreq if rules.record_memory else 0, coresreq)
            )
            nums -= 1
        if nums == 0:
            return FitOutcome(True, collected, "", device_reasons)
    if collected:
        counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = collected_count(release, collected)
    # like HAMi, a failure still reports what was collected (Ascend topology mode builds on it)
    return FitOutcome(False, collected, R.gen_reason(counts, len(devices)), device_reasons)


def _device_reason(
    vendor: str,
    rules: FitRules,
    dev: DeviceUsage,
    request: ContainerDeviceRequest,
    annotations: Mapping[str, str],
    mutex: bool,
    release: HamiRules,
) -> str:
    """The checks before memory and cores: health (every v2.10 Fit on this loop skips an unhealthy
    device first), type, UUID, split count, mutex ("" = passes); the type and UUID lists read as
    ``release`` reads them."""
    if not dev.health:
        return R.CARD_NOT_HEALTH
    if request.type != vendor or (
        rules.use_type
        and not type_allows(
            release, annotations, dev.type, rules.use_type, rules.nouse_type, use_alone=rules.type_use_alone
        )
    ):
        return R.CARD_TYPE_MISMATCH
    if rules.use_uuid and not uuid_check(release)(annotations, dev.id, rules.use_uuid, rules.nouse_uuid):
        return R.CARD_UUID_MISMATCH
    if dev.count <= dev.used:
        return R.CARD_TIME_SLICING_EXHAUSTED
    if mutex and dev.used > 0:
        return R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT
    return ""


def same_device_rule(
    allocated: PriorDevices,
) -> Callable[[DeviceUsage, ContainerDeviceRequest], str] | None:
    """Moore Threads' and MetaX's ``customFilterRule`` ("needs all devices on a device").

    A device is acceptable only if every device this vendor already gave the pod's earlier
    containers (of the same phase: init or app) *is* that device; the container's own earlier picks
    do not count. None when there are no earlier devices (every device passes).
    """
    earlier = {chosen.uuid for container in allocated for chosen in container}
    if not earlier:
        return None
    only = next(iter(earlier)) if len(earlier) == 1 else None

    def accept(dev: DeviceUsage, request: ContainerDeviceRequest) -> str:
        return "" if dev.id == only else R.CARD_NOT_FOUND_CUSTOM_FILTER_RULE

    return accept
