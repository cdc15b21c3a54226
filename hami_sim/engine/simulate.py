"""Filter and prioritize one pod over many nodes: the engine behind the simulation extender.

A node's inventory comes from an ``InventoryResolver`` (annotations by default; the profiles app
adds node-group device profiles). Template nodes repeat across CA loops, so parsed inventories and
zero-usage verdicts are memoised by content digest in LRU memos bounded in bytes
(``EngineConfig.cache_bytes``, ``HAMI_SIM_CACHE_BYTES``); what they keep is immutable and shared by
every request, and nothing from a request object is retained.
"""

from __future__ import annotations

import hashlib
import itertools
import sys
import weakref
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from types import MappingProxyType
from typing import Protocol

import orjson

from . import reasons as R
from .allocations import UsageLike, apply_usage
from .annotations import DEVICE_CORDON, RegistrationTemplate, clear_templates, parse_cordon
from .cache import ByteLRU, approx_size, cache_bytes_from_env
from .fit import PodFit, fit_pod
from .model import ContainerDevice, DeviceInfo, DeviceUsage, InventoryError, NodeState
from .names import TEMPLATE_PREFIX
from .policy import GpuPolicy, Weights, f32, node_score, pod_weights, resolve_gpu_policy, resolve_node_policy
from .requests import PodView, parse_pod
from .vendors import Vendor, default_vendors

__all__ = [
    "EngineConfig",
    "Inventory",
    "InventoryResolver",
    "LiveHook",
    "NodeVerdict",
    "PodContext",
    "Simulator",
    "node_annotations",
    "round_half_up",
]


@dataclass(slots=True, frozen=True)
class EngineConfig:
    """Scheduler-wide defaults (``--node-scheduler-policy``, ``--gpu-scheduler-policy``), vendors,
    and the bytes the simulator's memos may hold (``HAMI_SIM_CACHE_BYTES`` unless given)."""

    node_policy: str = "binpack"
    gpu_policy: str = "spread"
    vendors: tuple[Vendor, ...] = field(default_factory=lambda: tuple(default_vendors()))
    cache_bytes: int = field(default_factory=cache_bytes_from_env)


@dataclass(slots=True, frozen=True)
class Inventory:
    """A node's device inventory, where it came from, and why there is none when there is none.

    Frozen: the simulator and the profiles resolver memoise one per registration and share it.
    """

    devices: tuple[DeviceInfo, ...] = ()
    pair_scores: dict[str, dict[str, int]] = field(default_factory=dict)
    cordoned: frozenset[str] = frozenset()
    node_group: str | None = None
    source: str = "annotation"  # "annotation" | "profile" | "none"
    error: str = ""  # non-empty: unresolvable (FailedAndUnresolvableNodes)
    key: bytes = b""  # content digest, for memoising verdicts
    #: ``(PodContext.key, weak reference to its _MemoVerdict)``: the verdict ``filter_nodes`` found
    #: last for this inventory, so a repeat of the question costs no second memo lookup. The one
    #: field set after construction (a cache slot, not content); weak, so the verdict memo alone
    #: decides how long a verdict lives.
    last_verdict: tuple[bytes, weakref.ref] | None = field(
        default=None, init=False, compare=False, repr=False
    )
    #: the bytes the inventory memo charged for it (0: not memoised), so a group-tagged copy, which
    #: shares its devices, is charged the same without sizing it again (``Simulator.tag_inventory``)
    charge: int = field(default=0, init=False, compare=False, repr=False)
    #: ``(node group, source, tagged copy)``: the copy ``Simulator.tag_inventory`` made last (nodes
    #: of one group ask for the same one; charged with this inventory, ``_TAG_SLOT_SIZE``)
    last_tagged: tuple[str, str, Inventory] | None = field(
        default=None, init=False, compare=False, repr=False
    )

    def state(self, name: str) -> NodeState:
        return NodeState(
            name, [DeviceUsage.from_info(d) for d in self.devices], self.pair_scores, self.cordoned
        )


InventoryResolver = Callable[[Mapping, "Simulator"], Inventory]


class LiveUsageLike(Protocol):
    """A live node's usage: what its pods hold, per device UUID (``apply_usage``). One object per
    content: a new one when the usage changes, so a verdict may be remembered with it (weakly)."""

    @property
    def devices(self) -> Mapping[str, UsageLike]: ...


#: A live node's usage, a failure reason, or None (not live: evaluated at zero usage, as a template).
LiveHook = Callable[[str], "LiveUsageLike | str | None"]


@dataclass(slots=True)
class PodContext:
    """A parsed pod plus the policies and weights in force for it."""

    pod: PodView
    node_policy: str
    gpu_policy: GpuPolicy
    weights: Weights
    key: bytes
    # every request's vendor treats UUIDs as identities for this pod (``Vendor.fit_ignores_uuids``):
    # its zero-usage verdicts may be shared between nodes that differ only in their UUIDs
    uuid_blind: bool = False


@dataclass(slots=True)
class NodeVerdict:
    """One node's answer for one pod."""

    name: str
    fits: bool
    reason: str = ""
    unresolvable: bool = False
    node_group: str | None = None
    source: str = "annotation"
    fit: PodFit | None = None
    score_after: float = 0.0


@dataclass(slots=True, frozen=True, weakref_slot=True)
class _MemoVerdict:
    """What the verdict memo keeps of a zero-usage verdict: immutable, shared by every request.

    The fit keeps no ``usage_after`` (its devices are mutable working objects and the extender only
    needs the score computed from them); sessions and the estimator call ``evaluate`` for it.
    """

    fits: bool
    reason: str
    fit: PodFit | None
    score_after: float

    @classmethod
    def of(cls, verdict: NodeVerdict) -> _MemoVerdict:
        return cls(verdict.fits, verdict.reason, _without_usage(verdict.fit), verdict.score_after)


#: A device's registration without its UUID (``Simulator._shape``): every field of ``DeviceInfo``
#: but the UUID and the vendor data (a device that has any is never shared)
_DeviceShape = tuple[int, int, int, int, str, int, str, bool, str, tuple]
_SHAPE_FIELDS = attrgetter(
    "index", "count", "devmem", "devcore", "type", "numa", "mode", "health", "device_vendor", "mig_profiles"
)
_DEVICE_ID = attrgetter("id")


@dataclass(slots=True, frozen=True)
class _LiveVerdict:
    """A live node's verdict and the usage object it was computed on (weak: the store decides how
    long a usage lives; a verdict for a usage that is gone is never returned)."""

    usage: weakref.ref
    memo: _MemoVerdict


@dataclass(slots=True, frozen=True)
class _ShapeVerdict:
    """A zero-usage verdict shared by the nodes of one shape: the verdict of the node that was fit,
    and the position of each of its UUIDs in its inventory, to relabel the verdict for another."""

    memo: _MemoVerdict
    positions: Mapping[str, int]
    #: what a relabelled copy is charged in the verdict memo: the original's size (its UUIDs are the
    #: other node's own strings, already charged with that node's inventory)
    size: int
    #: per container, (position of the device, the device) of each chosen device
    chosen: tuple[tuple[tuple[int, ContainerDevice], ...], ...]


_MAPPINGS = (dict, Mapping)  # isinstance tries the exact dict first (decoded JSON), then the ABC


def node_annotations(node: Mapping) -> Mapping[str, str]:
    meta = node.get("metadata")
    if not isinstance(meta, _MAPPINGS):
        return {}
    annotations = meta.get("annotations")
    return annotations if isinstance(annotations, _MAPPINGS) else {}


def round_half_up(value: float) -> int:
    return int(value + 0.5)


def _digest(*parts: object) -> bytes:
    return hashlib.blake2b(orjson.dumps(parts, option=orjson.OPT_NON_STR_KEYS), digest_size=16).digest()


_RAW_MEMO_MAX_BYTES = 16384
_POD_MEMO_MAX_BYTES = 16384
_POD_MEMO_ENTRIES = 256


@dataclass(slots=True, frozen=True)
class _VendorPlan:
    """The vendors that read a kind of node (by its annotation keys and capacity names), and, when
    they read annotations only, which ones key its inventory (``tag``: the vendors' positions, so
    two vendor sets that read the same keys never share an entry)."""

    vendors: list[Vendor]
    keys: tuple[str, ...] | None
    tag: tuple[int, ...]


def _text_bytes(parts: tuple) -> int:
    """Bytes of registration text in an inventory key (characters times their width: 1 for ASCII,
    at most 4); anything but text, None and numbers counts as too much for the raw memo."""
    size = 0
    for part in parts:
        if isinstance(part, str):
            size += len(part) if part.isascii() else 4 * len(part)
        elif isinstance(part, tuple):
            for item in part:
                if isinstance(item, str):
                    size += len(item) if item.isascii() else 4 * len(item)
                elif item is not None and not isinstance(item, int | float):
                    return _RAW_MEMO_MAX_BYTES + 1  # not plain text: use the digest path
    return size


#: inventory keys that are unique in the process (``Inventory.key`` of a registration memoised by its
#: text): the memo entry itself is the content's identity, so no digest of it is computed
_UNIQUE_KEYS = itertools.count()


def _unique_key() -> bytes:
    return b"#" + next(_UNIQUE_KEYS).to_bytes(15, "big")


# -- sizes charged to the memos (computed once per insertion; cheap formulas, erring high) --------------

_INT_SIZE = sys.getsizeof(1 << 40)  # a registration's numbers, counted as if none were small and shared
_DEVICE_INFO_SIZE = sys.getsizeof(DeviceInfo("")) + 5 * _INT_SIZE
_CONTAINER_DEVICE_SIZE = sys.getsizeof(ContainerDevice(0, "", "", 0, 0)) + 3 * _INT_SIZE


_STR_SIZE = sys.getsizeof("")  # an ASCII string's header: ``sys.getsizeof(s) == _STR_SIZE + len(s)``
#: a live verdict's entry (``_LiveVerdict``) and its weak reference to the usage
_LIVE_ENTRY_SIZE = 2 * sys.getsizeof(weakref.ref(_MemoVerdict(True, "", None, 0.0)))
#: an inventory's ``last_tagged`` once filled: a triple and the tagged copy itself (its devices are
#: the original's)
_TAG_SLOT_SIZE = sys.getsizeof((None, None, None)) + sys.getsizeof(Inventory())
#: an inventory's ``last_verdict`` once filled: a pair and a weak reference
_VERDICT_SLOT_SIZE = sys.getsizeof((b"", None)) + sys.getsizeof(
    weakref.ref(_MemoVerdict(True, "", None, 0.0))
)


def _device_size(dev: DeviceInfo, seen: set[int]) -> int:
    uid, typ, mode, vendor = dev.id, dev.type, dev.mode, dev.device_vendor
    if uid.isascii() and typ.isascii() and mode.isascii() and vendor.isascii():  # sizeof by formula
        size = _DEVICE_INFO_SIZE + 4 * _STR_SIZE + len(uid) + len(typ) + len(mode) + len(vendor)
    else:
        getsizeof = sys.getsizeof
        size = _DEVICE_INFO_SIZE + getsizeof(uid) + getsizeof(typ) + getsizeof(mode) + getsizeof(vendor)
    if dev.mig_profiles:
        size += approx_size(dev.mig_profiles)
    info = dev.custom_info
    if info is not None and id(info) not in seen:  # vendors share one table between a node's devices
        seen.add(id(info))
        size += approx_size(info)
    return size


def _inventory_size(inventory: Inventory) -> int:
    """Bytes an inventory holds: the object, its devices (by formula), the small extras in full."""
    seen: set[int] = set()
    size = sys.getsizeof(inventory) + sys.getsizeof(inventory.devices) + sys.getsizeof(inventory.key)
    size += _VERDICT_SLOT_SIZE + _TAG_SLOT_SIZE
    size += sys.getsizeof(inventory.error) + sys.getsizeof(inventory.source)
    for dev in inventory.devices:
        uid, typ, mode, vendor = dev.id, dev.type, dev.mode, dev.device_vendor
        if (  # the common device, inline (this runs for every device of every new node)
            not dev.mig_profiles
            and dev.custom_info is None
            and uid.isascii()
            and typ.isascii()
            and mode.isascii()
            and vendor.isascii()
        ):
            size += _DEVICE_INFO_SIZE + 4 * _STR_SIZE + len(uid) + len(typ) + len(mode) + len(vendor)
        else:
            size += _device_size(dev, seen)
    if inventory.pair_scores:
        size += approx_size(inventory.pair_scores)
    if inventory.cordoned:
        size += approx_size(inventory.cordoned)
    if inventory.node_group:
        size += sys.getsizeof(inventory.node_group)
    return size


#: an inventory without devices and its tuple (devices are charged one by one), with its filled
#: ``last_verdict`` slot
_INVENTORY_BASE = (
    sys.getsizeof(Inventory())
    + sys.getsizeof(())
    + sys.getsizeof(b"#" * 16)
    + 2 * _STR_SIZE
    + _VERDICT_SLOT_SIZE
    + _TAG_SLOT_SIZE
)
#: a device read from registration text, but for its strings' characters (charged as the text's):
#: the object, its numbers and three string headers (id, type, mode; its vendor's name is the
#: vendor's own string)
_READ_DEVICE_SIZE = _DEVICE_INFO_SIZE + 3 * _STR_SIZE + 8  # (+ its slot in the devices tuple)
#: a raw key ``(vendor positions, annotation values)`` but for its text: two small tuples, a few
#: vendor positions and the value strings' headers
_RAW_KEY_SIZE = 2 * sys.getsizeof((None,) * 8) + 8 * _STR_SIZE
_MIG_PROFILES = attrgetter("mig_profiles")
_CUSTOM_INFO = attrgetter("custom_info")


def _read_inventory_size(inventory: Inventory, text_bytes: int) -> int:
    """``_inventory_size`` in constant time for an inventory whose device strings were all read from
    ``text_bytes`` of registration text (each character of theirs is one of the text's, at most as
    wide): the formula when its devices carry nothing else, ``_inventory_size`` when they do."""
    devices = inventory.devices
    n = len(devices)
    if (
        inventory.pair_scores
        or inventory.cordoned
        or list(map(_MIG_PROFILES, devices)).count(()) != n
        or list(map(_CUSTOM_INFO, devices)).count(None) != n
    ):
        return _inventory_size(inventory)
    return _INVENTORY_BASE + len(inventory.error) + n * _READ_DEVICE_SIZE + text_bytes


def _raw_key_size(raw: tuple) -> int:
    """Bytes of a raw inventory key: registration strings (and None / numbers) in one or two tuples
    (what ``_text_bytes`` lets through); anything else is sized by ``approx_size``."""
    getsizeof = sys.getsizeof
    size = getsizeof(raw)
    for part in raw:
        if type(part) is tuple:
            size += getsizeof(part)
            for item in part:
                size += getsizeof(item) if item is None or type(item) in _PLAIN else approx_size(item)
        else:
            size += getsizeof(part) if part is None or type(part) in _PLAIN else approx_size(part)
    return size


_PLAIN = frozenset({str, int, float, bool})


def _verdict_size(key: bytes, verdict: _MemoVerdict) -> int:
    size = sys.getsizeof(key) + sys.getsizeof(verdict) + sys.getsizeof(verdict.reason)
    fit = verdict.fit
    if fit is None:
        return size
    size += sys.getsizeof(fit) + sys.getsizeof(fit.containers) + sys.getsizeof(fit.reason)
    for container in fit.containers:
        size += sys.getsizeof(container)
        for dev in container:
            size += _CONTAINER_DEVICE_SIZE + sys.getsizeof(dev.uuid) + sys.getsizeof(dev.type)
            if dev.mig_placement is not None:
                size += approx_size(dev.mig_placement, dev.mig_profile)
    if fit.device_reasons:
        size += sys.getsizeof(fit.device_reasons) + sys.getsizeof(dict(fit.device_reasons))
        for uuid, reason in fit.device_reasons.items():
            size += sys.getsizeof(uuid) + sys.getsizeof(reason)
    return size


def _shape_verdict(memo: _MemoVerdict, devices: Sequence[DeviceInfo], size: int) -> _ShapeVerdict:
    """``memo`` (the verdict on ``devices``) ready to be relabelled for other nodes of its shape."""
    positions = MappingProxyType({dev.id: i for i, dev in enumerate(devices)})
    fit = memo.fit
    chosen = (
        tuple(tuple((positions[d.uuid], d) for d in c) for c in fit.containers) if fit is not None else ()
    )
    return _ShapeVerdict(memo, positions, size, chosen)


def _relabel(shared: _ShapeVerdict, devices: Sequence[DeviceInfo]) -> _MemoVerdict | None:
    """``shared``'s verdict with its UUIDs (chosen devices, per-device reasons) replaced by those
    of ``devices`` at the same positions; None if it names a UUID its node did not have."""
    memo = shared.memo
    fit = memo.fit
    if fit is None or (not fit.containers and not fit.device_reasons):
        return memo
    try:
        containers = []
        for chosen in shared.chosen:  # (loops, not nested comprehensions: this runs per new node)
            row = []
            for at, d in chosen:
                row.append(
                    ContainerDevice(
                        d.idx, devices[at].id, d.type, d.usedmem, d.usedcores, d.mig_profile, d.mig_placement
                    )
                )
            containers.append(tuple(row))
        reasons = fit.device_reasons
        if reasons:
            positions = shared.positions
            reasons = MappingProxyType({devices[positions[uuid]].id: why for uuid, why in reasons.items()})
    except (KeyError, IndexError):
        return None
    relabelled = PodFit(
        fit.ok,
        fit.reason,
        tuple(containers),
        fit.score_before,
        fit.vendor_score,
        None,
        fit.failed_container,
        reasons,
    )
    return _MemoVerdict(memo.fits, memo.reason, relabelled, memo.score_after)


def _without_usage(fit: PodFit | None) -> PodFit | None:
    """What the verdict memo keeps of a fit: everything but ``usage_after`` (working objects)."""
    if fit is None or fit.usage_after is None:
        return fit
    return PodFit(
        fit.ok,
        fit.reason,
        fit.containers,
        fit.score_before,
        fit.vendor_score,
        None,
        fit.failed_container,
        fit.device_reasons,
    )


class Simulator:
    """Stateless HAMi simulation over template nodes."""

    def __init__(self, config: EngineConfig | None = None, resolver: InventoryResolver | None = None) -> None:
        self.config = config or EngineConfig()
        self.vendors: dict[str, Vendor] = {v.common_word: v for v in self.config.vendors}
        # which vendors a node's annotation keys / capacity names call in (vendors that declare
        # no sources read every node); most nodes register one or two of the ~25 backends
        self._vendor_list = list(self.vendors.values())
        self._always: list[int] = []
        self._by_annotation: dict[str, list[int]] = {}
        self._by_capacity: dict[str, list[int]] = {}
        for i, vendor in enumerate(self._vendor_list):
            sources = vendor.registration_sources()
            if sources is None:
                self._always.append(i)
                continue
            for key in sources[0]:
                self._by_annotation.setdefault(key, []).append(i)
            for name in sources[1]:
                self._by_capacity.setdefault(name, []).append(i)
        self._always_vendors = [self._vendor_list[i] for i in self._always]
        self._capacity_names = frozenset(self._by_capacity)
        self.resolver = resolver
        # half of the budget each: inventories (by registration text and by digest), verdicts
        budget = max(0, self.config.cache_bytes)
        self._inventories: ByteLRU[Hashable, Inventory] = ByteLRU(budget // 2)
        verdict_budget = budget - budget // 2
        shape_budget = verdict_budget // 16  # a few entries per node group and pod
        live_budget = verdict_budget // 4  # a verdict per live node and pod
        self._verdicts: ByteLRU[bytes, _MemoVerdict] = ByteLRU(verdict_budget - shape_budget - live_budget)
        self._shapes: ByteLRU[tuple, _ShapeVerdict] = ByteLRU(shape_budget, shape_budget // 8)
        self._live: ByteLRU[bytes, _LiveVerdict] = ByteLRU(live_budget)
        self._pods: dict[bytes, PodContext] = {}
        self._vendor_sets: dict[tuple, _VendorPlan] = {}

    def clear_caches(self) -> None:
        self._inventories.clear()
        self._verdicts.clear()
        self._shapes.clear()
        self._live.clear()
        self._pods.clear()
        clear_templates()

    def cache_stats(self) -> dict[str, int]:
        """Entries, accounted bytes (at most ``config.cache_bytes``), evictions, entries refused."""
        memos = (self._inventories, self._verdicts, self._shapes, self._live)
        return {
            "entries": sum(len(m) for m in memos),
            "bytes": sum(m.bytes for m in memos),
            "evictions": sum(m.evictions for m in memos),
            "refused": sum(m.refused for m in memos),
        }

    # -- pods ---------------------------------------------------------------------------------------
    def pod_context(self, pod: Mapping) -> PodContext:
        """Parse a pod and resolve its policies. Raises ``PodError`` or ``WeightsError``.

        CA asks about the same pending pod call after call: a context is memoised by the pod's JSON
        (pods up to 16 KB, a few hundred of them). It is shared, so no caller may change it.
        """
        try:
            raw: bytes | None = orjson.dumps(pod)
        except (TypeError, orjson.JSONEncodeError):
            raw = None
        if raw is not None and len(raw) <= _POD_MEMO_MAX_BYTES:
            ctx = self._pods.get(raw)
            if ctx is None:
                ctx = self._pod_context(pod)
                if len(self._pods) >= _POD_MEMO_ENTRIES:
                    self._pods.clear()
                self._pods[raw] = ctx
            return ctx
        return self._pod_context(pod)

    def _pod_context(self, pod: Mapping) -> PodContext:
        view = parse_pod(pod, list(self.vendors.values()))
        annotations = view.annotations
        # HAMi reads the weights only for pods that request a device (calcScore runs after the
        # no-request early return), so a bad annotation on such a pod is not an error.
        weights = pod_weights(annotations) if view.requests.has_requests else Weights()
        numa_bind = any(vendor.binds_numa(annotations) for vendor in self._vendor_list)
        gpu_policy = resolve_gpu_policy(annotations, self.config.gpu_policy, numa_bind)
        node_policy = resolve_node_policy(annotations, self.config.node_policy)
        key = _digest(repr(view.requests), sorted(annotations.items()), node_policy)
        vendors = self.vendors
        uuid_blind = view.requests.has_requests and all(
            vtype in vendors and vendors[vtype].fit_ignores_uuids(annotations)
            for container in view.requests.containers
            for vtype in container
        )
        return PodContext(view, node_policy, gpu_policy, weights, key, uuid_blind)

    def managed_resources(self) -> frozenset[str]:
        names: set[str] = set()
        for vendor in self.vendors.values():
            names |= vendor.resource_names()
        return frozenset(names)

    # -- inventories -----------------------------------------------------------------------------
    def _node_plan(self, annotations: Mapping[str, str], node: Mapping) -> _VendorPlan:
        """The vendors that can find devices on ``node`` (in registration order) and how its
        inventory is keyed.

        This runs for every node of every CA call: nodes of a group share their annotation keys and
        capacity names, so the answer is remembered per (annotation keys, capacity names).
        """
        status = node.get("status")
        capacity = status.get("capacity") if isinstance(status, _MAPPINGS) else None
        if not isinstance(capacity, _MAPPINGS) or self._capacity_names.isdisjoint(capacity):
            key: tuple = tuple(annotations)  # no capacity name calls a vendor in: the annotations decide
        else:  # one tuple: the number of annotation keys keeps the two lists apart
            key = (len(annotations), *annotations, *capacity)
        try:
            found = self._vendor_sets.get(key)
        except TypeError:  # a key that is not a string: look it up the long way
            return self._plan(self._find_node_vendors(annotations, node))
        if found is None:
            found = self._plan(self._find_node_vendors(annotations, node))
            if len(self._vendor_sets) >= 1024:
                self._vendor_sets.clear()
            self._vendor_sets[key] = found
        return found

    def _plan(self, vendors: list[Vendor]) -> _VendorPlan:
        """``vendors`` and, when each of them reads only annotations (``inventory_annotations``), the
        annotation keys whose values (after the vendors' positions) key a node's inventory."""
        keys: list[str] = [DEVICE_CORDON]
        for vendor in vendors:
            read = vendor.inventory_annotations()
            if read is None:
                return _VendorPlan(vendors, None, ())
            keys.extend(read)
        return _VendorPlan(vendors, tuple(keys), tuple(self._vendor_list.index(v) for v in vendors))

    def _find_node_vendors(self, annotations: Mapping[str, str], node: Mapping) -> list[Vendor]:
        """One dictionary lookup per annotation key and capacity name."""
        found: set[int] | None = None
        by_annotation = self._by_annotation
        for key in annotations:
            hit = by_annotation.get(key)
            if hit is not None:
                found = set(hit) if found is None else found.union(hit)
        by_capacity = self._by_capacity
        if by_capacity:
            status = node.get("status")
            capacity = status.get("capacity") if isinstance(status, _MAPPINGS) else None
            if isinstance(capacity, _MAPPINGS):
                for name in capacity:
                    hit = by_capacity.get(name)
                    if hit is not None:
                        found = set(hit) if found is None else found.union(hit)
        if found is None:
            return self._always_vendors
        found.update(self._always)
        return [self._vendor_list[i] for i in sorted(found)]

    def annotation_inventory(self, node: Mapping) -> Inventory:
        """Devices from the node's own registration annotations (HAMi ``buildTransientNodeInfo``)."""
        annotations = node_annotations(node)
        plan = self._node_plan(annotations, node)
        # Small registrations are memoised by their own (hashable) text, which costs a string hash
        # instead of a serialisation + digest; large or odd ones by digest. A hit needs no size
        # check (only small keys are ever put); the digest is computed on a miss either way: it keys
        # the verdict memo.
        raw: tuple | None
        if plan.keys is not None:  # (the vendors' positions, then the values of what they read)
            raw = (plan.tag, *map(annotations.get, plan.keys))
        else:
            read: list[object] = [annotations.get(DEVICE_CORDON)]
            for vendor in plan.vendors:
                read.append(vendor.inventory_key(annotations, node))
            raw = tuple(read)
        parts = raw  # (kept: ``raw`` becomes None on the digest path)
        memo = self._inventories
        try:
            cached = memo.get(raw)
        except TypeError:  # an unhashable value: the digest path
            raw, cached = None, None
        if cached is not None:
            return cached
        text_bytes = _text_bytes(parts) if raw is not None else 0
        if text_bytes > _RAW_MEMO_MAX_BYTES:
            raw = None
        if raw is None:  # memoised by digest
            key = _digest(parts)
            cached = memo.get(key)
            if cached is not None:
                return cached
            inventory = self._parse_inventory(annotations, node, plan.vendors, key)
            size = _inventory_size(inventory)
            object.__setattr__(inventory, "charge", size)
            memo.put(key, inventory, size)
            return inventory
        inventory = self._parse_inventory(annotations, node, plan.vendors, _unique_key())
        if plan.keys is not None:  # every string of its devices was read from the key's text
            size = _read_inventory_size(inventory, text_bytes) + _RAW_KEY_SIZE + text_bytes
        else:
            size = _inventory_size(inventory) + _raw_key_size(raw)
        object.__setattr__(inventory, "charge", size)
        memo.put(raw, inventory, size)
        return inventory

    @staticmethod
    def _parse_inventory(
        annotations: Mapping[str, str], node: Mapping, node_vendors: list[Vendor], key: bytes
    ) -> Inventory:
        """Every vendor's devices on the node; the first vendor error when none registers any."""
        devices: list[DeviceInfo] = []
        pair_scores: dict[str, dict[str, int]] = {}
        first_error = ""
        for vendor in node_vendors:
            try:
                found, scores = vendor.node_devices(annotations, node)
            except InventoryError as exc:
                first_error = first_error or str(exc)
                continue
            devices.extend(found)
            pair_scores.update(scores)
        if not devices:
            return Inventory(source="none", error=first_error or R.NODE_UNREGISTERED, key=key)
        return Inventory(tuple(devices), pair_scores, parse_cordon(annotations.get(DEVICE_CORDON)), key=key)

    def tag_inventory(self, inventory: Inventory, node_group: str, source: str | None = None) -> Inventory:
        """``inventory`` attributed to a node group (and a source), memoised with the parsed
        inventories, so resolvers keep no unbounded memo of their own (a tagged copy shares the
        devices of its original and would keep them alive after the memo let them go)."""
        source = source or inventory.source
        last = inventory.last_tagged
        if last is not None and last[0] == node_group and last[1] == source:
            return last[2]
        key = (inventory.key, node_group, source)
        memo = self._inventories
        tagged = memo.get(key) if inventory.key else None
        if tagged is None:
            tagged = Inventory(
                inventory.devices,
                inventory.pair_scores,
                inventory.cordoned,
                node_group,
                source,
                inventory.error,
                inventory.key,
            )
            if inventory.key:
                size = (inventory.charge or _inventory_size(inventory)) + sys.getsizeof(key)
                object.__setattr__(tagged, "charge", size)
                memo.put(key, tagged, size)
        if inventory.key:
            object.__setattr__(inventory, "last_tagged", (node_group, source, tagged))
        return tagged

    def inventory(self, node: Mapping) -> Inventory:
        if self.resolver is not None:
            return self.resolver(node, self)
        return self.annotation_inventory(node)

    # -- evaluation --------------------------------------------------------------------------------
    def evaluate(self, ctx: PodContext, name: str, state: NodeState, *, owned: bool = False) -> NodeVerdict:
        """Fit the pod on a node state (not mutated, unless ``owned``: built for this one fit)."""
        fit = fit_pod(state, ctx.pod, self.vendors, ctx.gpu_policy, ctx.weights, ctx.node_policy, owned=owned)
        verdict = NodeVerdict(name, fit.ok, fit.reason, fit=fit)
        if fit.ok and fit.usage_after is not None:
            # HAMi's node score = usage score + the vendors' ScoreNode (OverrideScore)
            score = node_score(fit.usage_after)
            verdict.score_after = f32(score + fit.vendor_score) if fit.vendor_score else score
        return verdict

    def filter_nodes(
        self,
        ctx: PodContext,
        nodes: Sequence[Mapping],
        states: Mapping[str, NodeState] | None = None,
        live: LiveHook | None = None,
    ) -> list[NodeVerdict]:
        """One verdict per node, in input order. ``states`` overrides usage (sessions); ``live``
        gives a live node's usage (or why it fails) for the nodes ``states`` does not hold. ``live``
        is not asked about CA's template nodes (``TEMPLATE_PREFIX``): they are never live.

        This loop runs for every node of every CA call, so it binds what it calls once and builds
        nothing per node but the verdict (a warm call costs about a dictionary lookup per node).
        """
        if not ctx.pod.requests.has_requests:
            return [NodeVerdict(node["metadata"]["name"], True) for node in nodes]
        verdicts: list[NodeVerdict] = []
        append = verdicts.append
        inventory_of = self.annotation_inventory if self.resolver is None else self.inventory
        memo_get = self._verdicts.get
        ctx_key = ctx.key
        for node in nodes:
            name = node["metadata"]["name"]
            inventory = inventory_of(node)
            if inventory.error:
                append(
                    NodeVerdict(name, False, inventory.error, True, inventory.node_group, inventory.source)
                )
                continue
            session_state = states.get(name) if states else None
            if session_state is not None:
                verdict = self.evaluate(ctx, name, session_state)
                verdict.node_group, verdict.source = inventory.node_group, inventory.source
                append(verdict)
                continue
            found = live(name) if live is not None and not name.startswith(TEMPLATE_PREFIX) else None
            if isinstance(found, str):
                append(NodeVerdict(name, False, found, False, inventory.node_group, inventory.source))
                continue
            memo: _MemoVerdict | None
            if found is not None:
                memo = self._live_verdict(ctx, name, inventory, found)
            else:
                last = inventory.last_verdict
                memo = last[1]() if last is not None and last[0] is ctx_key else None
                if memo is None:
                    memo = memo_get(inventory.key + ctx_key) if inventory.key else None
                    if memo is None:
                        memo = self._zero_usage_verdict(ctx, name, inventory)
                    if inventory.key:
                        object.__setattr__(inventory, "last_verdict", (ctx_key, weakref.ref(memo)))
            append(
                NodeVerdict(
                    name,
                    memo.fits,
                    memo.reason,
                    False,
                    inventory.node_group,
                    inventory.source,
                    memo.fit,
                    memo.score_after,
                )
            )
        return verdicts

    def _live_verdict(
        self, ctx: PodContext, name: str, inventory: Inventory, usage: LiveUsageLike
    ) -> _MemoVerdict:
        """The pod on a live node: its registered devices carrying ``usage``. Remembered with (a weak
        reference to) the usage object it was computed on: CA asks again every loop, and until the
        node's usage changes the store hands out the same object, so a repeat is a lookup."""
        key = inventory.key + ctx.key if inventory.key else b""
        entry = self._live.get(key) if key else None
        if entry is not None and entry.usage() is usage:
            return entry.memo
        state = apply_usage(inventory.state(name), usage.devices, in_place=True)
        memo = _MemoVerdict.of(self.evaluate(ctx, name, state, owned=True))
        if key:
            self._live.put(
                key, _LiveVerdict(weakref.ref(usage), memo), _verdict_size(key, memo) + _LIVE_ENTRY_SIZE
            )
        return memo

    def _zero_usage_verdict(self, ctx: PodContext, name: str, inventory: Inventory) -> _MemoVerdict:
        """The pod on the node's registered devices with no usage, then memoised by content digest
        (``filter_nodes`` looks the memo up first)."""
        memo_key = inventory.key + ctx.key
        shape_key = (self._shape(inventory), ctx.key) if ctx.uuid_blind else None
        shared = self._shapes.get(shape_key) if shape_key is not None and shape_key[0] is not None else None
        memo = _relabel(shared, inventory.devices) if shared is not None else None
        if memo is not None:
            size = shared.size  # type: ignore[union-attr]
        else:
            memo = _MemoVerdict.of(self.evaluate(ctx, name, inventory.state(name), owned=True))
            size = _verdict_size(memo_key, memo)
            if shape_key is not None and shape_key[0] is not None and self._shareable(inventory):
                entry = _shape_verdict(memo, inventory.devices, size)
                self._shapes.put(
                    shape_key, entry, approx_size(shape_key, entry.positions, entry.chosen) + size
                )
        if inventory.key:  # a resolver's inventory without a digest cannot be told apart
            self._verdicts.put(memo_key, memo, size)
        return memo

    def _shape(self, inventory: Inventory) -> tuple[_DeviceShape, ...] | RegistrationTemplate | None:
        """The inventory without its UUIDs; None when cordons or pair scores name UUIDs, or two
        devices share one. Nodes of one shape share a verdict if the first was ``_shareable``: the
        shape holds everything that decides it (every device field but the UUID). Devices rebuilt
        from one registration template are named by it (one reference, hashed by identity)."""
        if inventory.pair_scores or inventory.cordoned:
            return None
        devices = inventory.devices
        n = len(devices)
        if not n or len(set(map(_DEVICE_ID, devices))) != n:
            return None
        template = devices[0].template  # one registration's devices, rebuilt from one template
        if template is not None and devices[-1].template is template and len(template.fields) == n:
            return template
        if list(map(_CUSTOM_INFO, devices)).count(None) != n:
            return None  # (vendor data: never ``_shareable``)
        return tuple(map(_SHAPE_FIELDS, devices))

    def _shareable(self, inventory: Inventory) -> bool:
        """Whether a verdict on ``inventory`` cannot depend on its UUIDs (given a pod whose vendors
        ignore them): no vendor data, and devices whose vendor treats a UUID as an identity
        (``Vendor.uuid_blind_device``) and whose card type names no vendor (ScoreNode's keys)."""
        vendors = self.vendors
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

    def prioritize_score(self, ctx: PodContext, verdict: NodeVerdict) -> int:
        """Extender score 0..10 from HAMi's node score after placing the pod (design.md 2.2).

        The raw score includes the vendors' ``ScoreNode`` (MetaX 2000 - loss, MetaX sGPU +-10000 x
        topology, Kunlunxin -1000..2000, Ascend 910 up to 10 per container), so it can leave 0..30:
        ``round_half_up(raw / 3)`` is clamped to 0..10. Such a node keeps the side HAMi would pick
        it from (binpack: high -> 10; spread: very low -> 10, very high -> 0); the order among nodes
        beyond the range is lost, as an extender can only answer 0..10.
        """
        scaled = round_half_up(verdict.score_after / 3)
        scaled = max(0, min(10, scaled))
        return 10 - scaled if ctx.node_policy == "spread" else scaled
