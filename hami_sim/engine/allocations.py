"""What the pods on a live node were allocated, counted as HAMi v2.10.0's scheduler counts it.

HAMi's live filter starts every node from its registered devices and adds, per device, what each
pod assigned to the node holds (``pkg/scheduler/scheduler.go`` ``getNodesUsage``). The pods come
from its informer (``onAddPod``/``onUpdatePod``): a pod counts on the node named by
``hami.io/vgpu-node`` unless it is terminated (Succeeded/Failed); a terminating pod keeps counting
until it is gone. Its devices are each vendor's *allocated* annotation (``SupportDevices``) in the
container-devices format, ``uuid,type,usedmem,usedcores`` with ``:`` after each device and ``;``
after each container (``DecodePodDevices``), collapsed per device (``CollapseInitContainerUsage``).

This module is pure (no Django): the cluster sync feeds it raw Pod JSON and stores the result, and the
extender reads the stored usage. Exclusive use needs nothing special: a pod that took a card whole
holds its cores (100), which is what makes HAMi's Fit answer ``ExclusiveDeviceAllocateConflict`` or
``CardComputeUnitsExhausted`` for the next pod. MIG placements come from
``hami.io/vgpu-mig-allocations`` and mark the device unhealthy where HAMi does.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from .model import MigPlacement, NodeState

__all__ = [
    "ASSIGNED_NODE",
    "MIG_ALLOCATIONS",
    "AllocationError",
    "ContainerDevice",
    "MigAllocation",
    "PodAllocation",
    "DeviceUse",
    "NodeUsage",
    "decode_container_devices",
    "decode_pod_devices",
    "decode_mig_allocations",
    "collapse_init_container_usage",
    "app_containers_only_usage",
    "pod_counts",
    "pod_allocation",
    "node_usage",
    "group_by_node",
    "UsageLike",
    "apply_usage",
]

ASSIGNED_NODE = "hami.io/vgpu-node"  # util.AssignedNodeAnnotations
MIG_ALLOCATIONS = "hami.io/vgpu-mig-allocations"  # nvidia.MigAllocationsAnnotation
HAMI_CORE_MODE = "hami-core"
MIG_MODE = "mig"

_INT32_MAGNITUDE = 1 << 31  # ParseInt(s, 10, 32): -2^31 .. 2^31-1
_UINT32_MAX = (1 << 32) - 1  # ParseUint's bound inside ParseInt(..., 32)


class AllocationError(ValueError):
    """An allocated annotation that does not decode; ``str()`` is HAMi's error text."""


@dataclass(slots=True, frozen=True)
class ContainerDevice:
    """One device entry of one container (HAMi ``ContainerDevice``); ``slots`` 0 = raw (counts 1)."""

    uuid: str
    type: str
    usedmem: int
    usedcores: int
    slots: int = 0


@dataclass(slots=True, frozen=True)
class MigAllocation:
    """One MIG reservation of ``hami.io/vgpu-mig-allocations`` (HAMi ``nvidia.MigAllocation``)."""

    gpu_uuid: str
    profile: str
    placement: MigPlacement
    container_index: int = 0
    device_index: int = 0


@dataclass(slots=True, frozen=True)
class PodAllocation:
    """What one counted pod holds on its node: collapsed devices (one entry per vendor+device)."""

    namespace: str
    name: str
    uid: str
    node: str
    devices: tuple[tuple[str, ContainerDevice], ...] = ()  # (vendor, device)
    mig: tuple[MigAllocation, ...] = ()
    terminating: bool = False
    error: str = ""  # the decode error; a pod with an error holds nothing (HAMi skips it)
    # the pod annotations vendor rules read from the pods on a device (``Vendor.pod_info_annotations``)
    pod_info: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True)
class DeviceUse:
    """One registered device's usage (HAMi ``DeviceUsage.Used/Usedmem/Usedcores/PodInfos``)."""

    used: int = 0
    usedmem: int = 0
    usedcores: int = 0
    mig: list[tuple[str, MigPlacement]] = field(default_factory=list)
    unhealthy: bool = False  # HAMi sets Health=false on MIG/hami-core inconsistencies
    pods: list[str] = field(default_factory=list)  # "namespace/name"
    # ``PodInfos`` as the engine keeps it (``DeviceUsage.pod_infos``): the pods that carry any
    pod_infos: list[dict[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class NodeUsage:
    """Every registered device's usage plus what did not match a registered device (drift)."""

    devices: dict[str, DeviceUse]
    unknown: list[tuple[str, str]] = field(default_factory=list)  # (pod key, device uuid)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (pod key, HAMi's log line)


# -- decoding --------------------------------------------------------------------------------------
def _go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` for the error texts (printable characters as is, the rest escaped)."""
    named = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in named:
            out.append(named[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _parse_int32(text: str) -> int:
    """``strconv.ParseInt(text, 10, 32)`` with Go's error text (``AllocationError``)."""
    if len(text) < 10 and text.isascii() and text.isdigit():  # the common case: a small plain number
        return int(text)
    body = text[1:] if text[:1] in ("+", "-") else text
    n = 0
    if not body:
        raise AllocationError(f"strconv.ParseInt: parsing {_go_quote(text)}: invalid syntax")
    for ch in body:
        if not "0" <= ch <= "9":
            raise AllocationError(f"strconv.ParseInt: parsing {_go_quote(text)}: invalid syntax")
        n = n * 10 + (ord(ch) - 48)
        if n > _UINT32_MAX:  # ParseUint stops at the first overflowing digit
            break
    negative = text[0] == "-"
    if n > _INT32_MAGNITUDE or (n == _INT32_MAGNITUDE and not negative):
        raise AllocationError(f"strconv.ParseInt: parsing {_go_quote(text)}: value out of range")
    return -n if negative else n


def decode_container_devices(text: str) -> list[ContainerDevice]:
    """``DecodeContainerDevices``: ``:``-separated ``uuid,type,usedmem,usedcores`` entries.

    Segments without a comma (the empty one after the trailing ``:``) are skipped; fewer than four
    fields and non-int32 numbers are errors; fields after the fourth are ignored, as in Go.
    """
    devices: list[ContainerDevice] = []
    if not text:
        return devices
    for segment in text.split(":"):
        if "," not in segment:
            continue
        fields = segment.split(",")
        if len(fields) < 4:
            raise AllocationError(
                "pod annotation format error, missing fields, do not use nodeName in task spec"
            )
        try:
            mem = _parse_int32(fields[2])
        except AllocationError as exc:
            raise AllocationError(f"invalid memory field: {exc}") from None
        try:
            cores = _parse_int32(fields[3])
        except AllocationError as exc:
            raise AllocationError(f"invalid core field: {exc}") from None
        devices.append(ContainerDevice(fields[0], fields[1], mem, cores))
    return devices


def decode_pod_devices(
    checklist: Mapping[str, str], annotations: Mapping[str, str]
) -> dict[str, list[list[ContainerDevice]]]:
    """``DecodePodDevices``: per vendor, one device list per ``;``-separated container entry.

    Empty entries are kept (the trailing ``;`` gives one): the index is the container's index, init
    containers first. The first malformed annotation fails the whole pod, as in Go.
    """
    decoded: dict[str, list[list[ContainerDevice]]] = {}
    if not annotations:
        return decoded
    reverse = {key: (i, vendor) for i, (vendor, key) in enumerate(checklist.items())}  # (~25 keys)
    hits = [key for key in annotations if key in reverse]  # a pod has one or two of ~25 keys
    if len(hits) > 1:
        hits.sort(key=lambda key: reverse[key][0])  # the checklist's order decides the first error
    for key in hits:
        decoded[reverse[key][1]] = [decode_container_devices(part) for part in annotations[key].split(";")]
    return decoded


def decode_mig_allocations(text: str) -> list[MigAllocation]:
    """``nvidia.DecodeMigAllocations``: a JSON list; incomplete or duplicate entries are errors."""
    if not text:
        return []
    try:
        raw = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise AllocationError(f"MIG allocations are not JSON: {exc}") from None
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise AllocationError("MIG allocations are not a JSON list")
    out: list[MigAllocation] = []
    seen: set[tuple[int, int]] = set()
    for i, item in enumerate(raw):
        entry = _mig_entry(item, i)
        key = (entry.container_index, entry.device_index)
        if key in seen:
            raise AllocationError(f"duplicate MIG allocation for container {key[0]} device {key[1]}")
        seen.add(key)
        out.append(entry)
    return out


def _mig_entry(item: object, i: int) -> MigAllocation:
    if not isinstance(item, Mapping):
        raise AllocationError(f"MIG allocation {i} is not an object")
    placement = _part(item, "placement")
    values = (item.get("containerIndex", 0), item.get("deviceIndex", 0))
    start, size = placement.get("start", 0), placement.get("size", 0)
    if not all(isinstance(v, int) for v in (*values, start, size)):
        raise AllocationError(f"MIG allocation {i} has a non-integer index or placement")
    gpu, profile = item.get("gpuUUID") or "", item.get("profile") or ""
    if values[0] < 0 or values[1] < 0 or not gpu or not profile or size == 0:
        raise AllocationError(f"MIG allocation {i} is incomplete")
    runtime = sum(
        1 for k in ("migUUID", "gpuInstanceID", "computeInstanceID") if item.get(k) not in (None, "")
    )
    if runtime not in (0, 3):
        raise AllocationError(f"MIG allocation {i} has partial runtime identity")
    return MigAllocation(str(gpu), str(profile), MigPlacement(start, size), values[0], values[1])


# -- collapsing ------------------------------------------------------------------------------------
def collapse_init_container_usage(
    raw: Mapping[str, list[list[ContainerDevice]]], init_count: int
) -> dict[str, list[ContainerDevice]]:
    """``CollapseInitContainerUsage``: per device, the larger of the init containers' peak (one
    slot: they run one after another) and the app containers' sum (one slot each), sorted by UUID."""
    if not init_count:
        return _sum_app_containers(raw)
    out: dict[str, list[ContainerDevice]] = {}
    for vendor, containers in raw.items():
        peak: dict[str, list[int]] = {}
        total: dict[str, list[int]] = {}
        for index, devices in enumerate(containers):
            for dev in devices:
                if index < init_count:
                    cur = peak.setdefault(dev.uuid, [0, 0, 1])
                    cur[0], cur[1] = max(cur[0], dev.usedmem), max(cur[1], dev.usedcores)
                else:
                    cur = total.setdefault(dev.uuid, [0, 0, 0])
                    cur[0], cur[1], cur[2] = cur[0] + dev.usedmem, cur[1] + dev.usedcores, cur[2] + 1
        merged = []
        for uuid in sorted(peak.keys() | total.keys()):
            a, b = peak.get(uuid, [0, 0, 0]), total.get(uuid, [0, 0, 0])
            merged.append(ContainerDevice(uuid, vendor, max(a[0], b[0]), max(a[1], b[1]), max(a[2], b[2], 1)))
        out[vendor] = merged
    return out


def _sum_app_containers(raw: Mapping[str, list[list[ContainerDevice]]]) -> dict[str, list[ContainerDevice]]:
    """``collapse_init_container_usage`` without init containers (nearly every pod): per device the
    sum of the containers' memory and cores, one slot per container, sorted by UUID."""
    out: dict[str, list[ContainerDevice]] = {}
    for vendor, containers in raw.items():
        total: dict[str, list[int]] = {}
        for devices in containers:
            for dev in devices:
                cur = total.get(dev.uuid)
                if cur is None:
                    total[dev.uuid] = [dev.usedmem, dev.usedcores, 1]
                else:
                    cur[0], cur[1], cur[2] = cur[0] + dev.usedmem, cur[1] + dev.usedcores, cur[2] + 1
        out[vendor] = [ContainerDevice(uuid, vendor, m, c, n) for uuid, (m, c, n) in sorted(total.items())]
    return out


def app_containers_only_usage(
    raw: Mapping[str, list[list[ContainerDevice]]], init_count: int
) -> dict[str, list[ContainerDevice]]:
    """``AppContainersOnlyDeviceUsage``: what HAMi shrinks a pod to once its init containers succeeded."""
    return collapse_init_container_usage(
        {vendor: [[] if i < init_count else c for i, c in enumerate(cs)] for vendor, cs in raw.items()},
        0,
    )


# -- pods ------------------------------------------------------------------------------------------
def _part(obj: Mapping, key: str) -> Mapping:
    """``obj[key]`` when it is an object, else empty (API JSON is trusted for shape, not content)."""
    value = obj.get(key)
    if type(value) is dict:  # what JSON gives; skips the ABC check (a relist asks 600,000 times)
        return value
    return value if isinstance(value, Mapping) else {}


def _meta(pod: Mapping) -> Mapping:
    return _part(pod, "metadata")


def pod_counts(pod: Mapping) -> bool:
    """Whether HAMi counts the pod: assigned (``hami.io/vgpu-node``) and not Succeeded/Failed."""
    if ASSIGNED_NODE not in _part(_meta(pod), "annotations"):
        return False
    return _part(pod, "status").get("phase") not in ("Succeeded", "Failed")


def _init_containers_succeeded(pod: Mapping) -> bool:
    """``util.AllInitContainersSucceeded``: every init container terminated with exit code 0."""
    statuses = _part(pod, "status").get("initContainerStatuses") or []
    if not isinstance(statuses, list) or not statuses:
        return False
    for s in statuses:
        terminated = ((s or {}).get("state") or {}).get("terminated") if isinstance(s, Mapping) else None
        if not isinstance(terminated, Mapping) or terminated.get("exitCode", 0) != 0:
            return False
    return True


def pod_allocation(
    pod: Mapping, checklist: Mapping[str, str], pod_info_keys: Collection[str] = ()
) -> PodAllocation | None:
    """The pod's collapsed allocation, or ``None`` when HAMi does not count it at all.

    ``pod_info_keys``: the pod annotations to keep for the vendor rules that read the pods on a
    device (``vendors.pod_info_annotations()``).

    A pod whose annotation does not decode comes back with ``error`` set and no devices: HAMi skips
    it (``onAddPod`` logs and returns), and the caller records the error as a finding.
    Once all init containers succeeded HAMi shrinks a known pod to its app containers
    (``onUpdatePod``); a stateless relist sees that final state, so it counts app containers only.
    """
    if not pod_counts(pod):
        return None
    meta = _meta(pod)
    annotations = _part(meta, "annotations")
    init_count = len(_part(pod, "spec").get("initContainers") or [])
    error = ""
    devices: tuple[tuple[str, ContainerDevice], ...] = ()
    mig: tuple[MigAllocation, ...] = ()
    try:
        raw = decode_pod_devices(checklist, annotations)
    except AllocationError as exc:
        error = str(exc)
    else:
        shrink = init_count and _init_containers_succeeded(pod)
        collapsed = (app_containers_only_usage if shrink else collapse_init_container_usage)(raw, init_count)
        devices = tuple((vendor, dev) for vendor, devs in collapsed.items() for dev in devs)
        mig_text = annotations.get(MIG_ALLOCATIONS)
        if mig_text:
            try:  # HAMi ignores MIG allocations it cannot decode (getNodesUsage)
                mig = tuple(decode_mig_allocations(str(mig_text)))
            except AllocationError:
                mig = ()
    kept = tuple(sorted((k, str(annotations[k])) for k in pod_info_keys if k in annotations))
    return PodAllocation(
        str(meta.get("namespace") or "default"),
        str(meta.get("name") or ""),
        str(meta.get("uid") or ""),
        str(annotations.get(ASSIGNED_NODE) or ""),
        devices,
        mig,
        meta.get("deletionTimestamp") is not None,
        error,
        kept,
    )


# -- nodes -----------------------------------------------------------------------------------------
def node_usage(registered: Mapping[str, str], pods: Iterable[PodAllocation]) -> NodeUsage:
    """``getNodesUsage`` for one node: ``registered`` is device UUID -> mode, ``pods`` its pods.

    Each pod device adds its slots (at least one), memory and cores to the registered device with
    that UUID; a UUID the node does not register is listed in ``unknown``. MIG reservations go to
    the device they name, in order; HAMi marks the device unhealthy when they disagree with its mode.
    """
    usage = NodeUsage({uuid: DeviceUse() for uuid in registered})
    for pod in pods:
        if pod.error:
            continue
        info = dict(pod.pod_info) if pod.pod_info else None
        pending: dict[str, list[MigAllocation]] = {}
        for alloc in pod.mig:
            pending.setdefault(alloc.gpu_uuid, []).append(alloc)
        for _vendor, dev in pod.devices:
            use = usage.devices.get(dev.uuid)
            if use is None:
                usage.unknown.append((pod.key, dev.uuid))
                continue
            use.used += max(dev.slots, 1)
            use.usedmem += dev.usedmem
            use.usedcores += dev.usedcores
            use.pods.append(pod.key)
            if info is not None:
                use.pod_infos.append(info)
            _count_mig(usage, pod, dev.uuid, registered[dev.uuid], pending)
        _leftover_mig(usage, pod, registered, pending)
    return usage


def _count_mig(
    usage: NodeUsage, pod: PodAllocation, uuid: str, mode: str, pending: dict[str, list[MigAllocation]]
) -> None:
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


def _leftover_mig(
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


def group_by_node(pods: Sequence[PodAllocation]) -> dict[str, list[PodAllocation]]:
    """Counted pods per node name (the ``hami.io/vgpu-node`` value)."""
    out: dict[str, list[PodAllocation]] = {}
    for pod in pods:
        out.setdefault(pod.node, []).append(pod)
    return out


class UsageLike:  # the fields ``apply_usage`` reads (``DeviceUse`` and the store's ``DeviceLive``)
    used: int
    usedmem: int
    usedcores: int
    mig: Sequence[tuple[str, MigPlacement]]
    unhealthy: bool
    pod_infos: Sequence[Mapping[str, str]]


def apply_usage(state: NodeState, usage: Mapping[str, UsageLike], *, in_place: bool = False) -> NodeState:
    """A copy of a node's zero-usage state carrying its live usage, as ``getNodesUsage`` builds it
    (``in_place``: ``state`` itself, when the caller built it for this alone).

    Devices are matched by UUID; a device without usage stays at zero. A device HAMi marked unhealthy
    while counting (MIG inconsistencies) loses its health, which is what HAMi's Fit then sees. The
    pods a vendor rule reads on a device (``pod_infos``) come along (HAMi ``PodInfos``).
    """
    out = state if in_place else state.copy()
    for dev in out.devices:
        use = usage.get(dev.id)
        if use is None:
            continue
        dev.used += use.used
        dev.usedmem += use.usedmem
        dev.usedcores += use.usedcores
        if use.mig:
            dev.mig_in_use.extend(use.mig)
        if use.unhealthy:
            dev.health = False
        if use.pod_infos:
            dev.pod_infos = (*dev.pod_infos, *use.pod_infos)
    return out
