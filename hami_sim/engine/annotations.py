"""Registration annotation codecs (HAMi ``pkg/device/devices.go`` and ``pkg/device/nvidia``).

- NVIDIA JSON (v2.8+): decoded with Go ``encoding/json`` semantics: keys matched case-insensitively,
  unknown keys ignored, missing fields zero (``health`` absent = false), wrong JSON types rejected
  with Go's wording. Encoded with Go's field order and ``omitempty``.
- Pair scores (``hami.io/node-nvidia-score``) and device cordon (``hami.io/device-cordon``).

Go's own rules (type and syntax errors, key folding) are in ``gojson``; the legacy 7/9-field
colon/comma format (v2.4-v2.7) in ``legacy_codec``. Both are re-exported here, the codecs' one import.
"""

from __future__ import annotations

from typing import Any

import orjson

from .gojson import INT, INT32, UINT, AnnotationError, fold, go_int, go_json_syntax_error, go_str, json_kind
from .legacy_codec import decode_legacy, encode_legacy, looks_legacy
from .model import DeviceInfo, MigPlacement, MigProfile
from .registration_templates import rebuilt, remember, split_ids

__all__ = [
    "NVIDIA_REGISTER",
    "NVIDIA_PAIR_SCORE",
    "DEVICE_CORDON",
    "AnnotationError",
    "decode_device_json",
    "encode_device_json",
    "decode_legacy",
    "encode_legacy",
    "decode_pair_scores",
    "encode_pair_scores",
    "parse_cordon",
    "looks_legacy",
    "go_json_syntax_error",
]

NVIDIA_REGISTER = "hami.io/node-nvidia-register"
NVIDIA_PAIR_SCORE = "hami.io/node-nvidia-score"
DEVICE_CORDON = "hami.io/device-cordon"


# Go struct field -> (json name, Go type, range); order is Go's emit order.
_DEVICE_FIELDS: tuple[tuple[str, str, str, tuple[int, int] | None], ...] = (
    ("id", "id", "string", None),
    ("index", "index", "uint", UINT),
    ("count", "count", "int32", INT32),
    ("devmem", "devmem", "int32", INT32),
    ("devcore", "devcore", "int32", INT32),
    ("type", "type", "string", None),
    ("numa", "numa", "int", INT),
    ("mode", "mode", "string", None),
    ("mig_profiles", "migProfiles", "[]MigProfile", None),
    ("health", "health", "bool", None),
    ("device_vendor", "devicevendor", "string", None),
    ("custom_info", "custominfo", "map[string]interface {}", None),
)
_DEVICE_KEYS = {
    json_name.lower(): (attr, json_name, gotype, rng) for attr, json_name, gotype, rng in _DEVICE_FIELDS
}


def _decode_mig_profiles(value: Any) -> tuple[MigProfile, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise AnnotationError(
            f"json: cannot unmarshal {json_kind(value)} into Go struct field DeviceInfo.migProfiles of type []device.MigProfile"
        )
    profiles = []
    for item in value:
        if item is None:
            item = {}  # Go: null into a struct element leaves the zero value
        if not isinstance(item, dict):
            raise AnnotationError(
                f"json: cannot unmarshal {json_kind(item)} into Go struct field DeviceInfo.migProfiles of type device.MigProfile"
            )
        lowered = {k.lower(): v for k, v in item.items()}
        placements = []
        raw_placements = lowered.get("placements") or []
        if not isinstance(raw_placements, list):
            raise AnnotationError(
                f"json: cannot unmarshal {json_kind(raw_placements)} into Go struct field MigProfile.placements of type []device.MigPlacement"
            )
        for pl in raw_placements:
            if pl is None:
                pl = {}
            if not isinstance(pl, dict):
                raise AnnotationError(
                    f"json: cannot unmarshal {json_kind(pl)} into Go struct field MigProfile.placements of type device.MigPlacement"
                )
            pll = {k.lower(): v for k, v in pl.items()}
            placements.append(
                MigPlacement(
                    go_int(pll.get("start", 0), "MigPlacement", "start", "int", INT),
                    go_int(pll.get("size", 0), "MigPlacement", "size", "int", INT),
                )
            )
        profiles.append(
            MigProfile(
                name=go_str(lowered.get("name", ""), "MigProfile", "name"),
                memory_mb=go_int(lowered.get("memorymb", 0), "MigProfile", "memoryMB", "int32", INT32),
                core=go_int(lowered.get("core", 0), "MigProfile", "core", "int32", INT32),
                slice_count=go_int(lowered.get("slicecount", 0), "MigProfile", "sliceCount", "int", INT),
                placements=tuple(placements),
            )
        )
    return tuple(profiles)


def decode_device_json(value: str, vendor: str = "") -> list[DeviceInfo]:
    """Decode a JSON device list (``[]*DeviceInfo``). Raises ``AnnotationError`` with Go's wording.

    An empty list decodes to ``[]``; the vendor decides whether that is an error. A registration
    that is a remembered template's but for its UUIDs is rebuilt from it (``registration_templates``).
    """
    split = split_ids(value, vendor)
    found = rebuilt(split) if split is not None else None
    if found is not None:
        return found
    devices, common = _decode_devices(_load_list(value), vendor)
    if split is not None and common and split[1] == [d.id for d in devices]:
        devices = remember(split[0], devices, vendor)
    return devices


def _load_list(value: str) -> list:
    """The JSON value as a list (``null`` as none), or ``AnnotationError`` with Go's wording."""
    try:
        data = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        if looks_legacy(value):
            raise AnnotationError("pre-2.8 colon-separated format; HAMi 2.8+ reads JSON") from None
        raise AnnotationError(go_json_syntax_error(value) or f"invalid JSON: {exc}") from None
    if data is None:
        return []
    if not isinstance(data, list):
        raise AnnotationError(
            f"json: cannot unmarshal {json_kind(data)} into Go value of type []*device.DeviceInfo"
        )
    return data


def _decode_device(item: object, vendor: str) -> DeviceInfo:
    """One device entry the fast path declined: Go's decoding, field by field, with Go's errors."""
    if item is None:
        raise AnnotationError("null device entry")
    if not isinstance(item, dict):
        raise AnnotationError(
            f"json: cannot unmarshal {json_kind(item)} into Go value of type device.DeviceInfo"
        )
    fields: dict[str, Any] = {"id": ""}
    for key, raw in fold(item).items():
        spec = _DEVICE_KEYS.get(key)
        if spec is None or raw is None:
            continue  # unknown keys are ignored; null leaves the zero value, as in Go
        fields[spec[0]] = _device_field(spec, raw)
    if vendor:
        fields["device_vendor"] = vendor
    return DeviceInfo(**fields)


def _device_field(spec: tuple, raw: object) -> object:
    """One field's value as Go decodes it (the device is built from them at once: it is frozen)."""
    _, json_name, gotype, rng = spec
    if gotype == "string":
        return go_str(raw, "DeviceInfo", json_name)
    if gotype == "bool":
        if not isinstance(raw, bool):
            raise AnnotationError(
                f"json: cannot unmarshal {json_kind(raw)} into Go struct field DeviceInfo.{json_name} of type bool"
            )
        return raw
    if gotype == "[]MigProfile":
        return _decode_mig_profiles(raw)
    if gotype.startswith("map"):
        if not isinstance(raw, dict):
            raise AnnotationError(
                f"json: cannot unmarshal {json_kind(raw)} into Go struct field DeviceInfo.{json_name} of type {gotype}"
            )
        return raw
    assert rng is not None
    return go_int(raw, "DeviceInfo", json_name, gotype, rng)


_FAST_KEYS = frozenset({"id", "index", "count", "devmem", "devcore", "type", "numa", "mode", "health"})
#: the exact types of a common entry's values (uid, type, mode, health, index, count, devmem, devcore,
#: numa): one tuple comparison instead of nine checks (and faster)
_COMMON_TYPES = (str, str, str, bool, int, int, int, int, int)


def _decode_devices(data: list, vendor: str) -> tuple[list[DeviceInfo], bool]:
    """Every entry of a decoded list, and whether each was the common one (what the device plugin
    writes), decoded in this loop.

    An unusual entry (other casing, MIG profiles, nulls, wrong types, out-of-range numbers) goes to
    the general decoder, which produces the exact Go error or value. orjson gives exact ``int``,
    ``str`` and ``bool`` objects, so one comparison of their types and one range check per number
    decide.
    One loop over the list rather than a call per entry: this runs for every device of every node
    new to the process.
    """
    devices: list[DeviceInfo] = []
    append = devices.append
    only_known = _FAST_KEYS.issuperset
    common = True
    for item in data:
        if type(item) is dict and only_known(item):
            get = item.get
            uid, index, count = get("id", ""), get("index", 0), get("count", 0)
            devmem, devcore, typ = get("devmem", 0), get("devcore", 0), get("type", "")
            numa, mode, health = get("numa", 0), get("mode", ""), get("health", False)
            kinds = (
                type(uid), type(typ), type(mode), type(health), type(index), type(count), type(devmem),
                type(devcore), type(numa),
            )  # fmt: skip
            if (
                kinds == _COMMON_TYPES
                and 0 <= index < 9223372036854775808
                and -2147483648 <= count < 2147483648
                and -2147483648 <= devmem < 2147483648
                and -2147483648 <= devcore < 2147483648
                and -9223372036854775808 <= numa < 9223372036854775808
            ):
                append(
                    DeviceInfo(uid, index, count, devmem, devcore, typ, numa, mode, health, (), vendor, None)
                )
                continue
        common = False
        append(_decode_device(item, vendor))
    return devices, common


def _mig_profile_json(profile: MigProfile) -> dict[str, Any]:
    return {
        "name": profile.name,
        "memoryMB": profile.memory_mb,
        "core": profile.core,
        "sliceCount": profile.slice_count,
        "placements": [{"start": p.start, "size": p.size} for p in profile.placements],
    }


def encode_device_json(devices: list[DeviceInfo], *, include_vendor: bool = False) -> str:
    """Encode as the device plugin would (Go field order, every field ``omitempty``); the vendor only
    with ``include_vendor`` (HAMi's device plugins do not write it)."""
    fields = [
        (attr, name) for attr, name, _, _ in _DEVICE_FIELDS if include_vendor or attr != "device_vendor"
    ]
    out = []
    for dev in devices:
        obj: dict[str, Any] = {}
        for attr, name in fields:
            value = getattr(dev, attr)
            if value:
                obj[name] = [_mig_profile_json(p) for p in value] if attr == "mig_profiles" else value
        out.append(obj)
    return orjson.dumps(out).decode()


def decode_pair_scores(value: str) -> dict[str, dict[str, int]]:
    """``hami.io/node-nvidia-score``: ``[{"uuid": ..., "score": {other: n}}]`` -> ``{uuid: {other: n}}``."""
    try:
        data = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise AnnotationError(go_json_syntax_error(value) or f"invalid JSON: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, list):
        raise AnnotationError(
            f"json: cannot unmarshal {json_kind(data)} into Go value of type []*device.DevicePairScore"
        )
    out: dict[str, dict[str, int]] = {}
    for item in data:
        if not isinstance(item, dict):
            raise AnnotationError(
                f"json: cannot unmarshal {json_kind(item)} into Go value of type device.DevicePairScore"
            )
        lowered = {k.lower(): v for k, v in item.items()}
        uuid = go_str(lowered.get("uuid", ""), "DevicePairScore", "uuid")
        scores = lowered.get("score") or {}
        if not isinstance(scores, dict):
            raise AnnotationError(
                f"json: cannot unmarshal {json_kind(scores)} into Go struct field DevicePairScore.score of type map[string]int"
            )
        out[uuid] = {k: go_int(v, "DevicePairScore", "score", "int", INT) for k, v in scores.items()}
    return out


def encode_pair_scores(scores: dict[str, dict[str, int]]) -> str:
    return orjson.dumps([{"uuid": uuid, "score": other} for uuid, other in scores.items()]).decode()


def parse_cordon(value: str | None) -> frozenset[str]:
    """``hami.io/device-cordon``: comma-separated UUIDs, trimmed, empties ignored."""
    if not value:
        return _NO_CORDON
    return frozenset(part.strip() for part in value.split(",") if part.strip())


#: no device cordoned (one object: ``frozenset()`` makes a new one, and every inventory holds one)
_NO_CORDON: frozenset[str] = frozenset()
