"""The pre-2.8 registration format, ``id,count,devmem,devcore,type,numa,health[,index,mode]:`` per device
(HAMi ``DecodeNodeDevices`` / ``EncodeNodeDevices``), which v2.10 still decodes for Hygon and Iluvatar;
on the NVIDIA key it is malformed, and ``looks_legacy`` lets the JSON codec say so.

Numbers and booleans are parsed as Go's ``strconv`` parses them, errors worded as HAMi wraps them.
"""

from __future__ import annotations

import re

from .gojson import AnnotationError
from .model import DeviceInfo
from .policy import go_quote

__all__ = ["looks_legacy", "decode_legacy", "encode_legacy"]

_GO_DECIMAL = re.compile(r"[+-]?[0-9]+")


def looks_legacy(value: str) -> bool:
    """True for a pre-2.8 colon/comma value (``id,count,devmem,...:``) rather than JSON."""
    text = value.strip()
    return bool(text) and text[0] not in '[{"' and ":" in text and "," in text


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
