"""Which vendors read a node, and what keys its decoded inventory: the part of the filter path that
runs for every node of every CA call before any fit.

A node calls in the vendors whose registration annotations or capacity names it carries (vendors
that declare no sources read every node); most nodes register one or two of the ~25 backends, and a
group's nodes share their kind (annotation keys and capacity names), so the plan for a kind is
remembered (``NodeKinds``). A plan says which annotations key the inventory when its vendors read
annotations only; ``Simulator.annotation_inventory`` builds the key inline (it runs per node) and
keeps up to 16 K characters of text as the key itself (``text_key_size``), beyond that a digest.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import orjson

from . import reasons as R
from .annotations import DEVICE_CORDON, parse_cordon
from .cache_entries import Entry, key_bytes, text_key_bytes
from .frozen import EMPTY, freeze
from .lru import ByteLRU
from .model import DeviceInfo, Inventory, InventoryError, positional
from .registration_templates import RebuiltDevices, activate, deactivate
from .vendors import Vendor

__all__ = [
    "NodeKinds",
    "VendorPlan",
    "node_annotations",
    "digest",
    "text_key_size",
    "unique_key",
    "parse_inventory",
]

_MAPPINGS = (dict, Mapping)  # isinstance tries the exact dict first (decoded JSON), then the ABC


def node_annotations(node: Mapping) -> Mapping[str, str]:
    meta = node.get("metadata")
    if not isinstance(meta, _MAPPINGS):
        return {}
    annotations = meta.get("annotations")
    return annotations if isinstance(annotations, _MAPPINGS) else {}


def digest(*parts: object) -> bytes:
    """A 16-byte digest of JSON-shaped parts: a cache key for what is too long to key by itself."""
    return hashlib.blake2b(orjson.dumps(parts, option=orjson.OPT_NON_STR_KEYS), digest_size=16).digest()


#: registrations up to this many characters are keyed by their own text (a string hash); larger
#: ones by a digest of it
_TEXT_KEY_MAX = 16384


@dataclass(slots=True, frozen=True)
class VendorPlan:
    """The vendors that read a kind of node (by its annotation keys and capacity names), and, when
    they read annotations only, which ones key its inventory (``tag``: the vendors' positions, so
    two vendor sets that read the same keys never share an entry)."""

    vendors: tuple[Vendor, ...]  # (the rules: shared by the simulator, not the plan's content)
    keys: tuple[str, ...] | None
    tag: tuple[int, ...]


#: ``Inventory.key`` of a registration cached by its text: unique in the process (no digest computed)
_UNIQUE_KEYS = itertools.count()


def unique_key() -> bytes:
    """``Inventory.key`` for a registration cached by its text (no digest computed)."""
    return b"#" + next(_UNIQUE_KEYS).to_bytes(15, "big")


def text_key_size(parts: tuple) -> int | None:
    """The bytes of a key of these parts kept as it is (text up to 16 K characters, ``key_bytes``);
    None when it is digested instead."""
    return text_key_bytes(parts, _TEXT_KEY_MAX)


class NodeKinds:
    """The vendors by the annotation keys and capacity names that call them in, and the plan for
    each kind of node seen (``node kinds``, a small LRU: saves a lookup per annotation key per node)."""

    def __init__(self, vendors: list[Vendor], budget: int) -> None:
        self.vendors = vendors
        self._always: list[int] = []
        self._by_annotation: dict[str, list[int]] = {}
        self._by_capacity: dict[str, list[int]] = {}
        for i, vendor in enumerate(vendors):
            sources = vendor.registration_sources()
            if sources is None:
                self._always.append(i)
                continue
            for key in sources[0]:
                self._by_annotation.setdefault(key, []).append(i)
            for name in sources[1]:
                self._by_capacity.setdefault(name, []).append(i)
        self._always_vendors = [vendors[i] for i in self._always]
        self._capacity_names = frozenset(self._by_capacity)
        self.lru: ByteLRU[Hashable, VendorPlan] = ByteLRU(budget, name="node kinds")

    def clear(self) -> None:
        self.lru.clear()

    def plan(self, annotations: Mapping[str, str], node: Mapping) -> VendorPlan:
        """The vendors that can find devices on ``node`` (in registration order) and how its
        inventory is keyed, remembered per (annotation keys, capacity names): a group's nodes share them."""
        status = node.get("status")
        capacity = status.get("capacity") if isinstance(status, _MAPPINGS) else None
        if not isinstance(capacity, _MAPPINGS) or self._capacity_names.isdisjoint(capacity):
            key: tuple = tuple(annotations)  # no capacity name calls a vendor in: the annotations decide
        else:  # one tuple: the number of annotation keys keeps the two lists apart
            key = (len(annotations), *annotations, *capacity)
        try:
            found = self.lru.get(key)
        except TypeError:  # a key that is not a string: look it up the long way
            return self._plan(self._find_node_vendors(annotations, node))
        if found is None:
            found = self._plan(self._find_node_vendors(annotations, node))
            self.lru.put(key, found, key_bytes(key) + 256)
        return found

    def _plan(self, vendors: Sequence[Vendor]) -> VendorPlan:
        """``vendors`` and, when each of them reads only annotations (``inventory_annotations``), the
        annotation keys whose values (after the vendors' positions) key a node's inventory."""
        keys: list[str] = [DEVICE_CORDON]
        for vendor in vendors:
            read = vendor.inventory_annotations()
            if read is None:
                return VendorPlan(tuple(vendors), None, ())
            keys.extend(read)
        return VendorPlan(tuple(vendors), tuple(keys), tuple(self.vendors.index(v) for v in vendors))

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
        return [self.vendors[i] for i in sorted(found)]


def parse_inventory(
    annotations: Mapping[str, str],
    node: Mapping,
    node_vendors: Sequence[Vendor],
    key: bytes,
    entry: Entry,
    templates: ByteLRU | None = None,
) -> Inventory:
    """Every vendor's devices on the node; the first vendor error when none registers any. A node
    whose one registration is a template of ``registration_templates`` (the simulator's memo, in force while
    decoding: the vendors' codecs read it) keeps it as such (``_rebuilt``)."""
    token = activate(templates)
    try:
        return _parse_inventory(annotations, node, node_vendors, key, entry)
    finally:
        deactivate(token)


def _parse_inventory(
    annotations: Mapping[str, str], node: Mapping, node_vendors: Sequence[Vendor], key: bytes, entry: Entry
) -> Inventory:
    rebuilt = _rebuilt(annotations, node_vendors) if DEVICE_CORDON not in annotations else None
    if rebuilt is not None:
        return _INVENTORY(rebuilt, EMPTY, _NO_CORDON, None, "annotation", "", key, entry)
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
        return Inventory(source="none", error=first_error or R.NODE_UNREGISTERED, key=key, entry=entry)
    cordoned = parse_cordon(annotations.get(DEVICE_CORDON))
    scores = freeze(pair_scores) if pair_scores else EMPTY
    return _INVENTORY(tuple(devices), scores, cordoned, None, "annotation", "", key, entry)


def _rebuilt(annotations: Mapping[str, str], node_vendors: Sequence[Vendor]) -> RebuiltDevices | None:
    """The node's devices as a registration template's (``NodeReads.rebuilt``), when its vendors
    all register a JSON device list (``NodeReads.json_devices``: one that is absent finds nothing)
    and exactly one of those registrations is present; None otherwise (decode the node)."""
    present = None
    for vendor in node_vendors:
        reads = vendor.reads
        if not reads.json_devices:
            return None
        if reads.registers[0] in annotations:
            if present is not None:
                return None
            present = vendor
    return present.reads.rebuilt(present.common_word, annotations) if present is not None else None


_NO_CORDON = parse_cordon(None)
#: ``Inventory`` from all its fields in order (a cold CA call builds one per node: ~0.5 us saved each)
_INVENTORY = positional(Inventory)
