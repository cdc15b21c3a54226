"""What the filter path's cache holds, and what each thing is charged: a registration's ``Entry`` on
its frozen ``Inventory``, the ``CachedVerdict`` handed to every request that asks the same, a
``SharedFit`` for registrations of one shape and the ``Relabelled`` view of it each node's verdict
holds, and the one size formula over all of them (``sys.getsizeof`` of each object held), so that
one budget bounds the cache.

Values are immutable (frozen dataclasses, tuples): one cached object is handed to every request.
"""

from __future__ import annotations

import dataclasses
import sys
import weakref
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from types import MappingProxyType

from .fit import PodFit
from .lru import approx_size
from .model import ContainerDevice, DeviceInfo, Inventory, positional
from .registration_templates import RebuiltDevices

__all__ = [
    "CachedVerdict",
    "Entry",
    "Relabelled",
    "SharedFit",
    "VERDICTS_PER_ENTRY",
    "key_bytes",
    "text_key_bytes",
    "inventory_bytes",
    "verdict_bytes",
    "live_bytes",
    "tag_bytes",
    "shared_bytes",
    "shape_bytes",
]


@dataclass(slots=True, frozen=True, weakref_slot=True)
class CachedVerdict:
    """A verdict as the cache keeps it: immutable, handed to every request that asks the same.

    The fit keeps no ``usage_after`` (working objects; the extender needs only the score computed
    from them); sessions and the estimator call ``Simulator.evaluate`` for it.
    """

    fits: bool
    reason: str
    fit: PodFit | Relabelled | None  # (``Relabelled``: a shape's shared fit, for this node when read)
    score_after: float


class Entry:
    """The mutable part of a registration's cache entry, on its frozen ``Inventory`` (and on the
    group-tagged copies of it, which share it): ``key`` is the entry's key in the cache, so what is
    added can be charged to it; ``evicted`` once the cache let it go (nothing more is added)."""

    __slots__ = ("key", "verdicts", "live", "tagged", "evicted")

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self.verdicts: dict[bytes, CachedVerdict] = {}
        self.live: dict[bytes, tuple[weakref.ref, CachedVerdict]] | None = None
        self.tagged: dict[tuple[str, str], Inventory] | None = None
        self.evicted = False


@dataclass(slots=True, frozen=True)
class SharedFit:
    """A verdict shared by the registrations of one shape (at one usage): the verdict of the node
    that was fit, the position of each of its UUIDs, per container the chosen devices as (position,
    the fields before the UUID, the fields after it), and the fit's own fields (``relabel``)."""

    verdict: CachedVerdict
    positions: Mapping[str, int]
    chosen: tuple[tuple[tuple[int, tuple, tuple], ...], ...]
    fit_fields: tuple


@dataclass(slots=True, frozen=True)
class Relabelled:
    """A shared fit as a node of its shape has it: built when read (``fit``), from the shared fit and
    the node's UUIDs; equal every time (both are immutable)."""

    shared: SharedFit
    ids: tuple[str, ...]

    @property
    def fit(self) -> PodFit:
        """The shared fit with the node's UUIDs (chosen devices, per-device reasons)."""
        shared, ids = self.shared, self.ids
        fit: PodFit = shared.verdict.fit  # type: ignore[assignment]
        containers = []
        for chosen in shared.chosen:  # (loops, not nested comprehensions)
            row = []
            for at, head, tail in chosen:
                row.append(_CONTAINER_DEVICE(*head, ids[at], *tail))
            containers.append(tuple(row))
        reasons = fit.device_reasons
        if reasons:
            positions = shared.positions
            reasons = MappingProxyType({ids[positions[uuid]]: why for uuid, why in reasons.items()})
        values = list(shared.fit_fields)
        values[_FIT_CONTAINERS] = tuple(containers)
        values[_FIT_REASONS] = reasons
        return _POD_FIT(*values)


#: a relabelled fit is rebuilt positionally in its types' own field order (``dataclasses.replace``
#: costs ~2 us a call)
_CONTAINER_DEVICE = positional(ContainerDevice)
_POD_FIT = positional(PodFit)
_FIT_CONTAINERS = [f.name for f in dataclasses.fields(PodFit)].index("containers")
_FIT_REASONS = [f.name for f in dataclasses.fields(PodFit)].index("device_reasons")


#: pod keys remembered per registration (CA asks about a few pending pod shapes at a time); the
#: oldest leaves first
VERDICTS_PER_ENTRY = 8


_SIZE = sys.getsizeof
_STR = _SIZE("")  # an ASCII string's header: ``sys.getsizeof(s) == _STR + len(s)``
_INT = _SIZE(1 << 40)
_DEVICE = _SIZE(DeviceInfo(""))
_ENTRY = _SIZE(Entry(None)) + _SIZE({})  # with its empty verdict map
_DICT_SLOT = 48  # a dictionary's share per item (table slot and index, amortised)
_INVENTORY = _SIZE(Inventory())  # (slotted: every one the same size)
_TUPLE, _POINTER = _SIZE(()), _SIZE((0,)) - _SIZE(())  # ``sys.getsizeof`` of a tuple of n
_BYTES = _SIZE(b"")  # ``sys.getsizeof(b) == _BYTES + len(b)``
assert _SIZE((0, 0, 0)) == _TUPLE + 3 * _POINTER and _SIZE(b"#" * 16) == _BYTES + 16
_DEVICE_ID = attrgetter("id")
_CUSTOM_INFO = attrgetter("custom_info")


def _text(value: object) -> int:
    if type(value) is str:
        return _STR + len(value) if value.isascii() else _SIZE(value)
    if value is None or type(value) in (int, float, bool):
        return 0 if value is None or (type(value) is int and -5 <= value <= 256) else _SIZE(value)
    return approx_size(value)


def key_bytes(key: Hashable) -> int:
    """A cache key: a registration's text (a tuple of strings, maybe nested once) or a digest."""
    if type(key) is bytes:
        return _SIZE(key)
    if type(key) is not tuple:
        return approx_size(key)
    size = _SIZE(key)
    for part in key:
        if type(part) is tuple:
            size += _SIZE(part) + sum(map(_text, part))
        else:
            size += _text(part)
    return size


def text_key_bytes(parts: tuple, max_chars: int) -> int | None:
    """``key_bytes`` of a key kept as its own text (strings, None and numbers, maybe nested once),
    counted in the same pass as its characters; None past ``max_chars`` characters or when a part is
    anything else (the caller then keys by digest). Runs for every registration new to the cache."""
    size = _SIZE(parts)
    chars = 0
    for part in parts:
        if type(part) is str:
            chars += len(part)
            size += _STR + len(part) if part.isascii() else _SIZE(part)
        elif part is None:
            continue
        else:
            counted = _tag_text(part) if type(part) is tuple else _number(part)
            if counted is None:
                return None
            size, chars = size + counted[0], chars + counted[1]
    return size if chars <= max_chars else None


def _tag_text(part: tuple) -> tuple[int, int] | None:
    """(bytes, characters) of a key's nested tuple (a vendor tag: small ints, or text), or None."""
    size, chars = _SIZE(part), 0
    for item in part:
        if type(item) is int and -5 <= item <= 256:
            continue  # (a vendor's position: a cached small int)
        if type(item) is str:
            chars += len(item)
            size += _STR + len(item) if item.isascii() else _SIZE(item)
        elif item is not None:
            counted = _number(item)
            if counted is None:
                return None
            size += counted[0]
    return size, chars


def _number(value: object) -> tuple[int, int] | None:
    return (_text(value), 0) if isinstance(value, int | float) else None


def _device_bytes(d: DeviceInfo, seen: set[int]) -> int:
    size = _DEVICE + _text(d.id)
    if d.template is None:  # decoded field by field: its own strings and large numbers
        size += _text(d.type) + _text(d.mode)
        for number in (d.index, d.count, d.devmem, d.devcore, d.numa):
            if not -5 <= number <= 256:
                size += _INT
        if d.mig_profiles:
            size += approx_size(d.mig_profiles)
    info = d.custom_info
    if info is not None and id(info) not in seen:  # vendors share one table between a node's devices
        seen.add(id(info))
        size += approx_size(info)
    return size


def inventory_bytes(inventory: Inventory) -> int:
    """An inventory and its entry: the objects, each device and the small extras."""
    devices = inventory.devices
    # (the object's, the tuple's and the key's sizes by their formulas: this runs per new node)
    size = _INVENTORY + _TUPLE + _POINTER * len(devices) + _BYTES + len(inventory.key) + _ENTRY
    if type(devices) is RebuiltDevices:  # its UUIDs (ASCII, as its template's text) in a tuple
        ids = devices.ids
        return size + _REBUILT + _STR * len(ids) + sum(map(len, ids)) + len(inventory.error)
    rebuilt = _rebuilt_devices_bytes(devices)
    if rebuilt is not None:
        size += rebuilt
    else:
        seen: set[int] = set()
        for d in devices:
            size += _device_bytes(d, seen)
    if inventory.pair_scores:
        size += approx_size(inventory.pair_scores)
    if inventory.cordoned:
        size += approx_size(inventory.cordoned)
    return size + len(inventory.error)


_REBUILT = _SIZE(RebuiltDevices(None, ()))  # type: ignore[arg-type]


def _rebuilt_devices_bytes(devices: Sequence[DeviceInfo]) -> int | None:
    """``_device_bytes`` summed, in one pass, for devices rebuilt from a registration template with
    ASCII UUIDs and no vendor data (each is its object and its UUID: a cold call charges thousands);
    None for any other devices. A node's devices are all its template's when the first and the last
    are and there are as many as it has (a vendor's devices are contiguous); a template is made
    from ASCII registrations only (``registration_templates.remember``), but a vendor may add data after."""
    n = len(devices)
    template = devices[0].template if n else None
    if template is None or devices[-1].template is not template or len(template.fields) != n:
        return None
    if list(map(_CUSTOM_INFO, devices)).count(None) != n:
        return None
    return n * (_DEVICE + _STR) + sum(map(len, map(_DEVICE_ID, devices)))


def verdict_bytes(verdict: CachedVerdict, shares_devices: bool = False) -> int:
    """A verdict in an entry's map: its slot, the verdict, its fit and chosen devices (their UUIDs
    are the node's own strings, charged with its inventory, unless ``shares_devices`` is False)."""
    fit = verdict.fit
    if type(fit) is Relabelled:  # relabelled when read: the shared fit and the node's own UUIDs
        return _RELABELLED_VERDICT
    size = _DICT_SLOT + _SIZE(verdict)
    if not isinstance(fit, PodFit):  # (no fit: no device asked for)
        return size
    size += _SIZE(fit) + _SIZE(fit.containers)
    for container in fit.containers:
        size += _SIZE(container)
        for d in container:
            size += _SIZE(d)
            if not shares_devices:
                size += _text(d.uuid)
            if d.mig_placement is not None:
                size += _SIZE(d.mig_placement)
    if fit.device_reasons:
        size += _SIZE(fit.device_reasons) + _SIZE(dict(fit.device_reasons))
        for reason in fit.device_reasons.values():
            size += _text(reason)
    return size


def live_bytes(verdict: CachedVerdict) -> int:
    """A live verdict in an entry: the verdict and its slot beside a weak reference to its usage."""
    return verdict_bytes(verdict, True) + _LIVE_SLOT


def tag_bytes(copy: Inventory) -> int:
    """A group-tagged copy of an inventory, in its original's entry."""
    return _SIZE(copy) + _TAG_SLOT


def shared_bytes(shared: SharedFit) -> int:
    """A verdict shared by a shape's registrations: the verdict (its own UUIDs) and the positions."""
    return verdict_bytes(shared.verdict) + approx_size(shared.positions, shared.chosen) + _DICT_SLOT


def shape_bytes(key: tuple, shape: Hashable, fits: dict, usage: tuple | None) -> int:
    """A shape's entry (``(tag, shape, usage)`` -> its shared verdicts by pod key), empty."""
    return (
        _SIZE(fits)
        + _SIZE(key)
        + key_bytes(shape if type(shape) is tuple else ())
        + (approx_size(usage) if usage else 0)
    )


_LIVE_SLOT = _DICT_SLOT + _SIZE((None, None)) + _SIZE(weakref.ref(CachedVerdict(True, "", None, 0.0)))
_TAG_SLOT = _DICT_SLOT + _SIZE(("", ""))
#: a relabelled verdict: its slot, the verdict and the ``Relabelled`` (each the same size: slotted)
_RELABELLED_VERDICT = _DICT_SLOT + _SIZE(CachedVerdict(True, "", None, 0.0)) + _SIZE(Relabelled(None, ()))  # type: ignore[arg-type]
