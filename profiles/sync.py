"""Upsert ``NodeInventory`` rows from a successful node list; mark stale on a failed one.

Only a complete, successful read changes inventories. A failure never deletes or blanks a row: the
last good inventory stays, flagged ``stale`` with the error text.
"""

from __future__ import annotations

import hashlib

import orjson
from django.db import connection, transaction
from django.dispatch import Signal
from django.utils import timezone

from hami_sim.engine import reasons as R
from hami_sim.runtime.bulk import copy_rows, gc_paused, instance_row, update_rows

from .constants import REGISTRATION_PREFIX
from .drift import check_inventories, devices_to_json
from .inventory import Catalog, match_group

__all__ = ["sync_nodes", "mark_stale", "cluster_synced"]

#: Sent by the periodic sync after a successful node sync, with ``source``, ``counts`` (a dict the
#: receivers may add to) and the ``nodes`` listed. Apps above ``profiles`` hook in here (the usage app
#: relists pods and keeps what CA reads of each node).
cluster_synced = Signal()


def _digest(*parts: object) -> str:
    return hashlib.blake2b(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS), digest_size=16).hexdigest()


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


@gc_paused()
def sync_nodes(nodes: list[dict]) -> dict[str, int]:
    """Upsert one inventory per node, mark vanished ones gone, check drift for what changed."""
    from hami_sim.runtime.simulator import get_simulator

    from .models import NodeGroup, NodeInventory

    simulator = get_simulator()
    register_keys, capacity_names = _registration_sources(simulator)
    catalog = Catalog()
    catalog._load()
    group_ids = dict(NodeGroup.objects.values_list("name", "id"))
    now = timezone.now()
    counts = {"nodes": len(nodes), "created": 0, "updated": 0, "unchanged": 0, "gone": 0}
    create: list = []
    update: list = []
    unchanged: list[int] = []
    seen: set[str] = set()
    with transaction.atomic():
        _single_flight()
        existing = {inv.name: inv for inv in NodeInventory.objects.defer("labels", "annotations", "devices")}
        for node in nodes:
            meta = node.get("metadata") or {}
            name = meta["name"]
            seen.add(name)
            labels = dict(meta.get("labels") or {})
            annotations = {
                k: v
                for k, v in (meta.get("annotations") or {}).items()
                if k.startswith(REGISTRATION_PREFIX) or k in register_keys
            }
            status = node.get("status") or {}
            raw_capacity = status.get("capacity") if isinstance(status, dict) else None
            capacity = (
                {k: str(v) for k, v in (raw_capacity or {}).items() if k in capacity_names}
                if isinstance(raw_capacity, dict)
                else {}
            )
            entry = match_group(node, catalog)
            group_id = group_ids.get(entry.name) if entry else None
            uid = str(meta.get("uid") or "")
            content = (
                _digest(uid, labels, annotations, group_id, capacity)
                if capacity
                else _digest(uid, labels, annotations, group_id)
            )
            inv = existing.get(name)
            if inv is not None and inv.content_hash == content and inv.gone_at is None:
                unchanged.append(inv.pk)
                continue
            # every vendor's registration: annotations, capacity-based vendors' capacity, labels (Neuron)
            parsed = simulator.annotation_inventory(
                {
                    "metadata": {"name": name, "annotations": annotations, "labels": labels},
                    "status": {"capacity": capacity},
                }
            )
            error = parsed.error if parsed.error and parsed.error != R.NODE_UNREGISTERED else ""
            devices = devices_to_json(parsed.devices) if not parsed.error else []
            if inv is None or (inv.uid and uid and inv.uid != uid):
                # new node (or a new node object under an old name): its first registration counts anew
                inv = inv or NodeInventory(name=name)
                inv.first_seen = now
                inv.registered_at = None
                counts["created"] += 1
            else:
                counts["updated"] += 1
            inv.uid = uid
            inv.node_group_id = group_id
            inv.labels = labels
            inv.annotations = annotations
            inv.capacity = capacity
            inv.devices = devices
            inv.parse_error = error
            inv.content_hash = content
            inv.last_seen = now
            inv.gone_at = None
            inv.stale = False
            inv.sync_error = ""
            if devices and inv.registered_at is None:
                inv.registered_at = now
            (update if inv.pk else create).append(inv)
        # a cold sync of thousands of nodes: a few statements, not one INSERT per node
        copy_rows(NodeInventory, [instance_row(inv) for inv in create])
        update_rows(update, _SYNCED_FIELDS)
        changed = [inv.pk for inv in update] + _pks_of(NodeInventory, [inv.name for inv in create])
        for i in range(0, len(unchanged), _BATCH):
            NodeInventory.objects.filter(pk__in=unchanged[i : i + _BATCH]).update(
                last_seen=now, stale=False, sync_error=""
            )
        counts["unchanged"] = len(unchanged)
        vanished = [inv.pk for n, inv in existing.items() if n not in seen and inv.gone_at is None]
        if vanished:
            NodeInventory.objects.filter(pk__in=vanished).update(gone_at=now, stale=False, sync_error="")
            counts["gone"] = len(vanished)
            changed.extend(vanished)
    drift = check_inventories(changed) if changed else {"opened": 0, "resolved": 0}
    counts["findings_opened"] = drift["opened"]
    counts["findings_resolved"] = drift["resolved"]
    return counts


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
