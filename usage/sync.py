"""Write the usage store from pods: a full relist (``sync_pods``) or single watch events (``apply_pod_events``).

Both end in ``recompute``: a node's usage is HAMi's ``getNodesUsage`` over the pods stored for it and
the devices its inventory registers (``hami_sim.engine.allocations``). A node row is rewritten (and
gets a new ``version``) only when its usage changed; every pass stamps ``observed_at``. Findings
(a malformed annotation, a device the node does not register, a MIG reservation HAMi rejects) are
opened and resolved with the node they belong to. Nothing here ever raises for one bad pod.

A pod's row is in ``podrows`` and the usage rebuild in ``recompute`` (both re-exported here).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone

from hami_sim.engine.allocations import PodAllocation as Allocation
from hami_sim.runtime.bulk import copy_rows, update_rows

from .models import NodeUsage, PodAllocation, UsageState
from .podrows import BATCH, RepairedFields, allocation_of, checklist, row_fields, uid_of
from .recompute import next_generation, recompute, recompute_all

__all__ = [
    "checklist",
    "allocation_of",
    "sync_pods",
    "sync_allocations",
    "stored_versions",
    "apply_pod_events",
    "recompute",
    "recompute_all",
    "confirm",
    "record_error",
]


def confirm(now: datetime | None = None, *, relisted: bool = False, source: str | None = None) -> None:
    """The source just confirmed every node's usage (a relist, a watch event or bookmark)."""
    now = now or timezone.now()
    fields: dict = {"confirmed_at": now, "error": ""}
    if relisted:
        fields["relisted_at"] = now
    if source is not None:
        fields["source"] = source[:300]
    if not UsageState.objects.filter(pk=1).update(**fields):
        UsageState.objects.get_or_create(pk=1, defaults=fields)


def record_error(error: str) -> None:
    """A pod read failed: usage keeps its last values and ages (``confirmed_at`` is left alone)."""
    if not UsageState.objects.filter(pk=1).update(error=error[:2000]):
        UsageState.objects.get_or_create(pk=1, defaults={"error": error[:2000]})


def sync_pods(
    pods: Iterable[Mapping], now: datetime | None = None, source: str | None = None
) -> dict[str, int]:
    """Replace the stored allocations with exactly the counted pods of a complete list of Pods."""
    allocations = (allocation_of(pod) for pod in pods)
    return sync_allocations((a for a in allocations if a is not None), now, source)


def stored_versions() -> dict[str, str]:
    """uid -> resourceVersion of every stored allocation (what a relist may skip decoding)."""
    return dict(PodAllocation.objects.exclude(resource_version="").values_list("uid", "resource_version"))


def sync_allocations(
    allocations: Iterable[Allocation],
    now: datetime | None = None,
    source: str | None = None,
    *,
    versions: Mapping[str, str] | None = None,
    keep: Iterable[str] = (),
    everything: bool = True,
) -> dict[str, int]:
    """Replace the stored allocations with exactly these (a complete relist's counted pods).

    ``keep``: uids of pods the relist saw with their stored resourceVersion (unchanged, not decoded
    again); ``versions``: the resourceVersion of each decoded pod. ``everything``: recompute every
    node (registrations may have changed); otherwise only the nodes whose pods changed and nodes that
    gained or lost their live status.
    """
    now = now or timezone.now()
    decoded = {uid_of(alloc): alloc for alloc in allocations}
    wanted = {uid: row_fields(alloc) for uid, alloc in decoded.items()}
    keep = set(keep)
    counts = {"pods": len(wanted) + len(keep)}
    with transaction.atomic():
        next_generation()
        existing = {
            uid: (pk, h, node, rv)
            for pk, uid, h, node, rv in PodAllocation.objects.values_list(
                "pk", "uid", "content_hash", "node", "resource_version"
            )
        }
        plan = _plan(wanted, existing, versions or {}, now)
        gone = [(uid, row[0]) for uid, row in existing.items() if uid not in wanted and uid not in keep]
        plan.touched.update(existing[uid][2] for uid, _pk in gone)
        copy_rows(PodAllocation, plan.create)
        update_rows(plan.update, [*_FIELDS, "observed_at"])
        _set_versions(plan.versions_only)
        for i in range(0, len(gone), BATCH):
            PodAllocation.objects.filter(pk__in=[pk for _uid, pk in gone[i : i + BATCH]]).delete()
        counts.update(pods_created=len(plan.create), pods_updated=len(plan.update), pods_deleted=len(gone))
        names = None if everything else plan.touched | _liveness_changed()
        counts.update(recompute(names, now, known=_as_stored(decoded, wanted)))
        confirm(now, relisted=True, source=source)
    return counts


def _as_stored(decoded: dict[str, Allocation], wanted: dict[str, dict]) -> dict[str, Allocation]:
    """The decoded allocations that are stored as decoded: a pod stored repaired (a NUL in an
    annotation) is read back from its row by the recompute instead."""
    return {uid: alloc for uid, alloc in decoded.items() if not isinstance(wanted[uid], RepairedFields)}


@dataclass(slots=True)
class _RelistPlan:
    """A relist's writes: new rows, changed rows, rows whose only news is a resourceVersion, and the
    nodes whose usage may have moved."""

    create: list[dict] = field(default_factory=list)
    update: list[PodAllocation] = field(default_factory=list)
    versions_only: list[tuple[str, int]] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)


def _plan(
    wanted: dict[str, dict], existing: dict[str, tuple], versions: Mapping[str, str], now: datetime
) -> _RelistPlan:
    """Compare each decoded pod's row fields with its stored row (by content hash)."""
    plan = _RelistPlan()
    for uid, fields in wanted.items():
        row = existing.get(uid)
        fields["resource_version"] = versions.get(uid, "")[:40]
        if row is None:
            plan.create.append({"uid": uid, "observed_at": now, **fields})
            plan.touched.add(fields["node"])
        elif row[1] != fields["content_hash"]:
            plan.update.append(PodAllocation(pk=row[0], uid=uid, observed_at=now, **fields))
            plan.touched.update((fields["node"], row[2]))
        elif fields["resource_version"] and fields["resource_version"] != row[3]:
            plan.versions_only.append((fields["resource_version"], row[0]))  # a status update
    return plan


def _set_versions(pairs: list[tuple[str, int]]) -> None:
    """Store new resourceVersions (pods whose allocation did not change), one statement per batch."""
    if not pairs:
        return
    if connection.vendor != "postgresql":
        for rv, pk in pairs:
            PodAllocation.objects.filter(pk=pk).update(resource_version=rv)
        return
    table = connection.ops.quote_name(PodAllocation._meta.db_table)
    with connection.cursor() as cursor:
        for i in range(0, len(pairs), BATCH):
            batch = pairs[i : i + BATCH]
            values = ", ".join(["(%s, %s::bigint)"] * len(batch))
            cursor.execute(
                f"UPDATE {table} AS t SET resource_version = v.rv FROM (VALUES {values}) AS v(rv, id) "
                "WHERE t.id = v.id",
                [x for pair in batch for x in pair],
            )


def _liveness_changed() -> set[str]:
    """Live nodes without a usage row, and usage rows of nodes that are no longer live."""
    from profiles.models import NodeInventory

    live = set(NodeInventory.objects.filter(gone_at__isnull=True).values_list("name", flat=True))
    rows = set(NodeUsage.objects.filter(gone=False).values_list("name", flat=True))
    return (live - rows) | (rows - live)


_FIELDS = [
    "namespace",
    "name",
    "node",
    "devices",
    "mig",
    "terminating",
    "error",
    "pod_info",
    "content_hash",
    "resource_version",
]


def apply_pod_events(events: Iterable[tuple[str, Mapping]], now: datetime | None = None) -> dict[str, int]:
    """Apply watch events (``ADDED``/``MODIFIED``/``DELETED``, raw Pod) and recompute the nodes they touch."""
    now = now or timezone.now()
    touched: set[str] = set()
    applied = 0
    with transaction.atomic():
        next_generation()
        for kind, pod in events:
            touched.update(_apply_one(kind, pod, now))
            applied += 1
        counts = recompute(touched, now) if touched else {}
    counts["events"] = applied
    return counts


def _apply_one(kind: str, pod: Mapping, now: datetime) -> set[str]:
    """One watch event written; returns the nodes whose usage it may have moved."""
    meta = pod.get("metadata") or {}
    uid = str(meta.get("uid") or f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}")
    before = PodAllocation.objects.filter(uid=uid).first()
    alloc = None if kind == "DELETED" else allocation_of(pod)
    nodes = {before.node} if before is not None else set()
    if alloc is None:
        if before is not None:
            before.delete()
        return nodes
    fields = row_fields(alloc)
    nodes.add(fields["node"])  # (as stored: repaired when it held a NUL)
    rv = str(meta.get("resourceVersion") or "")[:40]
    if before is not None and before.content_hash == fields["content_hash"]:
        if before.resource_version != rv:  # so the next relist need not decode it again
            PodAllocation.objects.filter(pk=before.pk).update(resource_version=rv)
        return set()  # nothing HAMi counts changed (a status update, a label)
    PodAllocation.objects.update_or_create(
        uid=uid, defaults={**fields, "resource_version": rv, "observed_at": now}
    )
    return nodes
