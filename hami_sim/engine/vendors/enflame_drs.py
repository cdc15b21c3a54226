"""Enflame DRS slices' rules (HAMi v2.10.0 ``pkg/device/enflame``, CommonWord ``Enflame``), which
``EnflameDrsVendor`` in ``enflame.py`` calls in HAMi's order.

- Registration: the ``enflame.com/gcu-drs-capacity`` annotation
  (``{"devices":[{"index","minor","capacity"}],"profiles":{"1g.6gb":"0",...}}``): one device per entry
  with ``capacity`` slices and the largest profile's memory (``decode_drs``).
- Profiles: ``enflame.com/drs-gcu: S`` asks for the S-slice profile on one device;
  ``enflame.com/gcu-memory`` (GB, or MiB when large) and ``enflame.com/gcu-core`` (percent) ask for
  the smallest profile that covers both (``select_profile``). A profile that does not exist gives
  ``ModeNotFit``; a placement takes the profile's slices, memory and cores (``profile_slices``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from .. import reasons as R
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, InventoryError
from ..quantity import QuantityError, parse_quantity
from .reads import node_name
from .registry import (
    CORES_PANEL,
    MEMORY_PANEL,
    CapacityPanel,
    ProfileFields,
    Registration,
    RenderInput,
    Row,
    first_extra,
)
from .request_rules import MAX_INT32, int32
from .selection import UuidCheck

__all__ = [
    "ENFLAME",
    "DRS_CAPACITY",
    "DRS_PROFILE",
    "MODE_BY_SPEC",
    "MODE_DIRECT",
    "MODE_NOT_FIT",
    "DrsProfile",
    "decode_drs",
    "drs_reason",
    "parse_profile",
    "profile_fits_int32",
    "profile_slices",
    "quantity_value",
    "select_profile",
]

ENFLAME = "Enflame"
DRS_CAPACITY = "enflame.com/gcu-drs-capacity"
ENFLAME_USE_UUID = "enflame.com/use-gpuuuid"
ENFLAME_NOUSE_UUID = "enflame.com/nouse-gpuuuid"
MODE_NOT_FIT = "ModeNotFit"
MODE_DIRECT = 0  # MemPercentagereq marker: Memreq is a slice count
MODE_BY_SPEC = -1  # MemPercentagereq marker: Memreq/Coresreq are memory/percent


# -- profiles ---------------------------------------------------------------------------------------
def parse_profile(name: str) -> tuple[int, int]:
    """``parseProfile``: ``"3g.20gb"`` -> (3 slices, 20 GB); (0, 0) / (n, 0) when malformed."""
    parts = name.strip().lower().split(".")
    if len(parts) < 2:
        return 0, 0
    try:
        size = int(parts[0].strip().removesuffix("g"))
    except ValueError:
        return 0, 0
    try:
        mem = int(parts[1].strip().removesuffix("gb"))
    except ValueError:
        return size, 0
    return size, mem


@dataclass(slots=True, frozen=True)
class DrsProfile:
    name: str
    id: str
    size: int
    memory_gb: int
    core_percent: int


def _drs_capacity(raw: object) -> int:
    """``parseDRSCapacity`` of a JSON value: a number within int32 (truncated), or a decimal string
    clamped to int32; anything else (and an out-of-range number) reads as 0, which is refused."""
    if isinstance(raw, bool):
        return 0
    if isinstance(raw, int | float):
        return int(raw) if -(2**31) <= raw <= MAX_INT32 else 0  # JSON numbers are Go float64s
    if isinstance(raw, str):
        try:
            return max(min(int(raw.strip()), MAX_INT32), -(2**31))
        except ValueError:
            return 0
    return 0


def _custom_int(info: Mapping, key: str) -> int:
    """``readCustomInfoInt``: an int, an in-range finite float, or a decimal string; else 0."""
    value = info.get(key)
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if -(2**31) <= value <= MAX_INT32 else 0  # NaN fails both comparisons
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return 0
    return 0


def _device_profiles(dev: DeviceUsage) -> dict[str, str]:
    info = dev.custom_info if isinstance(dev.custom_info, dict) else {}
    profiles = info.get("profiles")
    if not isinstance(profiles, dict):
        return {}
    return {name: pid for name, pid in profiles.items() if isinstance(pid, str)}


def profiles_of(devices: list[DeviceUsage]) -> list[DrsProfile]:
    """``collectDRSProfiles``: every valid profile of the devices, by slices then memory.

    The core share of a profile is its slices over ``maxSlice`` (the devices' ``custominfo``, else
    the largest profile).
    """
    max_slice = max(
        (_custom_int(d.custom_info, "maxSlice") for d in devices if isinstance(d.custom_info, dict)),
        default=0,
    )
    if max_slice <= 0:
        sizes = [parse_profile(name)[0] for d in devices for name in _device_profiles(d)]
        max_slice = max(sizes, default=0)
    if max_slice <= 0:
        return []
    seen: dict[str, DrsProfile] = {}
    for dev in devices:
        for name, pid in _device_profiles(dev).items():
            size, mem = parse_profile(name)
            if size <= 0 or mem <= 0:
                continue
            seen[name] = DrsProfile(name, pid, size, mem, math.ceil(size * 100 / max_slice))
    return sorted(seen.values(), key=lambda p: (p.size, p.memory_gb, p.name))


def profile_fits_int32(profile: DrsProfile) -> bool:
    """v2.10 refuses a profile whose slices, MiB or core share do not fit an int32 (``ModeNotFit``)."""
    return (
        0 < profile.size <= MAX_INT32
        and 0 < profile.memory_gb <= MAX_INT32 // 1024
        and profile.core_percent <= MAX_INT32
    )


def select_profile(devices: list[DeviceUsage], request: ContainerDeviceRequest) -> DrsProfile | None:
    """The profile a request takes: the one with its slice count (``drs-gcu``), else the smallest
    covering its memory (GB, or MiB when larger than twice the largest profile) and core share."""
    candidates = profiles_of(devices)
    if not candidates:
        return None
    if request.mem_percentage_req == MODE_DIRECT:
        return next((c for c in candidates if c.size == request.memreq), None)
    max_gb = candidates[-1].memory_gb
    mem_gb = request.memreq
    if mem_gb <= 0:
        mem_gb = 0
    elif max_gb > 0 and mem_gb > max_gb * 2:
        mem_gb = math.ceil(mem_gb / 1024)  # a large value is MiB
    for c in candidates:
        if mem_gb > 0 and c.memory_gb < mem_gb:
            continue
        if request.coresreq > 0 and c.core_percent < request.coresreq:
            continue
        return c
    return None


def quantity_value(raw: object) -> int | None:
    """``Quantity.Value()``: rounded up to an integer."""
    try:
        return math.ceil(parse_quantity(raw))
    except QuantityError:
        return None


# -- registration -----------------------------------------------------------------------------------
def decode_drs(raw: str, node: Mapping) -> list[DeviceInfo]:
    """``enflame.com/gcu-drs-capacity`` as HAMi's DRS ``GetNodeDevices`` reads it: every device
    entry one device of ``capacity`` slices and the largest profile's memory (at least one device)."""
    profiles, entries = _drs_spec(raw)
    max_slice, max_mem = _largest_profile(profiles, node)
    name = node_name(node)
    devices = [
        _drs_device(entry, pos, name, profiles, max_slice, max_mem) for pos, entry in enumerate(entries)
    ]
    if not devices:
        raise InventoryError(DRS_CAPACITY, f"no drs devices found on node {name}")
    return devices


def _drs_spec(raw: str) -> tuple[dict, list]:
    """(profiles, device entries) of the annotation's JSON object."""
    try:
        spec = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InventoryError(DRS_CAPACITY, f"invalid JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise InventoryError(DRS_CAPACITY, "expected an object with devices and profiles")
    profiles = spec.get("profiles") or {}
    entries = spec.get("devices") or []
    if not isinstance(profiles, dict) or not isinstance(entries, list):
        raise InventoryError(DRS_CAPACITY, "devices must be a list and profiles an object")
    return profiles, entries


def _largest_profile(profiles: Mapping[str, object], node: Mapping) -> tuple[int, int]:
    """(most slices, most GB) over the profile names; the slices when no name gives memory."""
    max_slice = max_mem = 0
    for name in profiles:
        size, mem = parse_profile(name)
        max_slice, max_mem = max(max_slice, size), max(max_mem, mem)
    if max_slice <= 0:
        raise InventoryError(DRS_CAPACITY, f"no valid drs profiles found on node {node_name(node)}")
    return max_slice, max_mem if max_mem > 0 else max_slice


def _drs_device(
    entry: object, pos: int, name: str, profiles: Mapping[str, object], max_slice: int, max_mem: int
) -> DeviceInfo:
    """One device entry (``index`` falls back to its position, ``minor`` to the index)."""
    if not isinstance(entry, dict):
        raise InventoryError(DRS_CAPACITY, f"device {pos} is not an object")
    try:
        index = int(str(entry.get("index", "")))
    except ValueError:
        index = pos
    slices = _drs_capacity(entry.get("capacity"))
    if slices <= 0:
        raise InventoryError(DRS_CAPACITY, f"invalid drs capacity on node {name}")
    minor = str(entry.get("minor") or "").strip() or str(index)
    return DeviceInfo(
        id=f"{name}-enflame-drs-{index}",
        index=index,
        count=int32(slices),
        devmem=int32(max_mem * 1024),
        devcore=100,
        type=ENFLAME,
        health=True,
        device_vendor=ENFLAME,
        custom_info={"minor": minor, "index": str(index), "profiles": dict(profiles), "maxSlice": max_slice},
    )


# -- fit and usage ----------------------------------------------------------------------------------
def drs_reason(
    dev: DeviceUsage,
    request: ContainerDeviceRequest,
    annotations: Mapping[str, str],
    mutex: bool,
    memory: int,
    cores: int,
    allows: UuidCheck,
) -> str:
    """The DRS Fit checks in v2.10's order; cores only count on a device that registers cores;
    ``allows``: the release's UUID-list check."""
    if not dev.health:
        return R.CARD_NOT_HEALTH
    if request.type != ENFLAME:
        return R.CARD_TYPE_MISMATCH
    if not allows(annotations, dev.id, ENFLAME_USE_UUID, ENFLAME_NOUSE_UUID):
        return R.CARD_UUID_MISMATCH
    if dev.count <= dev.used:
        return R.CARD_TIME_SLICING_EXHAUSTED
    if mutex and dev.used > 0:
        return R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT
    if dev.totalmem - dev.usedmem < memory:
        return R.CARD_INSUFFICIENT_MEMORY
    if dev.totalcore > 0 and dev.totalcore - dev.usedcores < cores:
        return R.CARD_INSUFFICIENT_CORE
    return ""


def profile_slices(dev: DeviceUsage, chosen: ContainerDevice) -> int:
    """The chosen profile's slices (found by its memory; HAMi carries them in the chosen device's
    ``drsSlice``), clamped to int32 like HAMi's ``clampToInt32``; 1 when no profile matches."""
    for profile in profiles_of([dev]):
        if profile.memory_gb * 1024 == chosen.usedmem:
            return min(profile.size, MAX_INT32)
    return 1


# -- profile rows -----------------------------------------------------------------------------------
def _render_drs(vendor: Any, data: RenderInput, count_name: str) -> Registration:
    """``{"devices": [...], "profiles": {...}}`` on ``enflame.com/gcu-drs-capacity``."""
    profiles = first_extra(data.rows, "profiles") or {}
    out = Registration()
    out.annotations[DRS_CAPACITY] = orjson.dumps(
        {
            "devices": [
                {"index": str(d.index), "minor": str(d.index), "capacity": str(d.count)} for d in data.devices
            ],
            "profiles": dict(profiles),  # type: ignore[call-overload]
        }
    ).decode()
    out.capacity[count_name] = str(data.slots)
    return out


def _check_drs_row(row: Row, extra: Mapping[str, Any]) -> dict[str, str]:
    """The node's DRS profiles must parse; devmem is the largest profile's memory."""
    profiles = extra.get("profiles")
    if not isinstance(profiles, Mapping) or not profiles:
        return {
            "extra": 'extra.profiles (the node\'s DRS profiles, e.g. {"1g.6gb": "0"}) is required for Enflame'
        }
    if not all(isinstance(v, str) for v in profiles.values()):
        return {"extra": "extra.profiles must map profile names to string ids"}
    sizes = [parse_profile(str(name)) for name in profiles]
    bad = [name for name, (size, _mem) in zip(profiles, sizes, strict=True) if size <= 0]
    if bad:
        return {"extra": f"extra.profiles: {bad[0]!r} is not a DRS profile name like '3g.24gb'"}
    max_slice = max(s for s, _ in sizes)
    max_mem = max(m for _, m in sizes) or max_slice
    if row.get("devmem") != max_mem * 1024:
        return {
            "devmem": f"devmem must be {max_mem * 1024} MiB for Enflame: HAMi takes the largest DRS profile's memory ({max_mem} GB)"
        }
    return {}


def _check_drs_rows(rows: Sequence[Row]) -> str:
    profiles = {
        orjson.dumps((r.get("extra") or {}).get("profiles"), option=orjson.OPT_SORT_KEYS) for r in rows
    }
    if len(profiles) > 1:
        return (
            "extra.profiles differ between rows: Enflame DRS profiles are per node, give every row the same"
        )
    return ""


def _drs_row_extra(dev: DeviceInfo) -> dict[str, Any]:
    info = dev.custom_info if isinstance(dev.custom_info, dict) else {}
    return {"profiles": dict(info.get("profiles") or {})}


DRS_PROFILE = ProfileFields(
    label="Enflame DRS vGCU",
    device_noun="GCU",
    panels=(MEMORY_PANEL, CORES_PANEL, CapacityPanel("DRS slices", "count", "used")),
    codec="enflame-drs",
    help="enflame.com/gcu-drs-capacity: count = the device's DRS slices; devmem = the largest profile's memory",
    render=_render_drs,
    extras={
        "profiles": 'the node\'s DRS profiles, name -> id, e.g. {"1g.6gb": "0", "3g.24gb": "1"} (the same on every row)'
    },
    fixed={"type": ENFLAME, "devcore": 100, "numa": 0},
    check_row=_check_drs_row,
    check_rows=_check_drs_rows,
    row_extra=_drs_row_extra,
    count_field="resource_drs_name",
)
