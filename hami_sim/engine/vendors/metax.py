"""MetaX GPUs (HAMi ``pkg/device/metax``): whole GPUs (``Metax-GPU``) and sGPU slices (``Metax-SGPU``).

- Whole GPUs: ``status.capacity[metax-tech.com/gpu]`` exclusive devices (count 1, 65536 MiB);
  ``metax-tech.com/gpu: N`` (limits, else requests) asks for N whole GPUs.
- sGPU: the device plugin's own JSON list on ``metax-tech.com/node-gpu-devices``
  (``uuid``, ``totalDevCount``, ``totalCompute``, ``totalVRam``, ``numa``, ``healthy``, ``qosPolicy``).
  Requests are read from **limits only**: ``metax-tech.com/sgpu`` devices, ``vcore`` percent (default
  100) and ``vmemory``: a plain number is GiB, a value whose canonical quantity has a unit is bytes
  (``2048Mi`` = 2048 MiB; note Kubernetes writes ``1000`` as ``1k``). Fit collects every fitting card
  (no early stop), checking health (``CardUnhealthy``), QoS policy and the NVIDIA-style memory/core rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

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
from ..quantity import QuantityError, parse_quantity
from .base import FitOutcome, ResourceGetter, Vendor, check_uuid
from .common import (
    CapacityVendor,
    FitRules,
    capacity_int,
    go_div,
    int32,
    quantity_int,
    resource_int,
    synthesise,
)

if TYPE_CHECKING:
    from ..policy import GpuPolicy
    from ..requests import PodView

__all__ = [
    "MetaxConfig",
    "MetaxGpuVendor",
    "MetaxSgpuVendor",
    "METAX_GPU",
    "METAX_SGPU",
    "METAX_SGPU_REGISTER",
    "CARD_UNHEALTHY",
    "CARD_QOS_POLICY_MISMATCH",
    "CARD_APP_CLASS_MISMATCH",
    "vmemory_mib",
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


@dataclass(slots=True, frozen=True)
class MetaxConfig:
    """The ``metax:`` block of HAMi's device config."""

    resource_count_name: str = "metax-tech.com/gpu"
    resource_vcount_name: str = "metax-tech.com/sgpu"
    resource_vcore_name: str = "metax-tech.com/vcore"
    resource_vmemory_name: str = "metax-tech.com/vmemory"


class MetaxGpuVendor(CapacityVendor):
    """Exclusive MetaX GPUs from node capacity (topology-loss scoring is not simulated)."""

    common_word = METAX_GPU
    rules = FitRules(METAX_USE_UUID, METAX_NOUSE_UUID)

    def __init__(self, config: MetaxConfig | None = None) -> None:
        self.config = config or MetaxConfig()
        self.capacity_names = (self.config.resource_count_name,)

    def resource_names(self) -> frozenset[str]:
        return frozenset({self.config.resource_count_name})

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        cards = capacity_int(node, self.config.resource_count_name)
        if cards <= 0:
            return [], {}
        return synthesise(
            node,
            cards,
            vendor=METAX_GPU,
            id_infix="metax",
            split=1,
            devmem=METAX_GPU_MEMORY,
            devcore=100,
            source=self.config.resource_count_name,
        ), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        present, nums = resource_int(resources, self.config.resource_count_name)
        if not present or nums is None:
            return None
        return ContainerDeviceRequest(int32(nums), METAX_GPU, 0, 100, 100)


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
                custom_info={"QosPolicy": qos or ""},
            )
        )
    if not devices:
        raise InventoryError(METAX_SGPU_REGISTER, "no sdevice found on node")
    return devices


class MetaxSgpuVendor(Vendor):
    """MetaX sGPU: shared slices with QoS policies."""

    common_word = METAX_SGPU

    def __init__(self, config: MetaxConfig | None = None) -> None:
        self.config = config or MetaxConfig()

    def resource_names(self) -> frozenset[str]:
        c = self.config
        return frozenset({c.resource_vcount_name, c.resource_vcore_name, c.resource_vmemory_name})

    def registration_sources(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (METAX_SGPU_REGISTER,), ()

    def inventory_key(self, annotations: Mapping[str, str], node: Mapping) -> tuple:
        return (METAX_SGPU_REGISTER, annotations.get(METAX_SGPU_REGISTER))

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        raw = annotations.get(METAX_SGPU_REGISTER)
        if raw is None:
            return [], {}
        return _decode_sdevices(raw), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        c = self.config
        limits = resources.limits  # MetaX sGPU reads limits only
        count = quantity_int(limits.get(c.resource_vcount_name))
        if count is None:
            return None
        core = 100
        core_raw = limits.get(c.resource_vcore_name)
        if core_raw is not None and quantity_int(core_raw) is not None:
            core = quantity_int(core_raw)  # type: ignore[assignment]
        mem = 0
        mem_raw = limits.get(c.resource_vmemory_name)
        if mem_raw is not None:
            value = vmemory_mib(mem_raw)
            if value is not None:
                mem = value
        return ContainerDeviceRequest(
            int32(count), METAX_SGPU, int32(mem), 100 if mem == 0 else 0, int32(core)
        )

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
    ) -> FitOutcome:
        annotations = pod.annotations
        app_class = annotations.get(APP_CLASS, "")
        req_qos = annotations.get(QOS_POLICY, "")
        counts: dict[str, int] = {}
        device_reasons: dict[str, str] = {}
        candidates: list[tuple[DeviceUsage, int]] = []

        def reject(dev: DeviceUsage, reason: str) -> None:
            counts[reason] = counts.get(reason, 0) + 1
            device_reasons.setdefault(dev.id, reason)

        for dev in reversed(devices):
            if dev.id in node.cordoned:
                reject(dev, R.CARD_CORDONED)
                continue
            if request.type != METAX_SGPU:
                reject(dev, R.CARD_TYPE_MISMATCH)
                continue
            if not dev.health:
                reject(dev, CARD_UNHEALTHY)
                continue
            if dev.used > 0 and app_class in (ONLINE, OFFLINE):
                # checkAppClass: an idle card takes any pod; a used one keeps its app class. The
                # simulator does not track which pods share a card, so a used card counts as
                # running ordinary pods, which online/offline pods must not join.
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
            memreq = (
                request.memreq
                if request.memreq > 0
                else go_div(dev.totalmem * request.mem_percentage_req, 100)
            )
            if dev.totalmem - dev.usedmem < memreq:
                reject(dev, R.CARD_INSUFFICIENT_MEMORY)
                continue
            if app_class != ONLINE:
                if dev.totalcore - dev.usedcores < request.coresreq:
                    reject(dev, R.CARD_INSUFFICIENT_CORE)
                    continue
                if dev.totalcore == 100 and request.coresreq == 100 and dev.used > 0:
                    reject(dev, R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT)
                    continue
                if dev.totalcore != 0 and dev.usedcores == dev.totalcore and request.coresreq == 0:
                    reject(dev, R.CARD_COMPUTE_UNITS_EXHAUSTED)
                    continue
            candidates.append((dev, memreq))
        if len(candidates) < request.nums:
            if candidates:
                counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = len(candidates)
            return FitOutcome(False, [], R.gen_reason(counts, len(devices)), device_reasons)
        cores = 0 if app_class == ONLINE else request.coresreq
        chosen = [
            ContainerDevice(dev.index, dev.id, dev.type, memreq, cores)
            for dev, memreq in candidates[: request.nums]
        ]
        return FitOutcome(True, chosen, "", device_reasons)

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
