"""What the pods on a live node were allocated, counted as HAMi v2.10.0's scheduler counts it.

HAMi's live filter starts every node from its registered devices and adds, per device, what each
pod assigned to the node holds (``pkg/scheduler/scheduler.go`` ``getNodesUsage``). The pods come
from its informer (``onAddPod``/``onUpdatePod``): a pod counts on the node named by
``hami.io/vgpu-node`` unless it is terminated (Succeeded/Failed); a terminating pod keeps counting
until it is gone. Its devices are each vendor's *allocated* annotation (``SupportDevices``) in the
container-devices format (``pod_devices``, re-exported here), collapsed per device
(``CollapseInitContainerUsage``).

This module is pure (no Django): the cluster sync feeds it raw Pod JSON and stores the result, and the
extender reads the stored usage. Exclusive use needs nothing special: a pod that took a card whole
holds its cores (100), which is what makes HAMi's Fit answer ``ExclusiveDeviceAllocateConflict`` or
``CardComputeUnitsExhausted`` for the next pod. What a backend's pods reserve beside their
allocated annotation is that backend's rule (``Vendor.reservations``: NVIDIA's MIG placements,
``vendors/nvidia_mig.py``), decoded and counted here through the registry.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .hami_releases import HamiRules
from .model import MigPlacement, NodeState
from .pod_devices import AllocationError, ContainerDevice, decode_container_devices, decode_pod_devices
from .vendors import reservation_rules
from .vendors.nvidia_mig import MigAllocation
from .vendors.nvidia_mig_templates import base_uuid

__all__ = [
    "ASSIGNED_NODE",
    "AllocationError",
    "ContainerDevice",
    "MigAllocation",
    "PodAllocation",
    "DeviceUse",
    "NodeUsage",
    "decode_container_devices",
    "decode_pod_devices",
    "collapse_init_container_usage",
    "app_containers_only_usage",
    "pod_counts",
    "pod_allocation",
    "node_usage",
    "group_by_node",
    "LiveUsageLike",
    "UsageLike",
    "apply_usage",
]

ASSIGNED_NODE = "hami.io/vgpu-node"  # util.AssignedNodeAnnotations


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
    pod: Mapping, checklist: Mapping[str, str], pod_info_keys: Collection[str] = (), *, init_peak: bool = True
) -> PodAllocation | None:
    """The pod's collapsed allocation, or ``None`` when HAMi does not count it at all.

    ``pod_info_keys``: the pod annotations to keep for the vendor rules that read the pods on a
    device (``vendors.pod_info_annotations()``).

    A pod whose annotation does not decode comes back with ``error`` set and no devices: HAMi skips
    it (``onAddPod`` logs and returns), and the caller records the error as a finding.
    Once all init containers succeeded HAMi shrinks a known pod to its app containers
    (``onUpdatePod``); a stateless relist sees that final state, so it counts app containers only.
    ``init_peak`` off (v2.9 and v2.8, ``HamiRules.init_containers`` not ``apart``): ``getNodesUsage``
    adds up every container's devices, init containers' too (one slot each), and never shrinks.
    """
    if not pod_counts(pod):
        return None
    meta = _meta(pod)
    annotations = _part(meta, "annotations")
    error = ""
    devices: tuple[tuple[str, ContainerDevice], ...] = ()
    reserved: tuple[MigAllocation, ...] = ()
    try:
        devices = _counted_devices(pod, checklist, annotations, init_peak)
    except AllocationError as exc:
        error = str(exc)
    else:
        reserved = _reserved(annotations)
    kept = tuple(sorted((k, str(annotations[k])) for k in pod_info_keys if k in annotations))
    return PodAllocation(
        str(meta.get("namespace") or "default"),
        str(meta.get("name") or ""),
        str(meta.get("uid") or ""),
        str(annotations.get(ASSIGNED_NODE) or ""),
        devices,
        reserved,
        meta.get("deletionTimestamp") is not None,
        error,
        kept,
    )


def _counted_devices(
    pod: Mapping, checklist: Mapping[str, str], annotations: Mapping[str, str], init_peak: bool
) -> tuple[tuple[str, ContainerDevice], ...]:
    """The pod's (vendor, device) entries, collapsed as HAMi counts them; ``AllocationError`` when an
    allocated annotation does not decode."""
    init_count = len(_part(pod, "spec").get("initContainers") or []) if init_peak else 0
    raw = decode_pod_devices(checklist, annotations)
    shrink = init_count and _init_containers_succeeded(pod)
    collapsed = (app_containers_only_usage if shrink else collapse_init_container_usage)(raw, init_count)
    return tuple((vendor, dev) for vendor, devs in collapsed.items() for dev in devs)


def _reserved(annotations: Mapping[str, str]) -> tuple[MigAllocation, ...]:
    """What the pod reserves beside its allocated devices, by each backend's rule
    (``Vendor.reservations``; at v2.10.0 NVIDIA's MIG placements alone)."""
    out: tuple[MigAllocation, ...] = ()
    for rule in reservation_rules():
        text = annotations.get(rule.annotation)
        if text:
            out += rule.decode(str(text))
    return out


# -- nodes -----------------------------------------------------------------------------------------
def node_usage(
    registered: Mapping[str, str], pods: Iterable[PodAllocation], release: HamiRules | None = None
) -> NodeUsage:
    """``getNodesUsage`` for one node: ``registered`` is device UUID -> mode, ``pods`` its pods,
    ``release`` the rules of the HAMi release counting (v2.10.0's by default).

    Each pod device adds its slots (at least one), memory and cores to the registered device with
    that UUID (before v2.10.0, the UUID before a ``[`` MIG suffix); a UUID the node does not register
    is listed in ``unknown``. Then each backend's reservation rule counts what the pod reserves
    (NVIDIA: MIG placements or suffixes mark the device they name, and HAMi marks a device unhealthy
    where they disagree with its mode).
    """
    usage = NodeUsage({uuid: DeviceUse() for uuid in registered})
    rules = reservation_rules(release)
    suffixed = release is not None and not release.mig_profiles
    for pod in pods:
        if pod.error:
            continue
        _add_devices(usage, pod, suffixed)
        for rule in rules:
            rule.count(usage, pod, registered)
    return usage


def _add_devices(usage: NodeUsage, pod: PodAllocation, suffixed: bool = False) -> None:
    """One pod's devices added to the registered devices they name (else listed as unknown);
    ``suffixed``: a UUID names the device before its MIG suffix (v2.8.3, v2.9.0)."""
    info = dict(pod.pod_info) if pod.pod_info else None
    for _vendor, dev in pod.devices:
        uuid = base_uuid(dev.uuid) if suffixed else dev.uuid
        use = usage.devices.get(uuid)
        if use is None:
            usage.unknown.append((pod.key, dev.uuid))
            continue
        use.used += max(dev.slots, 1)
        use.usedmem += dev.usedmem
        use.usedcores += dev.usedcores
        use.pods.append(pod.key)
        if info is not None:
            use.pod_infos.append(info)


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


class LiveUsageLike(Protocol):
    """A live node's usage: per device UUID, what its pods hold (``apply_usage``), and the keys a
    verdict at it is shared by (``keys``: ``cache.usage_keys(devices)``, computed once per object).
    One object per content: a new one when the usage changes, so a verdict may be remembered with
    it (weakly)."""

    @property
    def devices(self) -> Mapping[str, UsageLike]: ...

    @property
    def keys(self) -> Mapping[str, tuple] | None: ...


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
