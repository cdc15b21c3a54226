"""What most non-NVIDIA HAMi backends share: registration readers, request helpers and the common Fit.

HAMi's vendor packages are near-copies of one Fit loop (``pkg/device/<vendor>/device.go``): walk the
policy-sorted devices from the end (``slices.Backward``), reject a device on the first failing check,
count the reasons, and stop as soon as enough devices were collected. ``common_fit`` is that loop
once, with switches for the places the vendors differ (which checks they run, what a chosen device
records), so each vendor module only states its differences.

The same goes for the code around Fit: ``ConfiguredVendor`` (config block -> resource names),
``RegisteredVendor`` / ``ChipVendor`` (one registration annotation), ``CapacityVendor`` (devices
synthesised from ``status.capacity``), ``CountRequestVendor`` / ``WholeDeviceVendor`` (count-only
requests) and the request helpers (``requested_count``, ``resource_int32``,
``count_memory_core_request``) each hold one HAMi rule that several backends repeat. Where two
backends only look alike but HAMi encodes different rules (AMD's and MetaX sGPU's Fits, AWS Neuron's
exact UUID lists, Vastai's die mode), the vendor module keeps its own code and says why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from .. import reasons as R
from ..annotations import AnnotationError, decode_device_json, decode_legacy
from ..model import (
    ContainerDevice,
    ContainerDeviceRequest,
    DeviceInfo,
    DeviceUsage,
    InventoryError,
    NodeState,
)
from ..quantity import QuantityError, as_int64, parse_quantity
from .base import FitOutcome, PriorDevices, ResourceGetter, Vendor, check_type, check_uuid

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = [
    "MAX_INT32",
    "FitRules",
    "RegisteredVendor",
    "CapacityVendor",
    "capacity_int",
    "node_name",
    "node_labels",
    "quantity_int",
    "resource_int",
    "go_div",
    "int32",
    "common_fit",
    "check_uuid_exact",
    "same_device_rule",
    "json_devices",
    "legacy_devices",
]

MAX_INT32 = 2**31 - 1


class CountConfig(Protocol):
    """A config block naming the pod resource that counts devices (every count-request vendor)."""

    @property
    def resource_count_name(self) -> str: ...


class CountMemoryCoreConfig(CountConfig, Protocol):
    """A config block with count, memory and core resource names (Cambricon, Hygon, Iluvatar)."""

    @property
    def resource_memory_name(self) -> str: ...

    @property
    def resource_core_name(self) -> str: ...


class ChipConfig(Protocol):
    """One chip entry of a per-chip family (Ascend ``vnpus:``, Iluvatar ``iluvatars:``)."""

    @property
    def common_word(self) -> str: ...


#: a vendor's config block (a frozen dataclass of HAMi device-config fields)
C = TypeVar("C")
CountC = TypeVar("CountC", bound=CountConfig)
ChipC = TypeVar("ChipC", bound=ChipConfig)


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


def node_name(node: Mapping) -> str:
    meta = node.get("metadata") if isinstance(node, Mapping) else None
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def node_labels(node: Mapping) -> Mapping[str, str]:
    meta = node.get("metadata") if isinstance(node, Mapping) else None
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def _capacity(node: Mapping) -> Mapping:
    status = node.get("status") if isinstance(node, Mapping) else None
    capacity = status.get("capacity") if isinstance(status, Mapping) else None
    return capacity if isinstance(capacity, Mapping) else {}


def capacity_raw(node: Mapping, name: str) -> object:
    return _capacity(node).get(name)


def capacity_int(node: Mapping, name: str) -> int:
    """``node.Status.Capacity.Name(name, DecimalSI).AsInt64()``: a missing or bad value reads as 0."""
    value = quantity_int(capacity_raw(node, name))
    return value if value is not None else 0


def check_uuid_exact(annotations: Mapping[str, str], dev_id: str, use_key: str, nouse_key: str) -> bool:
    """A vendor's own ``checkUUID``: a present ``use`` list must name the device exactly (no trimming,
    an empty value matches nothing); otherwise a present ``nouse`` list must not name it."""
    if use_key in annotations:
        return dev_id in annotations[use_key].split(",")
    if nouse_key in annotations:
        return dev_id not in annotations[nouse_key].split(",")
    return True


def _registered_devices(
    annotations: Mapping[str, str],
    key: str,
    decode: Callable[[str, str], list[DeviceInfo]],
    vendor: str,
    empty_error: str,
) -> list[DeviceInfo]:
    """One registration annotation decoded by ``decode``; [] when absent, ``InventoryError`` when bad."""
    raw = annotations.get(key)
    if raw is None:
        return []
    try:
        devices = decode(raw, vendor)
    except AnnotationError as exc:
        raise InventoryError(key, str(exc)) from None
    if not devices:
        raise InventoryError(key, empty_error)
    return devices


def json_devices(annotations: Mapping[str, str], key: str, vendor: str, empty_error: str) -> list[DeviceInfo]:
    """A JSON ``[]DeviceInfo`` registration (``UnMarshalNodeDevices``); [] when the key is absent."""
    return _registered_devices(annotations, key, decode_device_json, vendor, empty_error)


def legacy_devices(annotations: Mapping[str, str], key: str, vendor: str) -> list[DeviceInfo]:
    """A legacy colon/comma registration (``DecodeNodeDevices``, Hygon and Iluvatar at v2.10)."""
    return _registered_devices(annotations, key, decode_legacy, vendor, "no gpu found on node")


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


def core_reason(dev: DeviceUsage, coresreq: int) -> str:
    """The NVIDIA-derived core checks after memory: insufficient cores, a whole-card request on a used
    card, a card whose compute is used up for a core-less request; "" when the device passes.

    The order is NVIDIA's (``NvidiaVendor.fit`` uses it too), which the other vendors' Fits copied.
    """
    if dev.totalcore - dev.usedcores < coresreq:
        return R.CARD_INSUFFICIENT_CORE
    if dev.totalcore == 100 and coresreq == 100 and dev.used > 0:
        return R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT
    if dev.totalcore != 0 and dev.usedcores == dev.totalcore and coresreq == 0:
        return R.CARD_COMPUTE_UNITS_EXHAUSTED
    return ""


@dataclass(slots=True, frozen=True)
class FitRules:
    """Where a vendor's Fit departs from the common loop."""

    use_uuid: str  # UUID-selection annotations (``device.CheckUUID``); "" = the backend never selects
    nouse_uuid: str
    use_type: str = ""  # type-selection annotations (``device.CheckType``); "" = none
    nouse_type: str = ""
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
        why = _device_reason(vendor, rules, dev, request, annotations, mutex)
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
        counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = len(collected)
    # like HAMi, a failure still reports what was collected (Ascend topology mode builds on it)
    return FitOutcome(False, collected, R.gen_reason(counts, len(devices)), device_reasons)


def _device_reason(
    vendor: str,
    rules: FitRules,
    dev: DeviceUsage,
    request: ContainerDeviceRequest,
    annotations: Mapping[str, str],
    mutex: bool,
) -> str:
    """The checks before memory and cores: health (every v2.10 Fit on this loop skips an unhealthy
    device first), type, UUID, split count, mutex ("" = passes)."""
    if not dev.health:
        return R.CARD_NOT_HEALTH
    if request.type != vendor or (
        rules.use_type and not check_type(annotations, dev.type, rules.use_type, rules.nouse_type)
    ):
        return R.CARD_TYPE_MISMATCH
    if rules.use_uuid and not check_uuid(annotations, dev.id, rules.use_uuid, rules.nouse_uuid):
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


class ConfiguredVendor(Vendor, Generic[C]):
    """A vendor configured by one HAMi device-config block (a frozen dataclass of resource names).

    Generic over the config class, so each backend reads its own fields with their types.
    ``resource_fields`` names the config fields holding pod resource names (``resource_names``);
    ``capacity_fields`` those also read from ``node.status.capacity`` (capacity vendors). Vendors whose
    HAMi backend treats an unset (empty) name as "not configured" set ``drop_unset_names``; the others
    report every configured name as HAMi's ``ResourceNames`` does.
    """

    config_class: type[C]
    resource_fields: tuple[str, ...] = ()
    capacity_fields: tuple[str, ...] = ()
    drop_unset_names: bool = False

    def __init__(self, config: C | None = None) -> None:
        self.config: C = config if config is not None else self.config_class()
        if self.capacity_fields:
            self.capacity_names = tuple(getattr(self.config, name) for name in self.capacity_fields)

    def resource_names(self) -> frozenset[str]:
        names = (getattr(self.config, name) for name in self.resource_fields)
        if self.drop_unset_names:
            return frozenset(n for n in names if n)
        return frozenset(names)


class CommonFitVendor(Vendor):
    """A vendor whose Fit is ``common_fit`` with its ``rules`` (no vendor-specific hook)."""

    rules: FitRules

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        return common_fit(self.common_word, self.rules, devices, request, pod, node, policy)


class RegisteredVendor(CommonFitVendor):
    """A vendor whose devices come from one registration annotation (JSON or legacy format).

    Subclasses set ``common_word``, ``register_key`` and ``rules`` and implement ``container_request``.
    """

    register_key: str = ""
    legacy: bool = False
    empty_error: str = "no gpu found on node"

    def inventory_key(self, annotations: Mapping[str, str], node: Mapping) -> tuple:
        return (self.register_key, annotations.get(self.register_key))

    def inventory_annotations(self) -> tuple[str, ...] | None:
        return (self.register_key,)

    def registration_sources(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (self.register_key,), ()

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        if self.legacy:
            devices = legacy_devices(annotations, self.register_key, self.common_word)
        else:
            devices = json_devices(annotations, self.register_key, self.common_word, self.empty_error)
        for dev in devices:
            self.normalise(dev)
        return devices, {}

    def normalise(self, dev: DeviceInfo) -> None:
        """Per-vendor fix-ups HAMi applies after decoding (e.g. Biren/Vastai force devcore 100)."""


class ChipVendor(ConfiguredVendor[ChipC], RegisteredVendor):
    """One backend per configured chip (Ascend ``vnpus:``, Iluvatar ``iluvatars:``), named by the chip.

    The registration key follows ``register_format``; UUID selection is ``hami.io/use-<chip>-uuid`` /
    ``hami.io/no-use-<chip>-uuid`` for both families.
    """

    register_format: str = ""

    def __init__(self, config: ChipC) -> None:  # a chip is always configured: no default config
        self.config = config
        cw = config.common_word
        self.common_word = cw
        self.register_key = self.register_format.format(cw)
        self.rules = FitRules(f"hami.io/use-{cw}-uuid", f"hami.io/no-use-{cw}-uuid")


class CapacityVendor(CommonFitVendor):
    """A vendor whose devices HAMi synthesises from ``node.status.capacity`` (no annotation).

    The synthesised device IDs embed the node name, so the inventory key carries the name whenever
    the vendor's capacity is present (and only then, so NVIDIA-only templates keep sharing a cache).
    """

    capacity_names: tuple[str, ...] = ()

    def registration_sources(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (), tuple(self.capacity_names)

    def inventory_key(self, annotations: Mapping[str, str], node: Mapping) -> tuple:
        values = tuple(capacity_raw(node, name) for name in self.capacity_names)
        if all(v is None for v in values):
            return (self.common_word,)
        return (self.common_word, node_name(node), values)

    def capacity_devices(
        self, node: Mapping, name: str, *, id_infix: str, split: int, devmem: int, devcore: int
    ) -> list[DeviceInfo]:
        """``capacity[name]`` identical devices of this vendor (none when it is absent or not positive)."""
        cards = capacity_int(node, name)
        if cards <= 0:
            return []
        return synthesise(
            node,
            cards,
            vendor=self.common_word,
            id_infix=id_infix,
            split=split,
            devmem=devmem,
            devcore=devcore,
            source=name,
        )

    def core_split_devices(
        self, node: Mapping, config: CountMemoryCoreConfig, *, per_card: int, memory_unit: int, id_infix: str
    ) -> list[DeviceInfo]:
        """Cambricon's and Moore Threads' shared layout: ``capacity[cores] / per_card`` cards (rounded
        up: HAMi loops while ``i * per_card < cores``), split count 100, ``per_card`` cores each and
        ``capacity[memory] x memory_unit`` MiB spread over them (int32, as HAMi computes it)."""
        c = config
        cores = capacity_int(node, c.resource_core_name)
        if cores <= 0:
            return []
        memory = capacity_int(node, c.resource_memory_name)
        return synthesise(
            node,
            -(-cores // per_card),
            vendor=self.common_word,
            id_infix=id_infix,
            split=100,
            devmem=int32(memory * memory_unit * per_card // cores),
            devcore=per_card,
            source=c.resource_core_name,
        )


class SameDeviceVendor(CapacityVendor):
    """A capacity vendor whose Fit adds HAMi's "needs all devices on a device" ``customFilterRule``
    (Moore Threads, MetaX GPU): ``fit`` reads the devices earlier containers of the pod got."""

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        return common_fit(
            self.common_word,
            self.rules,
            devices,
            request,
            pod,
            node,
            policy,
            accept=same_device_rule(allocated),
        )


class CountRequestVendor(ConfiguredVendor[CountC]):
    """A vendor whose only pod resource is a device count (``resource_count_name``): every container
    asking ``N`` gets the fixed (memory, memory %, cores) of ``count_request`` per device."""

    resource_fields = ("resource_count_name",)
    #: (memreq, mem_percentage_req, coresreq) of every request
    count_request: tuple[int, int, int] = (0, 100, 0)

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        nums = requested_count(resources, self.config.resource_count_name)
        if nums is None:
            return None
        return ContainerDeviceRequest(nums, self.common_word, *self.count_request)


class WholeDeviceVendor(CountRequestVendor[CountC], RegisteredVendor):
    """The count-only JSON vendors (Biren, Vastai): a ``[]DeviceInfo`` registration whose ``devcore``
    HAMi forces to 100, and ``N`` whole devices per request (0 MiB, 100 %, 0 cores)."""

    def normalise(self, dev: DeviceInfo) -> None:
        dev.devcore = 100


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


def count_memory_core_request(
    resources: ResourceGetter,
    vendor: str,
    config: CountMemoryCoreConfig,
    *,
    memory_scale: int = 1,
    default_cores: int = 0,
) -> ContainerDeviceRequest | None:
    """The request of the count + memory + cores vendors (Cambricon, Hygon, Iluvatar): ``N`` devices
    of ``memory x memory_scale`` MiB each (none: the whole card) and a cores percentage
    (``default_cores`` when absent), all ``int32``; None when the container asks no count.

    ``config`` carries ``resource_count_name``, ``resource_memory_name`` and ``resource_core_name``.
    """
    nums = requested_count(resources, config.resource_count_name)
    if nums is None:
        return None
    memnum = resource_int32(resources, config.resource_memory_name, scale=memory_scale)
    corenum = resource_int32(resources, config.resource_core_name, default=default_cores)
    return sliced_request(nums, vendor, memnum, corenum)


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


MAX_SYNTHESISED_DEVICES = 1024


def check_device_limit(count: int, vendor: str, source: str) -> None:
    """Refuse a capacity that would make more than ``MAX_SYNTHESISED_DEVICES`` devices.

    No real node has that many accelerators; a typo such as ``8e9`` must not make the extender
    allocate billions of devices.
    """
    if count > MAX_SYNTHESISED_DEVICES:
        raise InventoryError(
            f"status.capacity[{source}]",
            f"{count} {vendor} devices; hami-sim simulates at most {MAX_SYNTHESISED_DEVICES} per node",
        )


def synthesise(
    node: Mapping,
    count: int,
    *,
    vendor: str,
    id_infix: str,
    split: int,
    devmem: int,
    devcore: int,
    source: str = "",
    custom_info: dict | None = None,
) -> list[DeviceInfo]:
    """``count`` identical healthy devices named ``<node>-<infix>-<i>``, as the capacity vendors do.

    ``custom_info`` (shared read-only by every device) defaults to none. Over
    ``MAX_SYNTHESISED_DEVICES`` devices are refused (``check_device_limit``).
    """
    check_device_limit(count, vendor, source or vendor)
    name = node_name(node)
    return [
        DeviceInfo(
            id=f"{name}-{id_infix}-{i}",
            index=i,
            count=split,
            devmem=devmem,
            devcore=devcore,
            type=vendor,
            health=True,
            device_vendor=vendor,
            custom_info=custom_info,
        )
        for i in range(count)
    ]


__all__ += [
    "capacity_raw",
    "synthesise",
    "check_device_limit",
    "MAX_SYNTHESISED_DEVICES",
    "Rejections",
    "core_reason",
    "ConfiguredVendor",
    "CountConfig",
    "CountMemoryCoreConfig",
    "ChipConfig",
    "CommonFitVendor",
    "ChipVendor",
    "SameDeviceVendor",
    "CountRequestVendor",
    "WholeDeviceVendor",
    "requested_count",
    "resource_int32",
    "sliced_request",
    "count_memory_core_request",
    "plain_memory_request",
    "resource_value",
]
