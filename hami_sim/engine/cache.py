"""The filter path's cache: one entry per registration (see below), in the engine's one cache type
(``lru.ByteLRU``, re-exported here with its helpers), and the rule for when registrations that
differ only in UUIDs share a verdict. What an entry holds and what each thing is charged (one size
formula) is in ``cache_entries``.

Values must be immutable (frozen dataclasses, tuples): one cached object is handed to every request.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Hashable, Mapping, Sequence
from operator import attrgetter
from types import MappingProxyType
from typing import NamedTuple

from .allocations import LiveUsageLike, UsageLike
from .cache_entries import (
    VERDICTS_PER_ENTRY,
    CachedVerdict,
    Entry,
    Relabelled,
    SharedFit,
    inventory_bytes,
    live_bytes,
    shape_bytes,
    shared_bytes,
    tag_bytes,
    verdict_bytes,
)
from .fit import PodFit
from .lru import (
    CACHE_BYTES_ENV,
    DEFAULT_CACHE_BYTES,
    ENTRY_OVERHEAD,
    ByteLRU,
    approx_size,
    cache_bytes_from_env,
    cache_metrics,
)
from .model import ContainerDevice, DeviceInfo, Inventory, positional
from .registration_templates import RebuiltDevices
from .vendors.base import Vendor

__all__ = [
    "CACHE_BYTES_ENV",
    "DEFAULT_CACHE_BYTES",
    "ENTRY_OVERHEAD",
    "ByteLRU",
    "CachedVerdict",
    "Entry",
    "RegistrationCache",
    "approx_size",
    "cache_bytes_from_env",
    "cache_metrics",
    "usage_keys",
]


# -- the filter path's cache: one entry per registration ------------------------------------------------
#
# Everything the extender remembers between calls about nodes lives in one ``ByteLRU`` ("registrations"):
# per registration (a node's registration text, or a digest of what its vendors read), its decoded
# ``Inventory`` carrying an ``Entry``: the zero-usage verdicts computed on it by pod key, the live
# verdicts beside the usage object each was computed on, and its group-tagged copies. What is added to
# an entry after it is stored is charged to it (``ByteLRU.grow``), so the one budget bounds all of it.
# Registrations that differ only in their UUIDs share a verdict through a shape entry in the same LRU
# (``sharing_of``, the one place that rule lives).


_DEVICE_ID = attrgetter("id")
_CUSTOM_INFO = attrgetter("custom_info")
_DEVICE_SHAPE = attrgetter(*DeviceInfo.SHAPE)


#: a relabelled verdict is rebuilt positionally in its types' own field order (``dataclasses.replace``
#: costs ~2 us a call, and a cold CA call relabels a verdict for each of thousands of nodes)
_CACHED_VERDICT = positional(CachedVerdict)
_RELABELLED = positional(Relabelled)
_CHOSEN_FIELDS = attrgetter(*(f.name for f in dataclasses.fields(ContainerDevice)))
_CHOSEN_UUID = [f.name for f in dataclasses.fields(ContainerDevice)].index("uuid")
_FIT_FIELDS = attrgetter(*(f.name for f in dataclasses.fields(PodFit)))
assert all(f.init for f in dataclasses.fields(PodFit) + dataclasses.fields(ContainerDevice))
#: what a device's live usage adds to it (``allocations.UsageLike``), when a verdict at that usage is
#: shared: all but MIG placements and pod infos (a usage that has either is never shared)
_USAGE_UNSHARED = ("mig", "pod_infos")
_USAGE_KEY = attrgetter(*(f for f in UsageLike.__annotations__ if f not in _USAGE_UNSHARED))


def uuid_free_shape(inventory: Inventory) -> Hashable | None:
    """The sharing rule, node side: what a zero-usage verdict on ``inventory`` depends on when it
    cannot depend on its UUIDs (every field a fit reads but ``id``: ``DeviceInfo.SHAPE``); None
    when it may: cordons or pair scores name UUIDs, two devices share one, or a device carries
    vendor data. Devices rebuilt from one registration template are named by it (one reference).
    A verdict is shared only when the pod's vendors ignore UUIDs too (``PodContext.uuid_blind``) and
    the first node of the shape was ``uuid_blind_devices``."""
    if inventory.pair_scores or inventory.cordoned:
        return None
    devices = inventory.devices
    if type(devices) is RebuiltDevices:
        return devices.template if len(set(devices.ids)) == len(devices.ids) else None
    n = len(devices)
    if not n or len(set(map(_DEVICE_ID, devices))) != n:
        return None
    template = devices[0].template
    if template is not None and devices[-1].template is template and len(template.fields) == n:
        return template
    if list(map(_CUSTOM_INFO, devices)).count(None) != n:
        return None
    return tuple(map(_DEVICE_SHAPE, devices))


def device_ids(devices: Sequence[DeviceInfo]) -> tuple[str, ...]:
    """The devices' UUIDs in order (a rebuilt registration's own, without building a device)."""
    return devices.ids if type(devices) is RebuiltDevices else tuple(map(_DEVICE_ID, devices))


def uuid_blind_devices(inventory: Inventory, vendors: Mapping[str, Vendor]) -> bool:
    """The sharing rule, device side: every device's vendor uses a UUID only as an identity
    (``Vendor.uuid_blind_device``), none carries vendor data, and no card type names a vendor
    (``ScoreNode``'s keys). Depends only on ``DeviceInfo.SHAPE`` fields, so it holds for the shape."""
    for d in inventory.devices:
        vendor = vendors.get(d.device_vendor)
        if (
            vendor is None
            or d.custom_info is not None
            or d.type in vendors
            or not vendor.uuid_blind_device(d)
        ):
            return False
    return True


def usage_keys(usage: Mapping[str, UsageLike]) -> dict[str, tuple] | None:
    """The sharing rule, usage side: per device UUID, what ``apply_usage`` adds to it; None (no
    verdict at this usage is shared) when a device holds MIG placements or pod infos. A live node's
    usage object computes this once (``LiveUsageLike.keys``): a signature is then a lookup per device."""
    keys = {}
    for uuid, use in usage.items():
        if use.mig or use.pod_infos:
            return None
        keys[uuid] = _USAGE_KEY(use)
    return keys


def usage_signature(ids: Sequence[str], keys: Mapping[str, tuple]) -> tuple:
    """Per device position (``ids``: the UUIDs in order), its usage key (``usage_keys``; None for a
    device without usage): nodes of one shape with equal signatures share a live verdict."""
    return tuple(map(keys.get, ids))


class Sharing(NamedTuple):
    """Where a verdict is shared (``sharing_of``): the shape's key, at a usage (None: zero usage),
    and the node's own UUIDs (a shared verdict names them when read)."""

    shape: Hashable
    usage: tuple | None
    ids: tuple[str, ...]


def sharing_of(inventory: Inventory, live: LiveUsageLike | None) -> Sharing | None:
    """The sharing rule, whole: a verdict on ``inventory`` (at ``live`` usage, if any) is shared with
    the nodes of its ``uuid_free_shape`` at equal usage per device (``usage_signature``); None when
    it is not (the caller has checked the pod's side, ``PodContext.uuid_blind``)."""
    shape = uuid_free_shape(inventory)
    if shape is None:
        return None
    ids = device_ids(inventory.devices)
    if live is None or not live.devices:
        return Sharing(shape, None, ids)
    keys = live.keys
    return Sharing(shape, usage_signature(ids, keys), ids) if keys is not None else None


def without_usage(fit: PodFit | None) -> PodFit | None:
    """What the cache keeps of a fit: everything but ``usage_after`` (working objects)."""
    if fit is None or fit.usage_after is None:
        return fit
    return dataclasses.replace(fit, usage_after=None)


def shared_fit(verdict: CachedVerdict, ids: Sequence[str]) -> SharedFit:
    """``verdict`` (computed on devices of these UUIDs) ready to be relabelled for other nodes
    (``relabelled``)."""
    positions = MappingProxyType({uid: i for i, uid in enumerate(ids)})
    fit = verdict.fit
    assert fit is None or isinstance(fit, PodFit)  # fit on its own node, never a relabelled one
    chosen = (
        tuple(
            tuple(
                (positions[d.uuid], values[:_CHOSEN_UUID], values[_CHOSEN_UUID + 1 :])
                for d, values in ((d, _CHOSEN_FIELDS(d)) for d in c)
            )
            for c in fit.containers
        )
        if fit
        else ()
    )
    return SharedFit(verdict, positions, chosen, _FIT_FIELDS(fit) if fit else ())


def relabelled(shared: SharedFit, ids: tuple[str, ...]) -> CachedVerdict | None:
    """``shared``'s verdict for a node of its shape: the same answer, its fit naming the node's
    UUIDs ``ids`` (at the positions the shared fit chose) when read (``Relabelled``: most answers are never
    read past fits and reason, and a cold CA call relabels a verdict for each of thousands of
    nodes); None if the node has not the shape's number of devices."""
    verdict = shared.verdict
    fit = verdict.fit
    if fit is None or (not fit.containers and not fit.device_reasons):  # type: ignore[union-attr]
        return verdict
    if len(ids) != len(shared.positions):
        return None
    return _CACHED_VERDICT(verdict.fits, verdict.reason, _RELABELLED(shared, ids), verdict.score_after)


class RegistrationCache:
    """The filter path's cache (see above): registrations by key, their verdicts, shapes."""

    def __init__(self, budget: int, off: frozenset[str] = frozenset()) -> None:
        self.lru: ByteLRU[Hashable, Inventory | dict] = ByteLRU(budget, name="registrations")
        # what an entry keeps besides its inventory, each switched off alone (``stores``: the A/B)
        self._verdicts = "zero-usage verdicts" not in off
        self._live = "live verdicts" not in off
        self._tags = "group-tagged copies" not in off
        self._shapes = "shape fits" not in off

    def inventory(self, key: Hashable) -> Inventory | None:
        """The registration's decoded inventory; raises ``TypeError`` for an unhashable key."""
        found = self.lru.get(key)
        return found  # type: ignore[return-value]

    def touch(self, inventory: Inventory) -> bool:
        """Mark the registration of ``inventory`` as used (a node found by its bytes: ``sightings``);
        False when it has left the cache (the node is resolved again, and cached again)."""
        entry = inventory.entry
        if entry is None:
            return True
        found = self.lru.get(entry.key)
        return found is not None and found.entry is entry  # type: ignore[union-attr]

    def add(self, inventory: Inventory, key_size: int) -> Inventory:
        """Keep ``inventory`` (built with ``Entry(key)``), charged by the formula plus its key."""
        entry = inventory.entry
        assert entry is not None
        if not self.lru.put(entry.key, inventory, inventory_bytes(inventory) + key_size, entry):
            entry.evicted = True
        return inventory

    def _charge(self, entry: Entry, size: int) -> bool:
        """Charge ``size`` bytes to the entry (stored with its inventory; tagged copies share it)."""
        if entry.evicted or not self.lru.grow(entry.key, size, entry):
            entry.evicted = True
            return False
        return True

    def remember(self, inventory: Inventory, pod_key: bytes, verdict: CachedVerdict) -> None:
        """Keep a zero-usage verdict in the registration's entry (the oldest of a full map leaves)."""
        entry = inventory.entry
        if entry is None or not self._verdicts:
            return
        verdicts = entry.verdicts
        size = verdict_bytes(verdict, True)  # (its UUIDs are the inventory's own strings)
        if len(verdicts) >= VERDICTS_PER_ENTRY:
            oldest = next(iter(verdicts), None)
            gone = verdicts.pop(oldest, None) if oldest is not None else None
            if gone is not None:
                self._charge(entry, -verdict_bytes(gone, True))
        if self._charge(entry, size):
            verdicts[pod_key] = verdict

    def live_verdict(self, inventory: Inventory, pod_key: bytes, usage: object) -> CachedVerdict | None:
        """The live verdict computed on this very usage object, if remembered (and still alive)."""
        entry = inventory.entry
        live = entry.live if entry is not None else None
        found = live.get(pod_key) if live else None
        return found[1] if found is not None and found[0]() is usage else None

    def remember_live(
        self, inventory: Inventory, pod_key: bytes, usage: object, verdict: CachedVerdict
    ) -> None:
        """Keep a live verdict beside (a weak reference to) the usage object it was computed on: the
        usage store hands out the same object until the node's usage changes."""
        entry = inventory.entry
        if entry is None or not self._live:
            return
        live = entry.live
        if live is None:
            live = entry.live = {}
        size = live_bytes(verdict)
        old = live.get(pod_key)
        if old is not None:
            size -= live_bytes(old[1])
        elif len(live) >= VERDICTS_PER_ENTRY:
            return  # (a new usage object replaces its pod key's slot; more pod keys wait for room)
        if self._charge(entry, size):
            live[pod_key] = (weakref.ref(usage), verdict)

    def tagged(self, inventory: Inventory, node_group: str, source: str) -> Inventory:
        """``inventory`` attributed to a node group and source: one copy per (group, source), kept
        in the original's entry (charged to it) and sharing its devices and verdicts."""
        entry = inventory.entry
        tags = entry.tagged if entry is not None else None
        found = tags.get((node_group, source)) if tags else None
        if found is not None:
            return found
        copy = Inventory(  # (positional: ``dataclasses.replace`` costs a cold call ~2 us per node)
            inventory.devices,
            inventory.pair_scores,
            inventory.cordoned,
            node_group,
            source,
            inventory.error,
            inventory.key,
            entry,
        )
        if entry is not None and self._tags and self._charge(entry, tag_bytes(copy)):
            if entry.tagged is None:
                entry.tagged = {}
            entry.tagged[(node_group, source)] = copy
        return copy

    def shared(self, sharing: Sharing, pod_key: bytes) -> CachedVerdict | None:
        """The verdict of the registration's shape (``sharing_of``) for this pod, relabelled with
        the node's UUIDs."""
        fits = self.lru.get((_SHAPE_TAG, sharing.shape, sharing.usage))
        found = fits.get(pod_key) if fits is not None else None  # type: ignore[union-attr]
        return relabelled(found, sharing.ids) if found is not None else None

    def share(self, sharing: Sharing, pod_key: bytes, verdict: CachedVerdict) -> None:
        """Keep ``verdict`` (on the node ``sharing`` names) for every registration of its shape."""
        if not self._shapes:
            return
        shared = shared_fit(verdict, sharing.ids)
        size = shared_bytes(shared)
        key = (_SHAPE_TAG, sharing.shape, sharing.usage)
        fits = self.lru.get(key)
        if not isinstance(fits, dict):
            fits = {}
            if not self.lru.put(key, fits, shape_bytes(key, sharing.shape, fits, sharing.usage)):
                return
        if len(fits) < VERDICTS_PER_ENTRY and self.lru.grow(key, size, fits):
            fits[pod_key] = shared

    def clear(self) -> None:
        self.lru.clear()


class _ShapeTag:
    """Marks a shape's key, ``(_SHAPE_TAG, shape)``: no registration key holds this object."""

    __slots__ = ()


_SHAPE_TAG = _ShapeTag()
