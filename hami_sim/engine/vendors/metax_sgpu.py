"""MetaX sGPU's rules (HAMi v2.10.0 ``pkg/device/metax``, ``Metax-SGPU``), which ``MetaxSgpuVendor``
in ``metax.py`` calls in HAMi's order.

- Registration: the device plugin's own JSON list on ``metax-tech.com/node-gpu-devices`` (``uuid``,
  ``totalDevCount``, ``totalCompute``, ``totalVRam``, ``numa``, ``healthy``, ``qosPolicy``,
  ``linkZone``), ``decode_sdevices``.
- Requests are read from **limits only**: ``metax-tech.com/sgpu`` devices, ``vcore`` percent (default
  100) and ``vmemory``: a plain number is GiB, a value whose canonical quantity has a unit is bytes
  (``2048Mi`` = 2048 MiB; note Kubernetes writes ``1000`` as ``1k``), ``vmemory_mib``.
- Fit (``card_reason``): every fitting card is collected (no early stop), checking health
  (``CardUnhealthy``), app class, QoS policy, UUID and the NVIDIA-style memory/core rules; which of
  them the Fit takes, and the node score, are ``metax_sgpu_rank.py``.
- App classes (``metax-tech.com/sgpu-app-class``): a used card keeps the class of the pods on it
  (``checkAppClass``, ``app_class_fits``).
- ``AddResourceUsage``: a non-online pod retags each card it takes with its own QoS policy ("" when
  it takes the card exclusively); later containers and later session pods are checked against that
  tag (``retag_qos``, copy-on-write of the shared ``custom_info``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import orjson

from .. import reasons as R
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, InventoryError
from ..quantity import QuantityError, parse_quantity
from .fit_loop import core_reason
from .registry import ProfileFields, Registration, RenderInput, Row, row_extra
from .request_rules import go_div
from .selection import UuidCheck, uuid_check

if TYPE_CHECKING:
    from ..hami_releases import HamiRules
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = [
    "METAX_SGPU",
    "METAX_SGPU_REGISTER",
    "APP_CLASS",
    "CARD_UNHEALTHY",
    "CARD_QOS_POLICY_MISMATCH",
    "CARD_APP_CLASS_MISMATCH",
    "LINK_ZONE",
    "ONLINE",
    "OFFLINE",
    "SGPU_PROFILE",
    "SgpuAsk",
    "app_class_fits",
    "app_classes",
    "card_reason",
    "decode_sdevices",
    "link_zone",
    "retag_qos",
    "vmemory_mib",
]

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
LINK_ZONE = "LinkZone"


# -- registration -----------------------------------------------------------------------------------
def link_zone(info: object) -> int:
    if isinstance(info, dict):
        value = info.get(LINK_ZONE)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0


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


def decode_sdevices(raw: str) -> list[DeviceInfo]:
    """MetaX's JSON list on ``metax-tech.com/node-gpu-devices`` as Go unmarshals it into
    ``[]*MetaxSDeviceInfo`` (keys case-insensitive, int32 numbers); an empty list is an error."""
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


# -- fit --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SgpuAsk:
    """What the sGPU Fit reads of one container's request and its pod."""

    request: ContainerDeviceRequest
    annotations: Mapping[str, str]
    app_class: str
    qos: str
    mutex: bool
    uuid_allows: UuidCheck  # the release's UUID-list rule (``uuid_check``)

    @classmethod
    def of(
        cls, request: ContainerDeviceRequest, pod: PodView, policy: GpuPolicy, release: HamiRules
    ) -> SgpuAsk:
        annotations = pod.annotations
        return cls(
            request,
            annotations,
            annotations.get(APP_CLASS, ""),
            annotations.get(QOS_POLICY, ""),
            policy.mutex,
            uuid_check(release),
        )


def card_reason(dev: DeviceUsage, ask: SgpuAsk) -> tuple[str, int]:
    """(the first rule the card fails, "" when it fits; the MiB it would give). Not ``common_fit``'s
    order: health (as CardUnhealthy), app class and QoS come first, memory has no 101 "unset" case,
    and online pods skip the core checks."""
    why = _selection_reason(dev, ask)
    if why:
        return why, 0
    request = ask.request
    memreq = request.memreq if request.memreq > 0 else go_div(dev.totalmem * request.mem_percentage_req, 100)
    if dev.totalmem - dev.usedmem < memreq:
        return R.CARD_INSUFFICIENT_MEMORY, memreq
    if ask.app_class != ONLINE:
        return core_reason(dev, request.coresreq), memreq
    return "", memreq


def _selection_reason(dev: DeviceUsage, ask: SgpuAsk) -> str:
    """The checks before memory: type, health, app class, QoS, UUID, split count, mutex."""
    if ask.request.type != METAX_SGPU:
        return R.CARD_TYPE_MISMATCH
    if not dev.health:
        return CARD_UNHEALTHY
    if not app_class_fits(ask.app_class, dev):
        return CARD_APP_CLASS_MISMATCH
    if ask.app_class != ONLINE and not qos_ok(ask.qos, dev, ask.request):
        return CARD_QOS_POLICY_MISMATCH
    if not ask.uuid_allows(ask.annotations, dev.id, METAX_USE_UUID, METAX_NOUSE_UUID):
        return R.CARD_UUID_MISMATCH
    if dev.count <= dev.used:
        return R.CARD_TIME_SLICING_EXHAUSTED
    if ask.mutex and dev.used > 0:
        return R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT
    return ""


def qos_ok(req_qos: str, dev: DeviceUsage, request: ContainerDeviceRequest) -> bool:
    """``checkDeviceQos``: an idle card or an exclusive request takes any policy."""
    if dev.used == 0 or request.coresreq == 100:
        return True
    dev_qos = ""
    if isinstance(dev.custom_info, dict):
        value = dev.custom_info.get("QosPolicy")
        dev_qos = value if isinstance(value, str) else ""
    return dev_qos == "" or dev_qos == req_qos


def app_classes(dev: DeviceUsage) -> tuple[int, int]:
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
    online, offline = app_classes(dev)
    if (online > 0 or offline > 0) == (request_class in (ONLINE, OFFLINE)):
        return not (online > 0 and request_class == OFFLINE)
    return False


# -- usage -------------------------------------------------------------------------------------
def retag_qos(dev: DeviceUsage, chosen: ContainerDevice, annotations: Mapping[str, str]) -> None:
    """HAMi's sGPU ``AddResourceUsage`` tail: a non-online pod switches the card's QoS policy to its
    own ("" when it takes the card exclusively); copies share the dict, so it is replaced."""
    info = dev.custom_info
    if (
        annotations.get(APP_CLASS) != ONLINE
        and isinstance(info, dict)
        and isinstance(info.get("QosPolicy"), str)
    ):
        expected = "" if chosen.usedcores == 100 else annotations.get(QOS_POLICY, "")
        if info["QosPolicy"] != expected:
            dev.custom_info = {**info, "QosPolicy": expected}


# -- profiles ---------------------------------------------------------------------------------------
def _render_sgpu(vendor: Any, data: RenderInput, count_name: str) -> Registration:
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
