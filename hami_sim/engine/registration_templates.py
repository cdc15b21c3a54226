"""Registration templates: registrations that differ only in their devices' UUIDs decode once.

CA's template nodes of one group (and a group's real nodes) register the same devices but for their
UUIDs. A registration is split around each ``"id":"<uuid>"`` (a UUID without quotes, escapes or
control characters reads as itself); when the text between them equals that of one decoded before,
where every entry was common (``annotations._decode_devices``: flat, known keys, so each match is an
entry's one ``id``) and the matches were its UUIDs in order, the JSON is the same but for those
strings: its devices are rebuilt from the remembered fields (``rebuilt``), or kept as the template
and the UUIDs, each device built when read (``known_registration``, ``RebuiltDevices``). ASCII only
(no text orjson could refuse), a few KB per entry, a few hundred entries (groups x vendors).

The memo is a simulator's (``Simulator.templates``, within its one budget): the simulator makes it
the one in force around its one decode site (``activate``), since the vendors' codecs decode without
a simulator. Outside that (a vendor decoding alone, a simulator whose budget is 0) nothing is
remembered and nothing is rebuilt.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar, Token
from operator import attrgetter
from typing import Any, overload

from .frozen import ReadOnly
from .lru import ByteLRU, approx_size
from .model import DeviceInfo

__all__ = [
    "RebuiltDevices",
    "RegistrationTemplate",
    "activate",
    "deactivate",
    "new_templates",
    "known_registration",
    "rebuilt",
    "remember",
    "split_ids",
    "using",
]


def rebuilt(split: tuple[tuple[str, ...], list[str]]) -> list[DeviceInfo] | None:
    """The devices of a registration (``split_ids``) rebuilt from its template; None if none is known."""
    template = _template_of(*split)
    if template is None:
        return None
    build = template.build or _constructor(split[0], template, template.vendor)
    return build(split[1])


def known_registration(value: str, vendor: str) -> RebuiltDevices | None:
    """The devices of a registration that is a remembered template's but for its UUIDs, as the
    template and the UUIDs (built when read: ``RebuiltDevices``); None for any other (no device,
    or not recognised: decode it). What ``decode_device_json`` would return, without building it."""
    split = split_ids(value, vendor)
    if split is None or not split[1]:
        return None
    template = _template_of(*split)
    return RebuiltDevices(template, tuple(split[1])) if template is not None else None


def _template_of(key: tuple[str, ...], ids: list[str]) -> RegistrationTemplate | None:
    """The remembered template of this key, when it has as many devices as ``ids``."""
    memo = _ACTIVE.get()
    template = memo.get(key) if memo is not None else None
    return template if template is not None and len(ids) == len(template.fields) else None


def split_ids(value: str, vendor: str) -> tuple[tuple[str, ...], list[str]] | None:
    """A registration as a template's key (the vendor and the text around each device's UUID) and
    the UUIDs in order; None when it cannot be a template's (not ASCII, or too long) or no memo is
    in force (``activate``)."""
    if _ACTIVE.get() is None or not value.isascii() or len(value) > _TEMPLATE_MAX_CHARS:
        return None
    parts = _DEVICE_ID.split(value)
    return (vendor, *parts[0::2]), parts[1::2]


def remember(key: tuple[str, ...], devices: list[DeviceInfo], vendor: str) -> list[DeviceInfo]:
    """Keep a registration of common entries as a template (if the LRU takes it): its devices
    again, pointing at it (built anew: a device is frozen), or ``devices`` when not kept."""
    memo = _ACTIVE.get()
    if memo is None:
        return devices
    template = RegistrationTemplate(tuple(map(_TEMPLATE_FIELDS, devices)), vendor)
    if not memo.put(key, template, approx_size(key, template.fields) + 64):
        return devices
    return [template.device(k, d.id) for k, d in enumerate(devices)]


class RegistrationTemplate(ReadOnly):
    """A registration's devices but their UUIDs, shared by the devices rebuilt from it: equal by
    identity, so a node's devices name their shape in one reference (``cache.uuid_free_shape``).
    ``build`` rebuilds them from UUIDs (``_constructor``), made when the template is first reused."""

    __slots__ = ("fields", "vendor", "build", "__weakref__")

    fields: tuple[tuple[int, int, int, int, str, int, str, bool], ...]
    vendor: str
    build: Callable[[list[str]], list[DeviceInfo]] | None

    def __init__(
        self, fields: tuple[tuple[int, int, int, int, str, int, str, bool], ...], vendor: str
    ) -> None:
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "vendor", vendor)
        object.__setattr__(self, "build", None)  # (set once, by ``_constructor``)

    def device(self, position: int, uid: str) -> DeviceInfo:
        """The device at ``position`` of a registration of this template, named ``uid``."""
        return DeviceInfo(uid, *self.fields[position], (), self.vendor, None, self)


class RebuiltDevices(ReadOnly, Sequence[DeviceInfo]):
    """A node's devices as a registration template and its UUIDs (``known_registration``), each
    device built when read. A cold CA call meets thousands of registrations that differ from a
    template only in their UUIDs, and most are answered from their shape's shared verdict without
    reading a device: they cost their UUIDs, not a device object each (nor the garbage collector's
    passes over them). Immutable; equal to the tuple of the devices it builds."""

    __slots__ = ("template", "ids")

    template: RegistrationTemplate
    ids: tuple[str, ...]

    def __init__(self, template: RegistrationTemplate, ids: tuple[str, ...]) -> None:
        object.__setattr__(self, "template", template)
        object.__setattr__(self, "ids", ids)

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> DeviceInfo: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[DeviceInfo, ...]: ...
    def __getitem__(self, index: int | slice) -> DeviceInfo | tuple[DeviceInfo, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        position = range(len(self.ids))[index]  # (negative positions, and IndexError, as a tuple's)
        return self.template.device(position, self.ids[position])

    def __iter__(self) -> Iterator[DeviceInfo]:
        device = self.template.device
        return (device(k, uid) for k, uid in enumerate(self.ids))

    def __reversed__(self) -> Iterator[DeviceInfo]:
        return reversed(tuple(self))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RebuiltDevices | tuple):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # (as a tuple of devices: they are not hashable)

    def __repr__(self) -> str:
        return repr(tuple(self))


_DEVICE_NAMES = tuple(f.name for f in dataclasses.fields(DeviceInfo))
#: a writable class of ``DeviceInfo``'s very slots (so an instance may become a ``DeviceInfo`` by
#: ``__class__`` assignment): a device is frozen, and a rebuilt one is filled as a draft and then
#: made a device, ~4x faster than through each slot's setter (8 devices: ~8 us against ~30 us, loaded)
_DRAFT = type("DeviceDraft", (), {"__slots__": DeviceInfo.__slots__})
#: what a generated constructor costs the template's entry: its code, per device and in all
_CONSTRUCTOR_BYTES = (900, 2500)


def _constructor(
    key: tuple[str, ...], template: RegistrationTemplate, vendor: str
) -> Callable[[list[str]], list[DeviceInfo]]:
    """A function rebuilding ``template``'s devices from their UUIDs, every other field a constant
    in its code: a cold CA call rebuilds thousands of devices, and setting a slot from a constant
    costs less than passing it to ``__init__`` (8 devices: ~1.1 us against ~2.4 us). Generated as
    ``dataclasses`` generates ``__init__``: only ``int``, ``bool`` and ``str`` values, written with
    ``repr``. Kept on the template when its entry can be charged for it."""
    lines = []
    for k, fields in enumerate(template.fields):
        values = (f"ids[{k}]", *map(repr, fields), "()", repr(vendor), "None", "_template")
        lines.append(f"    d{k} = _new(_draft)")
        lines.extend(f"    d{k}.{name} = {value}" for name, value in zip(_DEVICE_NAMES, values, strict=True))
        lines.append(f"    d{k}.__class__ = _cls")
    made = ", ".join(f"d{k}" for k in range(len(template.fields)))
    env: dict[str, Any] = {
        "_new": object.__new__,
        "_draft": _DRAFT,
        "_cls": DeviceInfo,
        "_template": template,
    }
    exec("def build(ids):\n" + "\n".join(lines) + f"\n    return [{made}]\n", env)  # noqa: S102
    build: Callable[[list[str]], list[DeviceInfo]] = env["build"]
    per_device, base = _CONSTRUCTOR_BYTES
    memo = _ACTIVE.get()
    if memo is not None and memo.grow(key, base + per_device * len(template.fields), template):
        object.__setattr__(template, "build", build)
    return build


_DEVICE_ID = re.compile(r'"id":"([^"\\\x00-\x1f]*)"')
#: what a template keeps of a device: the fields a fit reads but the UUID (``DeviceInfo.SHAPE``) that
#: a common entry sets (MIG profiles and vendor data make an entry uncommon; the vendor is the
#: decoder's), in ``DeviceInfo``'s positional order (rebuilt as ``DeviceInfo(uid, *fields, ...)``)
_TEMPLATE_NAMES = tuple(f for f in DeviceInfo.SHAPE if f not in ("mig_profiles", "device_vendor"))
assert tuple(f.name for f in dataclasses.fields(DeviceInfo))[1:9] == _TEMPLATE_NAMES, _TEMPLATE_NAMES
_TEMPLATE_FIELDS = attrgetter(*_TEMPLATE_NAMES)
_TEMPLATE_MAX_CHARS = 16384
#: what it buys: a cold CA call over 1,000 8-GPU templates of one group takes ~30 ms of CPU instead
#: of ~89 ms with this memo alone off (``bench/filter_bench.py``'s cold case)
_ACTIVE: ContextVar[ByteLRU[tuple[str, ...], RegistrationTemplate] | None] = ContextVar(
    "registration templates", default=None
)


def new_templates(budget: int) -> ByteLRU[tuple[str, ...], RegistrationTemplate]:
    """A simulator's memo of registration templates, of ``budget`` bytes (``/metrics``' name)."""
    return ByteLRU(budget, name="registration templates")


def activate(memo: ByteLRU[tuple[str, ...], RegistrationTemplate] | None) -> Token:
    """Make ``memo`` the one in force in this thread until ``deactivate`` (None: none; a memo of no
    budget counts as none, so a simulator with caching off never splits a registration)."""
    return _ACTIVE.set(memo if memo is not None and memo.max_bytes > 0 else None)


def deactivate(token: Token) -> None:
    """Restore the memo in force before ``activate`` returned ``token``."""
    _ACTIVE.reset(token)


@contextmanager
def using(memo: ByteLRU[tuple[str, ...], RegistrationTemplate] | None) -> Iterator[None]:
    """``memo`` in force within the block (decoding outside a simulator: tools and tests)."""
    token = activate(memo)
    try:
        yield
    finally:
        deactivate(token)
