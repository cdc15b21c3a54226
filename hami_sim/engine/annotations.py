"""Registration annotation codecs (HAMi ``pkg/device/devices.go`` and ``pkg/device/nvidia``).

- NVIDIA JSON (v2.8+): decoded with Go ``encoding/json`` semantics: keys matched case-insensitively,
  unknown keys ignored, missing fields zero (``health`` absent = false), wrong JSON types rejected
  with Go's wording. Encoded with Go's field order and ``omitempty``.
- The legacy 7/9-field colon/comma format (v2.4-v2.7), which v2.10 still decodes for Hygon and
  Iluvatar only; on the NVIDIA key it is malformed and we say it is the pre-2.8 format.
- Pair scores (``hami.io/node-nvidia-score``) and device cordon (``hami.io/device-cordon``).
"""

from __future__ import annotations

import dataclasses
import re
from operator import attrgetter
from typing import Any

import orjson

from .lru import ByteLRU, approx_size, cache_bytes_from_env
from .model import DeviceInfo, MigPlacement, MigProfile
from .policy import go_quote

__all__ = [
    "NVIDIA_REGISTER",
    "NVIDIA_PAIR_SCORE",
    "DEVICE_CORDON",
    "AnnotationError",
    "decode_device_json",
    "clear_templates",
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

_INT32 = (-(2**31), 2**31 - 1)
_UINT = (0, 2**64 - 1)
_INT = (-(2**63), 2**63 - 1)

# Go struct field -> (json name, Go type, range); order is Go's emit order.
_DEVICE_FIELDS: tuple[tuple[str, str, str, tuple[int, int] | None], ...] = (
    ("id", "id", "string", None),
    ("index", "index", "uint", _UINT),
    ("count", "count", "int32", _INT32),
    ("devmem", "devmem", "int32", _INT32),
    ("devcore", "devcore", "int32", _INT32),
    ("type", "type", "string", None),
    ("numa", "numa", "int", _INT),
    ("mode", "mode", "string", None),
    ("mig_profiles", "migProfiles", "[]MigProfile", None),
    ("health", "health", "bool", None),
    ("device_vendor", "devicevendor", "string", None),
    ("custom_info", "custominfo", "map[string]interface {}", None),
)
_DEVICE_KEYS = {
    json_name.lower(): (attr, json_name, gotype, rng) for attr, json_name, gotype, rng in _DEVICE_FIELDS
}


_GO_DECIMAL = re.compile(r"[+-]?[0-9]+")


class AnnotationError(ValueError):
    """A registration value that does not decode; the message is the parser's detail."""


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _go_int(value: Any, struct: str, field: str, gotype: str, rng: tuple[int, int]) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AnnotationError(
            f"json: cannot unmarshal {_json_kind(value)} into Go struct field {struct}.{field} of type {gotype}"
        )
    if isinstance(value, float) or not rng[0] <= value <= rng[1]:
        shown = repr(value) if isinstance(value, float) else str(value)
        raise AnnotationError(
            f"json: cannot unmarshal number {shown} into Go struct field {struct}.{field} of type {gotype}"
        )
    return value


def _go_str(value: Any, struct: str, field: str) -> str:
    if not isinstance(value, str):
        raise AnnotationError(
            f"json: cannot unmarshal {_json_kind(value)} into Go struct field {struct}.{field} of type string"
        )
    return value


def _fold(obj: dict) -> dict[str, Any]:
    """Go's decoder: every key is matched to its field case-insensitively and assigned in order.

    So a later spelling of the same field overwrites an earlier one, and ``null`` leaves the field
    as it was (device-model.md 1.2(a): keys match case-insensitively).
    """
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if value is not None:
            out[key.lower()] = value
    return out


def _decode_mig_profiles(value: Any) -> tuple[MigProfile, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise AnnotationError(
            f"json: cannot unmarshal {_json_kind(value)} into Go struct field DeviceInfo.migProfiles of type []device.MigProfile"
        )
    profiles = []
    for item in value:
        if item is None:
            item = {}  # Go: null into a struct element leaves the zero value
        if not isinstance(item, dict):
            raise AnnotationError(
                f"json: cannot unmarshal {_json_kind(item)} into Go struct field DeviceInfo.migProfiles of type device.MigProfile"
            )
        lowered = {k.lower(): v for k, v in item.items()}
        placements = []
        raw_placements = lowered.get("placements") or []
        if not isinstance(raw_placements, list):
            raise AnnotationError(
                f"json: cannot unmarshal {_json_kind(raw_placements)} into Go struct field MigProfile.placements of type []device.MigPlacement"
            )
        for pl in raw_placements:
            if pl is None:
                pl = {}
            if not isinstance(pl, dict):
                raise AnnotationError(
                    f"json: cannot unmarshal {_json_kind(pl)} into Go struct field MigProfile.placements of type device.MigPlacement"
                )
            pll = {k.lower(): v for k, v in pl.items()}
            placements.append(
                MigPlacement(
                    _go_int(pll.get("start", 0), "MigPlacement", "start", "int", _INT),
                    _go_int(pll.get("size", 0), "MigPlacement", "size", "int", _INT),
                )
            )
        profiles.append(
            MigProfile(
                name=_go_str(lowered.get("name", ""), "MigProfile", "name"),
                memory_mb=_go_int(lowered.get("memorymb", 0), "MigProfile", "memoryMB", "int32", _INT32),
                core=_go_int(lowered.get("core", 0), "MigProfile", "core", "int32", _INT32),
                slice_count=_go_int(lowered.get("slicecount", 0), "MigProfile", "sliceCount", "int", _INT),
                placements=tuple(placements),
            )
        )
    return tuple(profiles)


def looks_legacy(value: str) -> bool:
    """True for a pre-2.8 colon/comma value (``id,count,devmem,...:``) rather than JSON."""
    text = value.strip()
    return bool(text) and text[0] not in '[{"' and ":" in text and "," in text


def decode_device_json(value: str, vendor: str = "") -> list[DeviceInfo]:
    """Decode a JSON device list (``[]*DeviceInfo``). Raises ``AnnotationError`` with Go's wording.

    An empty list decodes to ``[]``; the vendor decides whether that is an error.
    """
    key: tuple[str, ...] | None = None
    ids: list[str] = []
    if value.isascii() and len(value) <= _TEMPLATE_MAX_CHARS:
        parts = _DEVICE_ID.split(value)
        ids, key = parts[1::2], (vendor, *parts[0::2])
        template = _TEMPLATES.get(key)
        if template is not None:
            return [
                DeviceInfo(uid, *rest, (), vendor, None, template)
                for uid, rest in zip(ids, template.fields, strict=True)
            ]
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
            f"json: cannot unmarshal {_json_kind(data)} into Go value of type []*device.DeviceInfo"
        )
    devices, common = _decode_devices(data, vendor)
    if key is not None and common and ids == [d.id for d in devices]:
        template = RegistrationTemplate(tuple(map(_TEMPLATE_FIELDS, devices)))
        if _TEMPLATES.put(key, template, approx_size(key, template.fields) + 64):
            for d in devices:
                d.template = template
    return devices


class RegistrationTemplate:
    """A registration's devices but their UUIDs, shared by the devices rebuilt from it: equal by
    identity, so a node's devices name their shape in one reference (``Simulator._shape``)."""

    __slots__ = ("fields", "__weakref__")

    def __init__(self, fields: tuple[tuple[int, int, int, int, str, int, str, bool], ...]) -> None:
        self.fields = fields


# Registrations that differ only in their devices' UUIDs (the template nodes of one group) decode to
# the same devices but those UUIDs. A registration is split around each ``"id":"<uuid>"`` (a UUID
# without quotes, escapes or control characters reads as itself); when the text between them equals
# that of one decoded before, where every entry was common (``_decode_devices``: flat, known keys, so
# each match is an entry's one ``id``) and the matches were its UUIDs in order, the JSON is the same
# but for those strings: its devices are rebuilt from the remembered fields. ASCII only (no text
# orjson could refuse), a few KB per entry, a few hundred entries (groups x vendors).
_DEVICE_ID = re.compile(r'"id":"([^"\\\x00-\x1f]*)"')
#: what a template keeps of a device: the fields a fit reads but the UUID (``DeviceInfo.SHAPE``) that
#: a common entry sets (MIG profiles and vendor data make an entry uncommon; the vendor is the
#: decoder's), in ``DeviceInfo``'s positional order (rebuilt as ``DeviceInfo(uid, *fields, ...)``)
_TEMPLATE_NAMES = tuple(f for f in DeviceInfo.SHAPE if f not in ("mig_profiles", "device_vendor"))
assert tuple(f.name for f in dataclasses.fields(DeviceInfo))[1:9] == _TEMPLATE_NAMES, _TEMPLATE_NAMES
_TEMPLATE_FIELDS = attrgetter(*_TEMPLATE_NAMES)
_TEMPLATE_MAX_CHARS = 16384
#: what it buys: a cold CA call over 1,000 8-GPU templates of one group decodes in ~44 ms instead of
#: ~54 ms (``bench/filter_bench.py`` cold). One per process, sized from ``HAMI_SIM_CACHE_BYTES`` (a
#: 64th of it, 2 MiB by default; ``0`` turns it off), since the vendors decode without a simulator.
_TEMPLATES: ByteLRU[tuple[str, ...], RegistrationTemplate] = ByteLRU(
    cache_bytes_from_env() // 64, name="registration templates"
)


def clear_templates() -> None:
    """Forget the remembered registrations (``Simulator.clear_caches``: every node new again)."""
    _TEMPLATES.clear()


def _decode_device(item: object, vendor: str) -> DeviceInfo:
    """One device entry the fast path declined: Go's decoding, field by field, with Go's errors."""
    if item is None:
        raise AnnotationError("null device entry")
    if not isinstance(item, dict):
        raise AnnotationError(
            f"json: cannot unmarshal {_json_kind(item)} into Go value of type device.DeviceInfo"
        )
    info = DeviceInfo(id="")
    for key, raw in _fold(item).items():
        spec = _DEVICE_KEYS.get(key)
        if spec is None or raw is None:
            continue  # unknown keys are ignored; null leaves the zero value, as in Go
        _set_device_field(info, spec, raw)
    if vendor:
        info.device_vendor = vendor
    return info


def _set_device_field(info: DeviceInfo, spec: tuple, raw: object) -> None:
    attr, json_name, gotype, rng = spec
    if gotype == "string":
        setattr(info, attr, _go_str(raw, "DeviceInfo", json_name))
    elif gotype == "bool":
        if not isinstance(raw, bool):
            raise AnnotationError(
                f"json: cannot unmarshal {_json_kind(raw)} into Go struct field DeviceInfo.{json_name} of type bool"
            )
        info.health = raw
    elif gotype == "[]MigProfile":
        info.mig_profiles = _decode_mig_profiles(raw)
    elif gotype.startswith("map"):
        if not isinstance(raw, dict):
            raise AnnotationError(
                f"json: cannot unmarshal {_json_kind(raw)} into Go struct field DeviceInfo.{json_name} of type {gotype}"
            )
        info.custom_info = raw
    else:
        assert rng is not None
        setattr(info, attr, _go_int(raw, "DeviceInfo", json_name, gotype, rng))


_FAST_KEYS = frozenset({"id", "index", "count", "devmem", "devcore", "type", "numa", "mode", "health"})


def _decode_devices(data: list, vendor: str) -> tuple[list[DeviceInfo], bool]:
    """Every entry of a decoded list, and whether each was the common one (what the device plugin
    writes), decoded in this loop.

    An unusual entry (other casing, MIG profiles, nulls, wrong types, out-of-range numbers) goes to
    the general decoder, which produces the exact Go error or value. orjson gives exact ``int``,
    ``str`` and ``bool`` objects, so one type check per field and one range check per number decide.
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
            if (
                type(uid) is str
                and type(typ) is str
                and type(mode) is str
                and type(health) is bool
                and type(index) is int
                and type(count) is int
                and type(devmem) is int
                and type(devcore) is int
                and type(numa) is int
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
    """Encode as the device plugin would (Go field order, every field ``omitempty``)."""
    out = []
    for dev in devices:
        obj: dict[str, Any] = {}
        if dev.id:
            obj["id"] = dev.id
        if dev.index:
            obj["index"] = dev.index
        if dev.count:
            obj["count"] = dev.count
        if dev.devmem:
            obj["devmem"] = dev.devmem
        if dev.devcore:
            obj["devcore"] = dev.devcore
        if dev.type:
            obj["type"] = dev.type
        if dev.numa:
            obj["numa"] = dev.numa
        if dev.mode:
            obj["mode"] = dev.mode
        if dev.mig_profiles:
            obj["migProfiles"] = [_mig_profile_json(p) for p in dev.mig_profiles]
        if dev.health:
            obj["health"] = True
        if include_vendor and dev.device_vendor:
            obj["devicevendor"] = dev.device_vendor
        if dev.custom_info:
            obj["custominfo"] = dev.custom_info
        out.append(obj)
    return orjson.dumps(out).decode()


_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_GO_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def _strconv_int(text: str, name: str, func: str, bits: int) -> int:
    """Go ``strconv.ParseInt(text, 10, bits)`` / ``Atoi``: optional sign and ASCII digits only (no
    spaces, no underscores); the error wraps strconv's, as ``DecodeNodeDevices`` reports it."""
    if not _GO_DECIMAL.fullmatch(text):
        raise AnnotationError(
            f"invalid {name} field: strconv.{func}: parsing {go_quote(text)}: invalid syntax"
        )
    value = int(text)
    limit = 1 << (bits - 1)
    if not -limit <= value < limit:
        raise AnnotationError(
            f"invalid {name} field: strconv.{func}: parsing {go_quote(text)}: value out of range"
        )
    return value


def _strconv_bool(text: str, name: str) -> bool:
    """Go ``strconv.ParseBool``."""
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    raise AnnotationError(
        f"invalid {name} field: strconv.ParseBool: parsing {go_quote(text)}: invalid syntax"
    )


def decode_legacy(value: str, vendor: str = "") -> list[DeviceInfo]:
    """``DecodeNodeDevices``: the 7-field (<=v2.4) or 9-field (v2.5-v2.7) colon/comma format."""
    if ":" not in value:
        raise AnnotationError("node annotation missing device separator")
    devices = []
    for segment in value.split(":"):
        if not segment:
            continue
        if "," not in segment:
            raise AnnotationError(f"malformed node annotation segment: {segment!r}".replace("'", '"'))
        fields = segment.split(",")
        if len(fields) not in (7, 9):
            raise AnnotationError(f"unexpected field count {len(fields)} in node annotation")

        # Go's order: ParseInt count/memory/core (int32), ParseBool health, then Atoi numa
        count = _strconv_int(fields[1], "count", "ParseInt", 32)
        devmem = _strconv_int(fields[2], "memory", "ParseInt", 32)
        devcore = _strconv_int(fields[3], "core", "ParseInt", 32)
        health = _strconv_bool(fields[6], "health")
        numa = _strconv_int(fields[5], "numa", "Atoi", 64)
        index, mode = 0, "hami-core"
        if len(fields) == 9:
            index = _strconv_int(fields[7], "index", "Atoi", 64)
            if index < 0:
                raise AnnotationError(f"index field must not be negative: {index}")
            mode = fields[8]
        devices.append(
            DeviceInfo(
                id=fields[0],
                index=index,
                count=count,
                devmem=devmem,
                devcore=devcore,
                type=fields[4],
                numa=numa,
                mode=mode,
                health=health,
                device_vendor=vendor,
            )
        )
    return devices


def encode_legacy(devices: list[DeviceInfo]) -> str:
    """``EncodeNodeDevices`` in the 9-field form."""
    return "".join(
        f"{d.id},{d.count},{d.devmem},{d.devcore},{d.type},{d.numa},{'true' if d.health else 'false'},{d.index},{d.mode}:"
        for d in devices
    )


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
            f"json: cannot unmarshal {_json_kind(data)} into Go value of type []*device.DevicePairScore"
        )
    out: dict[str, dict[str, int]] = {}
    for item in data:
        if not isinstance(item, dict):
            raise AnnotationError(
                f"json: cannot unmarshal {_json_kind(item)} into Go value of type device.DevicePairScore"
            )
        lowered = {k.lower(): v for k, v in item.items()}
        uuid = _go_str(lowered.get("uuid", ""), "DevicePairScore", "uuid")
        scores = lowered.get("score") or {}
        if not isinstance(scores, dict):
            raise AnnotationError(
                f"json: cannot unmarshal {_json_kind(scores)} into Go struct field DevicePairScore.score of type map[string]int"
            )
        out[uuid] = {k: _go_int(v, "DevicePairScore", "score", "int", _INT) for k, v in scores.items()}
    return out


def encode_pair_scores(scores: dict[str, dict[str, int]]) -> str:
    return orjson.dumps([{"uuid": uuid, "score": other} for uuid, other in scores.items()]).decode()


def parse_cordon(value: str | None) -> frozenset[str]:
    """``hami.io/device-cordon``: comma-separated UUIDs, trimmed, empties ignored."""
    if not value:
        return frozenset()
    return frozenset(part.strip() for part in value.split(",") if part.strip())


# -- Go encoding/json syntax errors -------------------------------------------------------------------
# ``json.Unmarshal`` validates the whole value first (``checkValid``) and reports the first bad byte as
# ``invalid character 'x' <context>`` or ``unexpected end of JSON input``. orjson's messages differ, so
# when orjson rejects a value we re-scan it byte by byte with Go's scanner states for Go's wording.

_WS = frozenset(b" \t\r\n")
_DIGITS = frozenset(b"0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES = frozenset(b'bfnrt\\/"')
_LITERALS = {0x74: "true", 0x66: "false", 0x6E: "null"}
_NAMED_ESCAPES = {
    0x07: "\\a",
    0x08: "\\b",
    0x0C: "\\f",
    0x0A: "\\n",
    0x0D: "\\r",
    0x09: "\\t",
    0x0B: "\\v",
    0x5C: "\\\\",
}


def _go_quote_char(c: int) -> str:
    """Go's ``quoteChar``: the byte as a rune, quoted like ``strconv.Quote`` but in single quotes."""
    if c == 0x27:
        return "'\\''"
    if c == 0x22:
        return "'\"'"
    if c in _NAMED_ESCAPES:
        return f"'{_NAMED_ESCAPES[c]}'"
    if c < 0x20 or c == 0x7F:
        return f"'\\x{c:02x}'"
    if 0x80 <= c <= 0xA0 or c == 0xAD:  # not printable for strconv.IsPrint
        return f"'\\u{c:04x}'"
    return f"'{chr(c)}'"


class _GoSyntaxError(Exception):
    pass


def _bad(c: int, context: str) -> _GoSyntaxError:
    return _GoSyntaxError(f"invalid character {_go_quote_char(c)} {context}")


class _GoScanner:
    """Go's ``encoding/json`` scanner reduced to what decides its syntax error messages."""

    __slots__ = ("stack", "state", "literal", "pos")

    def __init__(self) -> None:
        self.stack: list[str] = []  # "key" | "value" (inside an object) | "array"
        self.state = "begin"
        self.literal = ""
        self.pos = 0

    def close(self) -> str:
        self.stack.pop()
        return "end" if self.stack else "top"

    def end_value(self, c: int) -> str:
        if not self.stack:
            return self.step_top(c)
        if c in _WS:
            return "end"
        top = self.stack[-1]
        if top == "key":
            if c == 0x3A:
                self.stack[-1] = "value"
                return "begin"
            raise _bad(c, "after object key")
        if top == "value":
            if c == 0x2C:
                self.stack[-1] = "key"
                return "key_string"
            if c == 0x7D:
                return self.close()
            raise _bad(c, "after object key:value pair")
        if c == 0x2C:
            return "begin"
        if c == 0x5D:
            return self.close()
        raise _bad(c, "after array element")

    @staticmethod
    def step_top(c: int) -> str:
        if c not in _WS:
            raise _bad(c, "after top-level value")
        return "top"

    def begin_value(self, c: int) -> str:
        if c in _WS:
            return "begin"
        if c == 0x7B:
            self.stack.append("key")
            return "key_or_close"
        if c == 0x5B:
            self.stack.append("array")
            return "value_or_close"
        if c == 0x22:
            return "string"
        if c == 0x2D:
            return "neg"
        if c == 0x30:
            return "zero"
        if 0x31 <= c <= 0x39:
            return "int"
        if c in _LITERALS:
            self.literal = _LITERALS[c]
            self.pos = 1
            return "literal"
        raise _bad(c, "looking for beginning of value")

    def step(self, state: str, c: int) -> str:  # noqa: C901 - one branch per Go scanner state
        if state == "begin":
            return self.begin_value(c)
        if state == "value_or_close":
            if c in _WS:
                return state
            return self.close() if c == 0x5D else self.begin_value(c)
        if state == "key_or_close":
            if c in _WS:
                return state
            if c == 0x7D:
                return self.close()
            return self.step("key_string", c)
        if state == "key_string":
            if c in _WS:
                return state
            if c == 0x22:
                return "string"
            raise _bad(c, "looking for beginning of object key string")
        if state == "string":
            if c == 0x22:
                return "end"
            if c == 0x5C:
                return "escape"
            if c < 0x20:
                raise _bad(c, "in string literal")
            return state
        if state == "escape":
            if c in _ESCAPES:
                return "string"
            if c == 0x75:
                self.pos = 0
                return "unicode"
            raise _bad(c, "in string escape code")
        if state == "unicode":
            if c not in _HEX:
                raise _bad(c, "in \\u hexadecimal character escape")
            self.pos += 1
            return "string" if self.pos == 4 else state
        if state == "neg":
            if c == 0x30:
                return "zero"
            if 0x31 <= c <= 0x39:
                return "int"
            raise _bad(c, "in numeric literal")
        if state == "int" and c in _DIGITS:
            return state
        if state in ("int", "zero"):
            if c == 0x2E:
                return "dot"
            if c in (0x65, 0x45):
                return "exp"
            return self.end_value(c)
        if state == "dot":
            if c in _DIGITS:
                return "frac"
            raise _bad(c, "after decimal point in numeric literal")
        if state == "frac":
            if c in _DIGITS:
                return state
            if c in (0x65, 0x45):
                return "exp"
            return self.end_value(c)
        if state == "exp" and c in (0x2B, 0x2D):
            return "exp_sign"
        if state in ("exp", "exp_sign"):
            if c in _DIGITS:
                return "exp_digits"
            raise _bad(c, "in exponent of numeric literal")
        if state == "exp_digits":
            return state if c in _DIGITS else self.end_value(c)
        if state == "literal":
            expected = ord(self.literal[self.pos])
            if c != expected:
                raise _bad(c, f"in literal {self.literal} (expecting {_go_quote_char(expected)})")
            self.pos += 1
            return "end" if self.pos == len(self.literal) else state
        if state == "end":
            return self.end_value(c)
        return self.step_top(c)


def go_json_syntax_error(value: str | bytes) -> str | None:
    """The message Go's ``json.Unmarshal`` gives for ``value`` if it is not valid JSON, else None."""
    data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)
    scanner = _GoScanner()
    state = "begin"
    try:
        for c in data:
            state = scanner.step(state, c)
        if state != "top":
            state = scanner.step(state, 0x20)  # Go's eof(): feed one space, the value must then be complete
    except _GoSyntaxError as exc:
        return str(exc)
    return None if state == "top" else "unexpected end of JSON input"
