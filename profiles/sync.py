"""Upsert ``NodeInventory`` rows from a successful node list; mark stale on a failed one.

Only a complete, successful read changes inventories. A failure never deletes or blanks a row: the
last good inventory stays, flagged ``stale`` with the error text.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection, transaction
from django.dispatch import Signal
from django.utils import timezone

from hami_sim.engine import reasons as R
from hami_sim.runtime.bulk import copy_rows, gc_paused, instance_row, update_rows
from hami_sim.runtime.progress import counted
from hami_sim.runtime.rejects import bad_identity, note, object_name
from hami_sim.runtime.storable import clean_json, clean_text, encode_checked

from .constants import REGISTRATION_PREFIX
from .drift import check_inventories, devices_to_json
from .inventory import Snapshot, load_snapshot, match_group

__all__ = ["sync_nodes", "mark_stale", "cluster_synced"]

#: Sent by the periodic sync after a successful node sync, with ``source``, ``counts`` (a dict the
#: receivers may add to) and the ``nodes`` listed. Apps above ``profiles`` hook in here (the usage app
#: relists pods and keeps what CA reads of each node).
cluster_synced = Signal()


def _checked_digest(parts: tuple) -> tuple[str, bool]:
    """The content hash of a node's parts and whether they hold text the database refuses. A node
    needing repair hashes apart from its repaired text, so that text arriving for real later is
    parsed anew."""
    encoded, dirty = encode_checked(parts)
    digest = hashlib.blake2b(encoded + (b"!unstorable" if dirty else b""), digest_size=16).hexdigest()
    return digest, dirty


_SYNC_LOCK_ID = 0x68616D69  # "hami"
_BATCH = 1000
#: what a sync writes on a changed inventory (everything but its identity and drift bookkeeping)
_SYNCED_FIELDS = [
    "uid",
    "node_group",
    "labels",
    "annotations",
    "capacity",
    "devices",
    "parse_error",
    "content_hash",
    "first_seen",
    "last_seen",
    "registered_at",
    "gone_at",
    "stale",
    "sync_error",
]


def _single_flight() -> None:
    """Serialise concurrent syncs (beat + a manual run, two workers) on PostgreSQL; SQLite
    serialises writers itself. Held until the transaction ends."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_SYNC_LOCK_ID])


@dataclass(slots=True)
class _NodeRead:
    """What a sync keeps of one listed Node: the registration-relevant parts, its group and their hash."""

    name: str
    uid: str
    labels: dict
    annotations: dict
    capacity: dict
    group_id: int | None
    content_hash: str
    #: some text of it the database refuses: stored repaired (``_repair``)
    dirty: bool = False


@dataclass(slots=True)
class _Plan:
    """The rows one sync writes: new inventories (COPY), changed ones, and unchanged ones (touched)."""

    now: datetime
    create: list = field(default_factory=list)
    update: list = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)


@gc_paused()
def sync_nodes(nodes: list[dict]) -> dict[str, int]:
    """Upsert one inventory per node, mark vanished ones gone, check drift for what changed.

    In steps: read each node (``_read_node``), skip it when its hash matches, parse and fill the
    inventory (``_fill``), write all rows in a few statements (``_write``), mark vanished nodes
    gone, then check drift for every inventory that changed.
    """
    from hami_sim.runtime.simulator import get_simulator

    from .models import NodeGroup, NodeInventory

    simulator = get_simulator()
    sources = _registration_sources(simulator)
    snapshot = load_snapshot()
    group_ids = dict(NodeGroup.objects.values_list("name", "id"))
    counts = {"nodes": len(nodes), "created": 0, "updated": 0, "unchanged": 0, "gone": 0}
    plan = _Plan(timezone.now())
    with transaction.atomic():
        _single_flight()
        existing = {inv.name: inv for inv in NodeInventory.objects.defer("labels", "annotations", "devices")}
        for node in counted(nodes, "nodes"):
            read = _read_node(node, sources, snapshot, group_ids)
            if read is None:  # what names it cannot be stored: skipped (and noted)
                continue
            plan.seen.add(read.name)
            inv = existing.get(read.name)
            if inv is not None and inv.content_hash == read.content_hash and inv.gone_at is None:
                plan.unchanged.append(inv.pk)
                continue
            inv = _fill(inv, read, simulator, plan.now, counts)
            (plan.update if inv.pk else plan.create).append(inv)
        changed = _write(plan, counts)
        changed.extend(_mark_gone(existing, plan, counts))
    drift = check_inventories(changed) if changed else {"opened": 0, "resolved": 0}
    counts["findings_opened"] = drift["opened"]
    counts["findings_resolved"] = drift["resolved"]
    return counts


def _read_node(
    node: dict, sources: tuple[frozenset[str], frozenset[str]], snapshot: Snapshot, group_ids: dict
) -> _NodeRead | None:
    """The parts of a Node a registration is read from (annotations of ``REGISTRATION_PREFIX`` or a
    vendor's keys, the vendors' capacity names, all labels), its group, and their content hash: an
    unchanged hash means an unchanged inventory, so the node is neither parsed nor rewritten.
    None (noted) for a node whose name or uid cannot be stored."""
    register_keys, capacity_names = sources
    meta = node.get("metadata") if isinstance(node, dict) else None
    problem = bad_identity(meta)
    if problem is not None:
        note("node", object_name(meta), "bad-identity", "skipped", problem)
        return None
    assert isinstance(meta, dict)
    labels = dict(meta.get("labels") or {})
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if k.startswith(REGISTRATION_PREFIX) or k in register_keys
    }
    capacity = _capacity(node.get("status"), capacity_names)
    entry = match_group(node, snapshot)
    group_id = group_ids.get(entry.name) if entry else None
    uid = str(meta.get("uid") or "")
    # (a node without registration capacity hashes as it always did: no rewrite on upgrade)
    parts = (
        (uid, labels, annotations, group_id, capacity) if capacity else (uid, labels, annotations, group_id)
    )
    digest, dirty = _checked_digest(parts)
    return _NodeRead(meta["name"], uid, labels, annotations, capacity, group_id, digest, dirty)


def _capacity(status: object, capacity_names: frozenset[str]) -> dict[str, str]:
    """The capacity entries some vendor registers devices from, as strings ({} when malformed)."""
    raw = status.get("capacity") if isinstance(status, dict) else None
    if not isinstance(raw, dict):
        return {}
    return {k: str(v) for k, v in raw.items() if k in capacity_names}


def _fill(inv, read: _NodeRead, simulator, now: datetime, counts: dict[str, int]):
    """Parse the node's registration and write it into its inventory (a new one for a new node, or
    a new node object under an old name, whose first registration then counts anew)."""
    from .models import NodeInventory

    # every vendor's registration: annotations, capacity-based vendors' capacity, labels (Neuron),
    # parsed as HAMi reads them (unrepaired: a NUL in a registration is HAMi's to judge)
    devices, parse_error = _parse(read, simulator)
    if inv is None or (inv.uid and read.uid and inv.uid != read.uid):
        inv = inv or NodeInventory(name=read.name)
        inv.first_seen = now
        inv.registered_at = None
        counts["created"] += 1
    else:
        counts["updated"] += 1
    inv.uid = read.uid
    inv.node_group_id = read.group_id
    inv.labels, inv.annotations, inv.capacity = read.labels, read.annotations, read.capacity
    inv.devices, inv.parse_error = devices, parse_error
    inv.content_hash = read.content_hash
    inv.last_seen = now
    inv.gone_at = None
    inv.stale = False
    inv.sync_error = ""
    if inv.devices and inv.registered_at is None:
        inv.registered_at = now
    if read.dirty:
        _repair(inv)
    return inv


def _parse(read: _NodeRead, simulator) -> tuple[list, str]:
    """The node's devices (annotation JSON form) and its registration's error. A registration the
    parser cannot read at all is that node's error, never the sync's."""
    node = {
        "metadata": {"name": read.name, "annotations": read.annotations, "labels": read.labels},
        "status": {"capacity": read.capacity},
    }
    try:
        parsed = simulator.annotation_inventory(node)
    except Exception as exc:  # a parser bug on hostile input: this node is unregistered, the rest lands
        note("registration", read.name, "unreadable", "sanitised", f"{exc.__class__.__name__}: {exc}")
        return [], clean_text(f"unreadable registration: {exc.__class__.__name__}: {exc}", 2000)
    devices = devices_to_json(parsed.devices) if not parsed.error else []
    return devices, parsed.error if parsed.error and parsed.error != R.NODE_UNREGISTERED else ""


def _repair(inv) -> None:
    """Store a node whose text the database refuses with that text repaired, and note it: as a
    registration when the repair is in what HAMi registers, else as a node."""
    registration = (inv.annotations, inv.devices, inv.parse_error)
    inv.annotations, inv.devices = clean_json(inv.annotations), clean_json(inv.devices)
    inv.parse_error = clean_text(inv.parse_error)
    kind = "registration" if registration != (inv.annotations, inv.devices, inv.parse_error) else "node"
    inv.labels, inv.capacity, inv.uid = clean_json(inv.labels), clean_json(inv.capacity), clean_text(inv.uid)
    note(
        kind, inv.name, "unstorable-text", "sanitised", "NUL characters or lone surrogates replaced by U+FFFD"
    )


def _write(plan: _Plan, counts: dict[str, int]) -> list[int]:
    """Write the plan in a few statements, not one per node (a cold sync lists thousands): ``COPY``
    the new rows, one ``UPDATE ... FROM`` for the changed, batched touches for the unchanged.
    Returns the primary keys of the inventories that changed."""
    from .models import NodeInventory

    copy_rows(NodeInventory, [instance_row(inv) for inv in plan.create])
    update_rows(plan.update, _SYNCED_FIELDS)
    changed = [inv.pk for inv in plan.update] + _pks_of(NodeInventory, [inv.name for inv in plan.create])
    for i in range(0, len(plan.unchanged), _BATCH):
        NodeInventory.objects.filter(pk__in=plan.unchanged[i : i + _BATCH]).update(
            last_seen=plan.now, stale=False, sync_error=""
        )
    counts["unchanged"] = len(plan.unchanged)
    return changed


def _mark_gone(existing: dict, plan: _Plan, counts: dict[str, int]) -> list[int]:
    """Flag the live inventories of nodes the list no longer has as gone; returns their keys."""
    from .models import NodeInventory

    vanished = [inv.pk for n, inv in existing.items() if n not in plan.seen and inv.gone_at is None]
    if vanished:
        NodeInventory.objects.filter(pk__in=vanished).update(gone_at=plan.now, stale=False, sync_error="")
        counts["gone"] = len(vanished)
    return vanished


def _pks_of(model, names: list[str]) -> list[int]:
    """The primary keys of rows just inserted by ``COPY`` (which returns none), by unique name."""
    pks: list[int] = []
    for i in range(0, len(names), _BATCH):
        pks.extend(model.objects.filter(name__in=names[i : i + _BATCH]).values_list("pk", flat=True))
    return pks


def _registration_sources(simulator) -> tuple[frozenset[str], frozenset[str]]:
    """Annotation keys and capacity names any configured vendor registers devices from."""
    keys: set[str] = set()
    names: set[str] = set()
    for vendor in simulator.vendors.values():
        sources = vendor.registration_sources()
        if sources is None:
            continue
        keys.update(sources[0])
        names.update(sources[1])
    return frozenset(keys), frozenset(names)


def mark_stale(error: str) -> int:
    """Keep every live inventory as it is, flagged stale with the read error. Returns rows flagged."""
    from .models import NodeInventory

    return NodeInventory.objects.filter(gone_at__isnull=True).update(stale=True, sync_error=error[:2000])
