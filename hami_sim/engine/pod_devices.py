"""HAMi's container-devices annotation format (``pkg/device/devices.go`` ``DecodeContainerDevices``,
``DecodePodDevices``): what a vendor's *allocated* pod annotation says each container holds, as
``uuid,type,usedmem,usedcores`` with ``:`` after each device and ``;`` after each container.

Numbers are parsed as Go's ``strconv.ParseInt(s, 10, 32)`` parses them and errors worded as HAMi's;
``allocations`` counts what this decodes (and re-exports it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "AllocationError",
    "ContainerDevice",
    "decode_container_devices",
    "decode_pod_devices",
]

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
