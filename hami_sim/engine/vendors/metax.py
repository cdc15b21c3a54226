"""MetaX GPUs (HAMi ``pkg/device/metax``): whole GPUs (``Metax-GPU``) and sGPU slices (``Metax-SGPU``).

- Whole GPUs: ``status.capacity[metax-tech.com/gpu]`` exclusive devices (count 1, 65536 MiB);
  ``metax-tech.com/gpu: N`` (limits, else requests) asks for N whole GPUs.
- sGPU: the device plugin's own JSON list on ``metax-tech.com/node-gpu-devices``
  (``uuid``, ``totalDevCount``, ``totalCompute``, ``totalVRam``, ``numa``, ``healthy``, ``qosPolicy``).
  Requests are read from **limits only**: ``metax-tech.com/sgpu`` devices, ``vcore`` percent (default
  100) and ``vmemory``: a plain number is GiB, a value whose canonical quantity has a unit is bytes
  (``2048Mi`` = 2048 MiB; note Kubernetes writes ``1000`` as ``1k``). Fit collects every fitting card
  (no early stop), checking health (``CardUnhealthy``), QoS policy and the NVIDIA-style memory/core rules.

What HAMi adds on top (both reproduced):

- MetaX GPU ``customFilterRule``: a later container of the pod may only use the device every earlier
  container of its phase got (``CardNotFoundCustomFilterRule``); with count-1 cards that means one
  GPU-requesting container per phase. ``ScoreNode``: under binpack ``2000 - losses[n]``, under
  spread ``2000 - scores[n]``, where ``n`` = the pod's MetaX GPUs and ``losses``/``scores`` are the
  JSON ``{"<n>": <int>}`` node annotations ``metax-tech.com/gpu.topology.losses`` / ``.scores``
  (absent: no score; unparsable or no entry for ``n``: 2000).
- MetaX sGPU device prioritisation: an exclusive pod (``vcore`` 100, no app-class annotation) with
  more candidates than it needs takes them MetaXLink zone first (``linkZone`` of the registration:
  the smallest zone that holds the whole request, else zones smallest first, then unlinked cards).
  ``ScoreNode`` ("policy neutral" x +10000, x -10000 under spread): for exclusive devices with
  topology awareness on (``metax-tech.com/sgpu-topology-aware``, else the config's
  ``topology_aware``), ``10 x link score of the chosen cards - link score the idle cards lose``;
  online pods score by the online/offline pods already on their cards (``DeviceUsage.pod_infos``).
- MetaX sGPU app classes (``metax-tech.com/sgpu-app-class``): a used card keeps the class of the pods
  on it (``checkAppClass``), and an online pod with more candidates than it needs prefers cards with
  fewer online pods and avoids cards running only offline pods (``prioritizeOnlineDevices``).
- MetaX sGPU ``AddResourceUsage``: a non-online pod retags each card it takes with its own QoS
  policy ("" when it takes the card exclusively); later containers and later session pods are
  checked against that tag (``add_pod_usage``, copy-on-write of the shared ``custom_info``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import orjson

from .. import reasons as R
from ..model import (
    ContainerDevice,
    ContainerDeviceRequest,
    DeviceInfo,
    DeviceUsage,
    InventoryError,
    NodeState,
)
from ..policy import f32
from ..quantity import QuantityError, parse_quantity
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor, check_uuid
from .fit_loop import FitRules, Rejections, common_fit, core_reason, same_device_rule
from .node_codecs import capacity_devices
from .registry import (
    Backend,
    ProfileFields,
    Registration,
    RenderInput,
    Row,
    VendorDescriptor,
    capacity_renderer,
    row_extra,
)
from .request_rules import MAX_INT32, count_request, go_div, quantity_int

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = [
    "DESCRIPTOR",
    "MetaxConfig",
    "MetaxGpuVendor",
    "MetaxSgpuVendor",
    "METAX_GPU",
    "METAX_SGPU",
    "METAX_SGPU_REGISTER",
    "CARD_UNHEALTHY",
    "CARD_QOS_POLICY_MISMATCH",
    "CARD_APP_CLASS_MISMATCH",
    "app_class_fits",
    "vmemory_mib",
    "TOPOLOGY_LOSSES",
    "TOPOLOGY_SCORES",
    "TOPOLOGY_AWARE",
    "parse_topology_map",
    "link_score",
]

METAX_GPU = "Metax-GPU"
METAX_SGPU = "Metax-SGPU"
METAX_SGPU_REGISTER = "metax-tech.com/node-gpu-devices"
METAX_USE_UUID = "metax-tech.com/use-gpuuuid"
METAX_NOUSE_UUID = "metax-tech.com/nouse-gpuuuid"
QOS_POLICY = "metax-tech.com/sgpu-qos-policy"
APP_CLASS = "metax-tech.com/sgpu-app-class"
ONLINE = "online"
OFFLINE = "offline"
CARD_UNHEALTHY = "CardUnhealthy"
CARD_QOS_POLICY_MISMATCH = "CardQosPolicyMismatch"
CARD_APP_CLASS_MISMATCH = "CardAppClassMismatch"
METAX_GPU_MEMORY = 65536
TOPOLOGY_LOSSES = "metax-tech.com/gpu.topology.losses"
TOPOLOGY_SCORES = "metax-tech.com/gpu.topology.scores"
TOPOLOGY_AWARE = "metax-tech.com/sgpu-topology-aware"
LINK_ZONE = "LinkZone"
DIRECT_LINK_SCORE = 10
POLICY_NEUTRAL_WEIGHT = 10000
_GO_BOOLS = {
    "1": True,
    "t": True,
    "T": True,
    "TRUE": True,
    "true": True,
    "True": True,
    "0": False,
    "f": False,
    "F": False,
    "FALSE": False,
    "false": False,
    "False": False,
}


@dataclass(slots=True, frozen=True)
class MetaxConfig:
    """The ``metax:`` block of HAMi's device config."""

    resource_count_name: str = "metax-tech.com/gpu"
    resource_vcount_name: str = "metax-tech.com/sgpu"
    resource_vcore_name: str = "metax-tech.com/vcore"
    resource_vmemory_name: str = "metax-tech.com/vmemory"
    #: ``topologyAware``: sGPU topology-aware node scoring for exclusive pods without the annotation
    topology_aware: bool = False


def parse_topology_map(raw: str | None) -> dict[str, int] | None:
    """A ``gpu.topology.losses``/``scores`` value as Go's ``json.Unmarshal`` into ``map[int]int``.

    None when the annotation is absent; ``{}`` when it does not decode (HAMi then reads 0). Keys are
    the canonical decimal text of the int (``"+2"`` -> ``"2"``), so the table stays JSON (sessions
    store a device's ``custom_info``).
    """
    if raw is None:
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, int] = {}
    for key, value in data.items():
        text = key[1:] if key[:1] in "+-" else key
        if not text.isascii() or not text.isdigit():
            return {}
        number = int(key)
        if value is None:
            value = 0
        if isinstance(value, bool) or not isinstance(value, int):
            return {}
        if not (-(2**63) <= number < 2**63 and -(2**63) <= value < 2**63):
            return {}
        out[str(number)] = value
    return out


def _link_zone(info: object) -> int:
    if isinstance(info, dict):
        value = info.get(LINK_ZONE)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0


def link_score(devices: Sequence[tuple[str, int]]) -> int:
    """``LinkDevices.Score``: 10 for every pair of distinct cards in the same non-zero link zone."""
    score = 0
    for i, (uuid_a, zone_a) in enumerate(devices):
        for uuid_b, zone_b in devices[i + 1 :]:
            if uuid_a != uuid_b and zone_a != 0 and zone_a == zone_b:
                score += DIRECT_LINK_SCORE
    return score


#: v2.10's MetaX GPU ``checkUUID`` always passes: no UUID selection for whole GPUs
GPU_RULES = FitRules("", "")


class MetaxGpuVendor(Vendor):
    """Exclusive MetaX GPUs from node capacity, with the topology-loss node score."""

    common_word = METAX_GPU
    allocated_annotation = (
        "hami.io/metax-gpu-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    )
    config_class = MetaxConfig
    resource_fields = ("resource_count_name",)

    def node_reads(self) -> NodeReads:
        """The GPU count in capacity; the topology tables fill the custom info, and the GPUs are
        named after the node."""
        return NodeReads(
            capacity=(self.config.resource_count_name,),
            annotations={TOPOLOGY_LOSSES: "custom_info", TOPOLOGY_SCORES: "custom_info"},
            name="id",
        )

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        devices = capacity_devices(
            node,
            self.config.resource_count_name,
            METAX_GPU,
            id_infix="metax",
            split=1,
            devmem=METAX_GPU_MEMORY,
            devcore=100,
        )
        if not devices:
            return [], {}
        losses = annotations.get(TOPOLOGY_LOSSES)
        scores = annotations.get(TOPOLOGY_SCORES)
        if losses is not None or scores is not None:
            # ScoreNode reads these node annotations; parsed once here, shared read-only
            info = {
                TOPOLOGY_LOSSES: parse_topology_map(losses if isinstance(losses, str) else None),
                TOPOLOGY_SCORES: parse_topology_map(scores if isinstance(scores, str) else None),
            }
            for dev in devices:
                dev.custom_info = info
        return devices, {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """``N`` whole GPUs (100 %, 100 cores each)."""
        return count_request(resources, self.config.resource_count_name, METAX_GPU, (0, 100, 100))

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """The common loop with HAMi's "needs all devices on a device" ``customFilterRule``."""
        return common_fit(
            METAX_GPU, GPU_RULES, devices, request, pod, node, policy, accept=same_device_rule(allocated)
        )

    def score_node(
        self,
        pod_devices: Sequence[Sequence[ContainerDevice]],
        previous: Sequence[DeviceUsage],
        policy: str,
        pod: PodView,
    ) -> float:
        """``2000 - losses[n]`` (binpack) / ``2000 - scores[n]`` (spread), n = the pod's MetaX GPUs."""
        if policy == "binpack":
            key = TOPOLOGY_LOSSES
        elif policy == "spread":
            key = TOPOLOGY_SCORES
        else:
            return 0.0
        table: dict[str, int] | None = None
        for dev in previous:
            if dev.type == METAX_GPU and isinstance(dev.custom_info, dict):
                table = dev.custom_info.get(key)
                break
        if table is None:
            return 0.0
        wanted = sum(len(container) for container in pod_devices)
        value = table.get(str(wanted), 0) if isinstance(table, dict) else 0
        return f32(2000 - f32(value if isinstance(value, int) else 0))


_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}


def _canonical_has_unit(raw: object, value: Fraction) -> bool:
    """Whether Kubernetes' canonical ``Quantity.String()`` of ``raw`` contains a letter."""
    if value == 0:
        return False
    text = raw.strip() if isinstance(raw, str) else ""
    if "e" in text or "E" in text:
        return True  # DecimalExponent keeps its exponent
    if value.denominator != 1:
        return True  # fractional values print with m/u/n
    number = abs(value.numerator)
    if any(text.endswith(s) for s in _BINARY):
        return number % 1024 == 0  # BinarySI prints a plain number below 1Ki granularity
    return number % 1000 == 0  # DecimalSI: 1000 -> "1k"


def vmemory_mib(raw: object) -> int | None:
    """``metax-tech.com/vmemory`` -> MiB: plain numbers are GiB, values with a unit are bytes."""
    try:
        value = parse_quantity(raw)
    except QuantityError:
        return None
    if value.denominator != 1:
        return None
    number = value.numerator
    if _canonical_has_unit(raw, value):
        return go_div(go_div(number, 1024), 1024)
    return number * 1024


def _decode_sdevices(raw: str) -> list[DeviceInfo]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InventoryError(METAX_SGPU_REGISTER, f"invalid JSON: {exc}") from None
    if data is None:
        data = []
    if not isinstance(data, list):
        raise InventoryError(
            METAX_SGPU_REGISTER, "json: cannot unmarshal into Go value of type []*metax.MetaxSDeviceInfo"
        )
    devices: list[DeviceInfo] = []
    for idx, item in enumerate(data):
        if not isinstance(item, dict):
            raise InventoryError(METAX_SGPU_REGISTER, f"device {idx} is not an object")
        lowered = {k.lower(): v for k, v in item.items()}

        def num(key: str, lowered: dict = lowered, idx: int = idx) -> int:
            value = lowered.get(key.lower(), 0)
            if value is None:
                return 0
            if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value < 2**31:
                raise InventoryError(METAX_SGPU_REGISTER, f"device {idx}: {key} must be an int32")
            return value

        uuid = lowered.get("uuid", "")
        healthy = lowered.get("healthy", False)
        qos = lowered.get("qospolicy", "")
        if (
            not isinstance(uuid, str)
            or not isinstance(healthy, bool)
            or not isinstance(qos, str | type(None))
        ):
            raise InventoryError(
                METAX_SGPU_REGISTER, f"device {idx}: uuid/healthy/qosPolicy have the wrong type"
            )
        devices.append(
            DeviceInfo(
                id=uuid,
                index=idx,
                count=num("totalDevCount"),
                devmem=num("totalVRam"),
                devcore=num("totalCompute"),
                type=METAX_SGPU,
                numa=num("numa"),
                health=healthy,
                device_vendor=METAX_SGPU,
                custom_info={"QosPolicy": qos or "", LINK_ZONE: num("linkZone")},
            )
        )
    if not devices:
        raise InventoryError(METAX_SGPU_REGISTER, "no sdevice found on node")
    return devices


class MetaxSgpuVendor(Vendor):
    """MetaX sGPU: shared slices with QoS policies."""

    common_word = METAX_SGPU
    allocated_annotation = (
        "hami.io/metax-sgpu-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    )
    config_class = MetaxConfig
    resource_fields = ("resource_vcount_name", "resource_vcore_name", "resource_vmemory_name")
    pod_info_annotations = (APP_CLASS,)

    def node_reads(self) -> NodeReads:
        return NodeReads(registers=(METAX_SGPU_REGISTER,))

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        raw = annotations.get(METAX_SGPU_REGISTER)
        if raw is None:
            return [], {}
        return _decode_sdevices(raw), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """HAMi v2.10 ``GenerateResourceRequests`` (limits only). The count must be 1..MaxInt32, and an
        integer ``vcore`` or ``vmemory`` (in MiB) 0..MaxInt32, else the container asks nothing; a value
        that is not an integer is ignored."""
        c = self.config
        limits = resources.limits  # MetaX sGPU reads limits only
        count = quantity_int(limits.get(c.resource_vcount_name))
        if count is None or not 1 <= count <= MAX_INT32:
            return None
        core = 100
        core_raw = limits.get(c.resource_vcore_name)
        value = quantity_int(core_raw) if core_raw is not None else None
        if value is not None:
            if not 0 <= value <= MAX_INT32:
                return None
            core = value
        mem = 0
        mem_raw = limits.get(c.resource_vmemory_name)
        value = vmemory_mib(mem_raw) if mem_raw is not None else None
        if value is not None:
            if not 0 <= value <= MAX_INT32:
                return None
            mem = value
        return ContainerDeviceRequest(count, METAX_SGPU, mem, 100 if mem == 0 else 0, core)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        # not ``common_fit``: the sGPU Fit checks health (as CardUnhealthy), app class and QoS first,
        # resolves memory without the 101 "unset" case, skips core checks for online pods and collects
        # every fitting card before choosing (no early stop)
        annotations = pod.annotations
        app_class = annotations.get(APP_CLASS, "")
        req_qos = annotations.get(QOS_POLICY, "")
        reject = Rejections()
        counts, device_reasons = reject.counts, reject.device_reasons
        candidates: list[tuple[DeviceUsage, int]] = []

        for dev in reversed(devices):
            if request.type != METAX_SGPU:
                reject(dev, R.CARD_TYPE_MISMATCH)
                continue
            if not dev.health:
                reject(dev, CARD_UNHEALTHY)
                continue
            if not app_class_fits(app_class, dev):
                reject(dev, CARD_APP_CLASS_MISMATCH)
                continue
            if app_class != ONLINE and not self._qos_ok(req_qos, dev, request):
                reject(dev, CARD_QOS_POLICY_MISMATCH)
                continue
            if not check_uuid(annotations, dev.id, METAX_USE_UUID, METAX_NOUSE_UUID):
                reject(dev, R.CARD_UUID_MISMATCH)
                continue
            if dev.count <= dev.used:
                reject(dev, R.CARD_TIME_SLICING_EXHAUSTED)
                continue
            if policy.mutex and dev.used > 0:
                reject(dev, R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT)
                continue
            memreq = (
                request.memreq
                if request.memreq > 0
                else go_div(dev.totalmem * request.mem_percentage_req, 100)
            )
            if dev.totalmem - dev.usedmem < memreq:
                reject(dev, R.CARD_INSUFFICIENT_MEMORY)
                continue
            if app_class != ONLINE:
                why = core_reason(dev, request.coresreq)
                if why:
                    reject(dev, why)
                    continue
            candidates.append((dev, memreq))
        if len(candidates) < request.nums:
            if candidates:
                counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = len(candidates)
            return FitOutcome(False, [], R.gen_reason(counts, len(devices)), device_reasons)
        best = _prioritize(candidates, request, annotations)
        cores = 0 if app_class == ONLINE else request.coresreq
        chosen = [ContainerDevice(dev.index, dev.id, dev.type, memreq, cores) for dev, memreq in best]
        return FitOutcome(True, chosen, "", device_reasons)

    def add_pod_usage(self, dev: DeviceUsage, chosen: ContainerDevice, pod: PodView) -> str | None:
        """HAMi's sGPU ``AddResourceUsage``: a non-online pod also switches the card's QoS policy to its
        own (to "" when it takes the card exclusively), so its later containers, and later pods of a
        session, are checked against that policy."""
        self.add_usage(dev, chosen)
        annotations = pod.annotations
        info = dev.custom_info
        if (
            annotations.get(APP_CLASS) != ONLINE
            and isinstance(info, dict)
            and isinstance(info.get("QosPolicy"), str)
        ):
            expected = "" if chosen.usedcores == 100 else annotations.get(QOS_POLICY, "")
            if info["QosPolicy"] != expected:
                dev.custom_info = {**info, "QosPolicy": expected}  # copies share the dict: replace it
        return None

    def score_node(
        self,
        pod_devices: Sequence[Sequence[ContainerDevice]],
        previous: Sequence[DeviceUsage],
        policy: str,
        pod: PodView,
    ) -> float:
        """HAMi's "policy neutral" sGPU score: +-10000 x the online or topology-aware score."""
        weight = -POLICY_NEUTRAL_WEIGHT if policy == "spread" else POLICY_NEUTRAL_WEIGHT
        chosen = [device for container in pod_devices for device in container]
        if pod.annotations.get(APP_CLASS) == ONLINE and chosen:
            return f32(weight * _score_online(chosen, previous))
        exclusive = [device for device in chosen if device.usedcores == 100]
        if not exclusive:
            return 0.0
        enabled = self.config.topology_aware is True
        flag = _GO_BOOLS.get(pod.annotations.get(TOPOLOGY_AWARE, ""))
        if TOPOLOGY_AWARE in pod.annotations and flag is not None:
            enabled = flag
        if not enabled:
            return 0.0
        return f32(weight * _score_exclusive(exclusive, previous))

    @staticmethod
    def _qos_ok(req_qos: str, dev: DeviceUsage, request: ContainerDeviceRequest) -> bool:
        """``checkDeviceQos``: an idle card or an exclusive request takes any policy."""
        if dev.used == 0 or request.coresreq == 100:
            return True
        dev_qos = ""
        if isinstance(dev.custom_info, dict):
            value = dev.custom_info.get("QosPolicy")
            dev_qos = value if isinstance(value, str) else ""
        return dev_qos == "" or dev_qos == req_qos


def _app_classes(dev: DeviceUsage) -> tuple[int, int]:
    """(online, offline): how many pods of each app class hold the card (its ``PodInfos``)."""
    online = offline = 0
    for info in dev.pod_infos:
        app_class = info.get(APP_CLASS)
        if app_class == ONLINE:
            online += 1
        elif app_class == OFFLINE:
            offline += 1
    return online, offline


def app_class_fits(request_class: str, dev: DeviceUsage) -> bool:
    """``checkAppClass``: an idle card takes any pod. A used card takes online/offline pods only if
    it already runs online or offline pods, and ordinary pods only if it runs neither; an offline
    pod never joins a card running an online one (that card suspends its offline pods)."""
    if dev.used == 0:
        return True
    online, offline = _app_classes(dev)
    if (online > 0 or offline > 0) == (request_class in (ONLINE, OFFLINE)):
        return not (online > 0 and request_class == OFFLINE)
    return False


def _online_rank(dev: DeviceUsage) -> tuple[int, int, int]:
    """``prioritizeOnlineDevices``' order as a sort key: cards running only offline pods last (fewest
    of them first), the others by fewest online pods, then fewest offline pods. HAMi sorts with an
    unstable ``sort.Slice``; we sort stably, so ties keep the candidates' (GPU policy) order."""
    online, offline = _app_classes(dev)
    if online == 0 and offline > 0:
        return (1, 0, offline)
    return (0, online, offline)


def _score_online(chosen: Sequence[ContainerDevice], previous: Sequence[DeviceUsage]) -> int:
    """``scoreOnlineDevices``: per chosen card, -100 per offline pod on a card running only offline
    pods, else -20 per online pod and -2 per offline pod (the pods on it before this pod)."""
    picked = {device.uuid for device in chosen}
    result = 0
    for dev in previous:
        if dev.id not in picked:
            continue
        online, offline = _app_classes(dev)
        if offline > 0 and online == 0:
            result += -100 * offline
        else:
            result += -20 * online - 2 * offline
    return result


def _prioritize(
    candidates: list[tuple[DeviceUsage, int]], request: ContainerDeviceRequest, annotations: Mapping[str, str]
) -> list[tuple[DeviceUsage, int]]:
    """The sGPU Fit's choice among more candidates than it needs: an online pod orders the cards by
    the app classes on them, an offline one keeps the GPU policy's order, and a pod without an app
    class asking whole cards (100 cores) goes by MetaXLink zone."""
    nums = request.nums
    if len(candidates) <= nums:
        return candidates[:nums]
    if APP_CLASS in annotations:
        if annotations[APP_CLASS] == ONLINE:
            return sorted(candidates, key=lambda item: _online_rank(item[0]))[:nums]
        return candidates[:nums]
    if request.coresreq == 100:
        return _prioritize_exclusive(candidates, nums)
    return candidates[:nums]


def _prioritize_exclusive(
    candidates: list[tuple[DeviceUsage, int]], nums: int
) -> list[tuple[DeviceUsage, int]]:
    """``prioritizeExclusiveDevices``: MetaXLink zones first, smallest zone that holds the request.

    HAMi groups the candidates by ``LinkZone`` in a Go map (random order) and sorts the zones by size
    with an unstable sort; we order zones by first appearance among the candidates and sort stably,
    so equal-sized zones go in candidate order. Cards with no zone (<= 0) come last.
    """
    zones: dict[int, list[tuple[DeviceUsage, int]]] = {}
    for item in candidates:
        zones.setdefault(_link_zone(item[0].custom_info), []).append(item)
    linked = sorted((group for zone, group in zones.items() if zone > 0), key=len)
    unlinked = [item for zone, group in zones.items() if zone <= 0 for item in group]
    for group in linked:
        if len(group) >= nums:
            return group[:nums]
    picked: list[tuple[DeviceUsage, int]] = []
    for group in linked:
        for item in group:
            picked.append(item)
            if len(picked) >= nums:
                return picked
    for item in unlinked:
        picked.append(item)
        if len(picked) >= nums:
            return picked
    return candidates[:nums]


def _score_exclusive(exclusive: list[ContainerDevice], previous: Sequence[DeviceUsage]) -> int:
    """``scoreExclusiveDevices``: 10 x link score of the chosen cards - what the idle cards lose."""
    # only sGPU registrations carry an int32 LinkZone; HAMi's ``.(int32)`` assertion reads any
    # other vendor's JSON custominfo (float64) as zone 0
    zones = {dev.id: _link_zone(dev.custom_info) if dev.type == METAX_SGPU else 0 for dev in previous}
    allocated = [(device.uuid, zones.get(device.uuid, 0)) for device in exclusive]
    chosen_ids = {uuid for uuid, _ in allocated}
    available: list[tuple[str, int]] = []
    rest: list[tuple[str, int]] = []
    for dev in previous:
        if dev.used == 0:
            entry = (dev.id, zones[dev.id])
            available.append(entry)
            if dev.id not in chosen_ids:
                rest.append(entry)
    allocated_score = link_score(allocated)
    loss = link_score(available) - allocated_score - link_score(rest)
    return 10 * allocated_score - loss


def _gpu_capacity(config: MetaxConfig, devices: Sequence[DeviceInfo]) -> dict[str, str]:
    return {config.resource_count_name: str(len(devices))}


def _render_sgpu(vendor: MetaxSgpuVendor, data: RenderInput, count_name: str) -> Registration:
    """MetaX's own JSON list on ``metax-tech.com/node-gpu-devices``; qosPolicy per row."""
    out = Registration()
    out.annotations[METAX_SGPU_REGISTER] = orjson.dumps(
        [
            {
                "uuid": d.id,
                "totalDevCount": d.count,
                "totalCompute": d.devcore,
                "totalVRam": d.devmem,
                "numa": d.numa,
                "healthy": d.health,
                "qosPolicy": str(row_extra(data.rows, i, "qosPolicy") or ""),
            }
            for i, d in enumerate(data.devices)
        ]
    ).decode()
    out.capacity[count_name] = str(data.slots)
    return out


def _check_sgpu_row(row: Row, extra: Mapping[str, Any]) -> dict[str, str]:
    if "qosPolicy" in extra and not isinstance(extra["qosPolicy"], str):
        return {"extra": f"extra.qosPolicy must be a string, got {extra['qosPolicy']!r}"}
    return {}


def _sgpu_row_extra(dev: DeviceInfo) -> dict[str, Any]:
    info = dev.custom_info if isinstance(dev.custom_info, dict) else {}
    qos = info.get("QosPolicy") or ""
    return {"qosPolicy": qos} if qos else {}


GPU_PROFILE = ProfileFields(
    label="MetaX GPU (capacity)",
    codec="capacity",
    help="status.capacity metax-tech.com/gpu = cards (HAMi: 65536 MiB, exclusive)",
    render=capacity_renderer(_gpu_capacity),
    fixed={"type": METAX_GPU, "count": 1, "devmem": METAX_GPU_MEMORY, "devcore": 100, "numa": 0},
)
SGPU_PROFILE = ProfileFields(
    label="MetaX sGPU",
    codec="metax-sgpu",
    help="metax-tech.com/node-gpu-devices: count = totalDevCount, devcore = totalCompute, devmem = totalVRam",
    render=_render_sgpu,
    extras={"qosPolicy": "the card's sGPU QoS policy (e.g. best-effort, fixed-share, burst-share)"},
    fixed={"type": METAX_SGPU, "mode": "hami-core"},
    check_row=_check_sgpu_row,
    row_extra=_sgpu_row_extra,
    count_field="resource_vcount_name",
)

DESCRIPTOR = VendorDescriptor(
    block="metax",
    order=60,
    config_class=MetaxConfig,
    backends=(
        Backend(MetaxGpuVendor, lambda word: GPU_PROFILE),
        Backend(MetaxSgpuVendor, lambda word: SGPU_PROFILE),
    ),
)
