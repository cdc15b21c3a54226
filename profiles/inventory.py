"""The inventory resolver the simulator calls for every template node (``HAMI_INVENTORY_RESOLVER``).

It matches a node to its node group (CA's template name first, then ``match_labels``) and applies
the group's ``inventory_source`` rule. The gRPC expander finds CA's node group ids here too
(``find_group``), with each group's rendered template Node. Groups and rendered profiles live in an in-process
``Catalog``, whose groups are one immutable ``Snapshot`` swapped in one assignment (a reader takes
it once per node and never sees half a reload); the database is consulted at most once per ``PROFILE_CACHE_CHECK_SECONDS`` for the
one-row ``CatalogVersion.generation``, which every edit bumps, so all web workers and replicas see a
saved profile within that interval without a query per node. A save in this process takes effect at
once. If the database is unreachable the last catalog (or none) is kept, so warm templates are still
answered from their own annotations.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from hami_sim.engine import reasons as R
from hami_sim.engine.frozen import freeze
from hami_sim.engine.names import template_node_group
from hami_sim.engine.simulate import Inventory, Simulator
from hami_sim.project.conf import conf

from .choices import InventorySource

__all__ = [
    "GroupEntry",
    "Snapshot",
    "Catalog",
    "load_snapshot",
    "catalog",
    "resolve",
    "match_group",
    "find_group",
    "invalidate",
    "reset",
]

log = logging.getLogger("hami_sim.profiles")


@dataclass(slots=True, frozen=True)
class GroupEntry:
    """What the resolver needs of one node group, immutable so readers never lock."""

    name: str
    match_labels: tuple[tuple[str, str], ...]
    source: str
    # A synthetic node carrying the profile's rendered registration (annotations, capacity, labels),
    # or None without a profile. Read-only (``engine.frozen.freeze``), as ``template``.
    profile_node: Mapping | None
    missing: Inventory  # the "no device profile" answer, prebuilt
    ca_node_group_id: str = ""  # CA's id for the group when it is not the name
    # The complete template Node of the group (``profiles.nodetemplates.group_template``, read-only:
    # ``engine.frozen.freeze``): what the gRPC expander packs onto when CA's template carries no
    # registration.
    template: Mapping | None = None


_NO_GROUPS: Mapping[str, GroupEntry] = MappingProxyType({})


@dataclass(slots=True, frozen=True, weakref_slot=True)
class Snapshot:
    """The node groups of one catalog load, immutable: by name, by CA's id, and those with
    ``match_labels`` most specific first. A reload builds a new one and swaps it in one assignment,
    so a reader that took one sees its lookups agree, whatever a reload does meanwhile."""

    groups: Mapping[str, GroupEntry] = field(default_factory=lambda: _NO_GROUPS)
    by_ca_id: Mapping[str, GroupEntry] = field(default_factory=lambda: _NO_GROUPS)
    by_labels: tuple[GroupEntry, ...] = ()


class Catalog:
    """Node groups and rendered profiles (``snapshot``), reloaded when the database generation moves."""

    def __init__(self) -> None:
        self.snapshot = Snapshot()
        self.generation: int | None = None
        self.next_check = float("-inf")
        self.dirty = True
        self.healthy = True
        self.fed = False  # a refresher thread reloads it (usage.store.start_refresher): readers never do
        self._lock = threading.Lock()

    # (each reads the snapshot once: a caller making several lookups takes ``snapshot`` itself)
    @property
    def groups(self) -> Mapping[str, GroupEntry]:
        return self.snapshot.groups

    @property
    def by_ca_id(self) -> Mapping[str, GroupEntry]:
        return self.snapshot.by_ca_id

    @property
    def by_labels(self) -> tuple[GroupEntry, ...]:
        return self.snapshot.by_labels

    def current(self) -> Catalog:
        """The catalog, refreshed first when dirty or when the check interval has passed (hot path)."""
        if self.fed and not self.dirty:  # kept fresh by the refresher: no query on the request path
            return self
        now = time.monotonic()
        if self.dirty or now >= self.next_check:
            with self._lock:
                if self.dirty or now >= self.next_check:
                    self._refresh(now)
        return self

    def refresh(self) -> None:
        """Check the generation now (the refresher thread); keeps the last catalog when it fails."""
        with self._lock:
            self._refresh(time.monotonic())

    def _refresh(self, now: float) -> None:
        self.next_check = now + conf().profile_cache_check_seconds
        try:
            from .models import CatalogVersion

            row = CatalogVersion.objects.filter(pk=1).values_list("generation", flat=True).first()
            generation = row or 0
            if self.dirty or generation != self.generation:
                self.snapshot = load_snapshot()
                self.generation = generation
            self.dirty = False
            if not self.healthy:
                log.warning("profile catalog reachable again")
            self.healthy = True
        except Exception as exc:  # database down: keep answering from what we have
            if self.healthy:
                log.warning("profile catalog unavailable, keeping the last one: %s", exc)
            self.healthy = False
            self.dirty = False


def load_snapshot() -> Snapshot:
    """Every node group and its rendered profiles read from the database now, as one ``Snapshot``.

    The catalog swaps one in when the generation moves; the node sync takes one of its own so the
    groups it files nodes under are the ones saved at that moment, whatever the cached catalog holds.
    """
    from .models import NodeGroup

    groups = {g.name: _group_entry(g) for g in NodeGroup.objects.prefetch_related("profiles__devices")}
    # Most specific label set first, so a narrower group wins over a broader one.
    by_labels = tuple(
        sorted((g for g in groups.values() if g.match_labels), key=lambda g: (-len(g.match_labels), g.name))
    )
    by_ca_id = {g.ca_node_group_id: g for g in groups.values() if g.ca_node_group_id}
    return Snapshot(MappingProxyType(groups), MappingProxyType(by_ca_id), by_labels)


def _group_entry(group) -> GroupEntry:
    """One group as the resolver sees it: its profiles rendered into a synthetic fresh node."""
    from .nodetemplates import group_template

    annotations: dict[str, str] = {}
    capacity: dict[str, str] = {}
    labels: dict[str, str] = {}
    rendered = _render_profiles(group, annotations, capacity, labels)
    # A synthetic fresh node: registration annotations, capacity-vendor capacity, labels.
    profile_node = (
        freeze(
            {
                "metadata": {"name": group.name, "annotations": annotations, "labels": labels},
                "status": {"capacity": capacity},
            }
        )
        if annotations or capacity
        else None
    )
    missing = Inventory(
        source="none",
        error=f"no device profile for node group {group.name}",
        node_group=group.name,
        key=b"missing:" + group.name.encode(),
    )
    return GroupEntry(
        group.name,
        tuple(sorted((str(k), str(v)) for k, v in (group.match_labels or {}).items())),
        group.inventory_source,
        profile_node,
        missing,
        ca_node_group_id=group.ca_node_group_id,
        template=freeze(group_template(group, profiles=rendered)),
    )


def _render_profiles(group, annotations: dict, capacity: dict, labels: dict) -> list[tuple[str, list, dict]]:
    """Render each of the group's profiles into ``annotations``/``capacity``/``labels``; returns the
    profiles the engine could render (a vendor it does not have, a renamed chip, is logged and skipped)."""
    from .render import render_registration

    rendered: list[tuple[str, list, dict]] = []
    for profile in group.profiles.all():
        rows = [row.as_dict() for row in profile.devices.all()]
        if not rows:
            continue
        try:
            reg = render_registration(
                group.name, profile.vendor, rows, profile.pair_scores, instance_type=group.machine_type
            )
        except KeyError:
            log.warning("profile %s/%s: vendor not in the engine; ignored", group.name, profile.vendor)
            continue
        rendered.append((profile.vendor, rows, profile.pair_scores))
        annotations.update(reg.annotations)
        capacity.update(reg.capacity)
        labels.update(reg.labels)
    return rendered


catalog = Catalog()


def invalidate() -> None:
    """Reload on next use (called on save/delete in this process; other processes poll the generation)."""
    catalog.dirty = True


def reset() -> None:
    """Forget everything (tests: a rolled-back database must not leave groups behind)."""
    with catalog._lock:
        catalog.snapshot, catalog.generation = Snapshot(), None
        catalog.dirty, catalog.healthy = True, True


def match_group(node: Mapping, cat: Catalog | Snapshot | None = None) -> GroupEntry | None:
    return _match(node, _snapshot(cat))


def _match(node: Mapping, snap: Snapshot) -> GroupEntry | None:
    """``match_group`` in one snapshot (``resolve`` runs it for each node of every CA call)."""
    groups = snap.groups
    if not groups:
        return None
    meta = node.get("metadata") or {}
    name = meta.get("name") or ""
    by_name = template_node_group(name, groups) if isinstance(name, str) else None
    if by_name is not None:
        return groups[by_name]
    return _match_labels(meta.get("labels"), snap)


def _snapshot(cat: Catalog | Snapshot | None) -> Snapshot:
    """One snapshot for all of a caller's lookups (the current catalog's when none is given)."""
    if cat is None:
        cat = catalog.current()
    return cat.snapshot if isinstance(cat, Catalog) else cat


def find_group(
    group_id: str, node: Mapping | None, cat: Catalog | Snapshot | None = None
) -> GroupEntry | None:
    """The group CA's expander calls ``group_id``: its ``ca_node_group_id``, else its name, else
    (with CA's template ``node``) the group whose ``match_labels`` the template carries."""
    snap = _snapshot(cat)
    found = snap.by_ca_id.get(group_id) or snap.groups.get(group_id)
    if found is not None or node is None:
        return found
    return _match_labels((node.get("metadata") or {}).get("labels"), snap)


def _match_labels(labels: object, cat: Snapshot) -> GroupEntry | None:
    """The most specific group (then the first by name) whose ``match_labels`` ``labels`` carries."""
    if not isinstance(labels, Mapping) or not labels:
        return None
    for entry in cat.by_labels:
        if all(labels.get(k) == v for k, v in entry.match_labels):
            return entry
    return None


def _profile_inventory(entry: GroupEntry, simulator: Simulator) -> Inventory:
    """The group's rendered profile parsed as a fresh node's registration would be: from the
    simulator's cache, with its copy tagged with the group (kept in the same entry), so nothing is
    remembered here."""
    if entry.profile_node is None:
        return entry.missing
    inv = simulator.annotation_inventory(entry.profile_node)
    source = "none" if inv.error else "profile"  # validated rows never fail; never hide it if so
    return simulator.tag_inventory(inv, entry.name, source)


def resolve(node: Mapping, simulator: Simulator) -> Inventory:
    """``HAMI_INVENTORY_RESOLVER``: a node's devices by its group's ``inventory_source`` rule."""
    snap = catalog.current().snapshot
    entry = _match(node, snap)
    if entry is None:
        return simulator.annotation_inventory(node)
    if entry.source == InventorySource.PROFILE_ONLY:
        return _profile_inventory(entry, simulator)
    own = simulator.annotation_inventory(node)
    if entry.source == InventorySource.ANNOTATION_ONLY or own.error != R.NODE_UNREGISTERED:
        # annotation-only, or a warm template (its annotation decides, malformed included)
        return simulator.tag_inventory(own, entry.name)  # bounded with the simulator's memos
    return _profile_inventory(entry, simulator)


def _resolver_state() -> object:
    """What ``resolve``'s answers depend on besides the node: the catalog snapshot in force (a node
    the extender saw before, byte for byte, keeps its inventory while this is the same object)."""
    return catalog.current().snapshot


resolve.state = _resolver_state  # type: ignore[attr-defined]
