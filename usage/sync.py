"""Write the usage store from pods: a full relist (``sync_pods``) or single watch events (``apply_pod_events``).

Both end in ``recompute``: a node's usage is HAMi's ``getNodesUsage`` over the pods stored for it and
the devices its inventory registers (``hami_sim.engine.allocations``). A node row is rewritten (and
gets a new ``version``) only when its usage changed; every pass stamps ``observed_at``. Findings
(a malformed annotation, a device the node does not register, a MIG reservation HAMi rejects) are
opened and resolved with the node they belong to. Nothing here ever raises for one bad pod.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime
from functools import lru_cache

import orjson
from django.db import connection, transaction
from django.db.models import F, QuerySet, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from hami_sim.engine.allocations import (
    ContainerDevice,
    MigAllocation,
    node_usage,
    pod_allocation,
)
from hami_sim.engine.allocations import (
    NodeUsage as EngineUsage,
)
from hami_sim.engine.allocations import (
    PodAllocation as Allocation,
)
from hami_sim.engine.model import MigPlacement
from hami_sim.engine.vendors import allocated_annotations, pod_info_annotations
from hami_sim.runtime.bulk import copy_rows, gc_paused, update_rows

from .models import NodeUsage, PodAllocation, UsageFinding, UsageState

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

_BATCH = 2000


@lru_cache(maxsize=1)
@functools.cache
def checklist() -> dict[str, str]:
    """``SupportDevices`` for every vendor hami-sim knows: CommonWord -> allocated annotation key
    (each vendor module names its own; built once, a relist asks for it once per pod)."""
    return allocated_annotations()


@functools.cache
def pod_info_keys() -> frozenset[str]:
    """The pod annotations kept for the vendor rules that read the pods on a device (MetaX sGPU's
    app class), built once."""
    return pod_info_annotations()


def allocation_of(pod: Mapping) -> Allocation | None:
    """The pod's allocation as HAMi counts it, or ``None`` when HAMi does not count the pod."""
    return pod_allocation(pod, checklist(), pod_info_keys())


def _digest(value: object) -> str:
    return hashlib.blake2b(orjson.dumps(value, option=orjson.OPT_SORT_KEYS), digest_size=16).hexdigest()


def _row_fields(alloc: Allocation) -> dict:
    devices = [[v, d.uuid, d.type, d.usedmem, d.usedcores, d.slots] for v, d in alloc.devices]
    mig = [[m.gpu_uuid, m.profile, m.placement.start, m.placement.size] for m in alloc.mig]
    fields = {
        "namespace": alloc.namespace,
        "name": alloc.name,
        "node": alloc.node,
        "devices": devices,
        "mig": mig,
        "terminating": alloc.terminating,
        "error": alloc.error,
    }
    pod_info = dict(alloc.pod_info)
    # hashed only when present, so the pods no vendor reads keep the hash they had before the field
    fields["content_hash"] = _digest({**fields, "pod_info": pod_info} if pod_info else fields)
    fields["pod_info"] = pod_info
    return fields


def _uid(alloc: Allocation) -> str:
    """Pods from a file snapshot may lack a uid: fall back to namespace/name."""
    return alloc.uid or f"{alloc.namespace}/{alloc.name}"


def _json_text(field: str) -> Cast:
    """A JSON column read as its text, for orjson: Django's ``JSONField`` decodes with the standard
    library, which was a quarter of a cold 100,000-pod relist."""
    return Cast(field, TextField())


def _stored_allocations(rows: QuerySet) -> Iterator[Allocation]:
    """The allocations of these ``PodAllocation`` rows, decoded once with orjson."""
    values = rows.annotate(
        devices_json=_json_text("devices"), mig_json=_json_text("mig"), info_json=_json_text("pod_info")
    ).values_list(
        "namespace", "name", "uid", "node", "devices_json", "mig_json", "terminating", "error", "info_json"
    )
    for namespace, name, uid, node, devices, mig, terminating, error, info in values.iterator(
        chunk_size=_BATCH
    ):
        yield Allocation(
            namespace=namespace,
            name=name,
            uid=uid,
            node=node,
            devices=tuple(
                (v, ContainerDevice(u, t, m, c, s)) for v, u, t, m, c, s in orjson.loads(devices or "[]")
            ),
            mig=tuple(MigAllocation(g, p, MigPlacement(a, b)) for g, p, a, b in orjson.loads(mig or "[]")),
            terminating=terminating,
            error=error,
            pod_info=tuple(sorted(orjson.loads(info or "{}").items())),
        )


def _bump() -> int:
    """The next generation, holding ``UsageState``'s row lock until the transaction commits, so
    writers serialise and readers never see a generation before the rows stamped with it."""
    UsageState.objects.get_or_create(pk=1)
    UsageState.objects.filter(pk=1).update(generation=F("generation") + 1)
    return UsageState.objects.values_list("generation", flat=True).get(pk=1)


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


# -- writes ----------------------------------------------------------------------------------------
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
    versions = versions or {}
    decoded = {_uid(alloc): alloc for alloc in allocations}
    wanted = {uid: _row_fields(alloc) for uid, alloc in decoded.items()}
    keep = set(keep)
    counts = {"pods": len(wanted) + len(keep), "pods_created": 0, "pods_updated": 0, "pods_deleted": 0}
    with transaction.atomic():
        _bump()
        existing = {
            uid: (pk, h, node, rv)
            for pk, uid, h, node, rv in PodAllocation.objects.values_list(
                "pk", "uid", "content_hash", "node", "resource_version"
            )
        }
        touched: set[str] = set()
        create = []
        update = []
        versions_only = []
        for uid, fields in wanted.items():
            row = existing.get(uid)
            fields["resource_version"] = versions.get(uid, "")[:40]
            if row is None:
                create.append({"uid": uid, "observed_at": now, **fields})
                touched.add(fields["node"])
            elif row[1] != fields["content_hash"]:
                update.append(PodAllocation(pk=row[0], uid=uid, observed_at=now, **fields))
                touched.update((fields["node"], row[2]))
            elif fields["resource_version"] and fields["resource_version"] != row[3]:
                versions_only.append((fields["resource_version"], row[0]))  # a status update
        gone = [(uid, row[0]) for uid, row in existing.items() if uid not in wanted and uid not in keep]
        touched.update(existing[uid][2] for uid, _pk in gone)
        copy_rows(PodAllocation, create)
        update_rows(update, [*_FIELDS, "observed_at"])
        _set_versions(versions_only)
        for i in range(0, len(gone), _BATCH):
            PodAllocation.objects.filter(pk__in=[pk for _uid, pk in gone[i : i + _BATCH]]).delete()
        counts.update(pods_created=len(create), pods_updated=len(update), pods_deleted=len(gone))
        names = None if everything else touched | _liveness_changed()
        counts.update(recompute(names, now, known=decoded))
        confirm(now, relisted=True, source=source)
    return counts


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
        for i in range(0, len(pairs), _BATCH):
            batch = pairs[i : i + _BATCH]
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
        _bump()
        for kind, pod in events:
            touched.update(_apply_one(kind, pod, now))
            applied += 1
        counts = recompute(touched, now) if touched else {}
    counts["events"] = applied
    return counts


def _apply_one(kind: str, pod: Mapping, now: datetime) -> set[str]:
    meta = pod.get("metadata") or {}
    uid = str(meta.get("uid") or f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}")
    before = PodAllocation.objects.filter(uid=uid).first()
    alloc = None if kind == "DELETED" else allocation_of(pod)
    nodes = {before.node} if before is not None else set()
    if alloc is None:
        if before is not None:
            before.delete()
        return nodes
    fields = _row_fields(alloc)
    nodes.add(alloc.node)
    rv = str(meta.get("resourceVersion") or "")[:40]
    if before is not None and before.content_hash == fields["content_hash"]:
        if before.resource_version != rv:  # so the next relist need not decode it again
            PodAllocation.objects.filter(pk=before.pk).update(resource_version=rv)
        return set()  # nothing HAMi counts changed (a status update, a label)
    PodAllocation.objects.update_or_create(
        uid=uid, defaults={**fields, "resource_version": rv, "observed_at": now}
    )
    return nodes


@gc_paused()
def recompute_all(now: datetime | None = None) -> dict[str, int]:
    """Rebuild every node's usage (after the node sync changed inventories) in its own transaction."""
    now = now or timezone.now()
    with transaction.atomic():
        _bump()
        return recompute(None, now)


def _registered(names: set[str] | None) -> dict[str, dict[str, str]]:
    """Live nodes' registered devices: node name -> {uuid: mode} (from the cluster inventory)."""
    from profiles.models import NodeInventory

    rows = NodeInventory.objects.filter(gone_at__isnull=True)
    if names is not None:
        rows = rows.filter(name__in=names)
    out: dict[str, dict[str, str]] = {}
    values = rows.annotate(devices_json=_json_text("devices")).values_list("name", "devices_json")
    for name, text in values.iterator(chunk_size=_BATCH):
        devices = orjson.loads(text or "[]")
        out[name] = {str(d.get("id")): str(d.get("mode") or "") for d in devices or [] if isinstance(d, dict)}
    return out


def _usage_json(usage: EngineUsage) -> dict:
    out = {}
    for uuid, d in usage.devices.items():
        entry = {
            "used": d.used,
            "usedmem": d.usedmem,
            "usedcores": d.usedcores,
            "mig": [[p, pl.start, pl.size] for p, pl in d.mig],
            "unhealthy": d.unhealthy,
            "pods": d.pods,
        }
        if d.pod_infos:  # only where a pod carries what a vendor rule reads (MetaX sGPU app class)
            entry["pod_infos"] = d.pod_infos
        out[uuid] = entry
    return out


def _pods_by_node(names: set[str] | None, known: Mapping[str, Allocation]) -> dict[str, list[Allocation]]:
    """The stored allocations of ``names`` (``None``: all) per node. ``known``: allocations this
    relist just decoded and wrote (by stored uid), taken as they are instead of read back."""
    rows = PodAllocation.objects.all() if names is None else PodAllocation.objects.filter(node__in=names)
    pods: dict[str, list[Allocation]] = {}
    if not known:
        for alloc in _stored_allocations(rows):
            pods.setdefault(alloc.node, []).append(alloc)
        return pods
    missing: list[str] = []
    for uid, node in rows.values_list("uid", "node").iterator(chunk_size=_BATCH):
        alloc = known.get(uid)
        if alloc is None:
            missing.append(uid)  # stored earlier, unchanged in this relist
        else:
            pods.setdefault(node, []).append(alloc if alloc.uid == uid else replace(alloc, uid=uid))
    for i in range(0, len(missing), _BATCH):
        for alloc in _stored_allocations(PodAllocation.objects.filter(uid__in=missing[i : i + _BATCH])):
            pods.setdefault(alloc.node, []).append(alloc)
    return pods


def recompute(
    names: set[str] | None, now: datetime, known: Mapping[str, Allocation] | None = None
) -> dict[str, int]:
    """Rebuild node usage (and findings) for ``names`` (``None``: every node) inside the caller's
    transaction, which has bumped the generation. Nodes no longer live are marked gone."""
    generation = UsageState.objects.values_list("generation", flat=True).get(pk=1)
    registered = _registered(names)
    pods = _pods_by_node(names, known or {})
    rows = NodeUsage.objects.defer("devices")  # every changed row gets new devices below
    existing = {r.name: r for r in (rows if names is None else rows.filter(name__in=names))}
    create, update, seen, findings = [], [], [], []
    for name, devices in registered.items():
        usage = node_usage(devices, pods.get(name, []))
        findings.extend(_findings_for(name, usage, pods.get(name, [])))
        data = _usage_json(usage)
        digest = _digest(data)
        row = existing.get(name)
        if row is None:
            create.append(
                {
                    "name": name,
                    "devices": data,
                    "pod_count": len(pods.get(name, [])),
                    "observed_at": now,
                    "changed_at": now,
                    "version": generation,
                    "content_hash": digest,
                    "gone": False,
                }
            )
        elif row.content_hash != digest or row.gone:
            row.devices, row.pod_count, row.content_hash = data, len(pods.get(name, [])), digest
            row.changed_at, row.version, row.gone, row.observed_at = now, generation, False, now
            update.append(row)
        else:
            seen.append(row.pk)
    copy_rows(NodeUsage, create)
    update_rows(
        update, ["devices", "pod_count", "content_hash", "changed_at", "version", "gone", "observed_at"]
    )
    for i in range(0, len(seen), _BATCH):
        NodeUsage.objects.filter(pk__in=seen[i : i + _BATCH]).update(observed_at=now)
    vanished = [r.pk for n, r in existing.items() if n not in registered and not r.gone]
    if vanished:
        NodeUsage.objects.filter(pk__in=vanished).update(gone=True, version=generation, changed_at=now)
    opened, resolved = _sync_findings(names, findings, now)
    return {
        "nodes_usage_changed": len(create) + len(update),
        "nodes_usage_gone": len(vanished),
        "findings_opened": opened,
        "findings_resolved": resolved,
    }


def _findings_for(node: str, usage: EngineUsage, pods: list[Allocation]) -> list[tuple]:
    """(pod_uid, kind, device, namespace, name, node, detail) for everything an operator must see."""
    by_key = {p.key: p for p in pods}
    out = []
    for pod in pods:
        if pod.error:
            out.append((pod.uid, UsageFinding.Kind.MALFORMED, "", pod.namespace, pod.name, node, pod.error))
    for key, uuid in usage.unknown:
        pod = by_key[key]
        detail = f"{key} holds device {uuid}, which node {node} does not register"
        out.append((pod.uid, UsageFinding.Kind.UNKNOWN_DEVICE, uuid, pod.namespace, pod.name, node, detail))
    for key, detail in usage.problems:
        pod = by_key[key]
        out.append((pod.uid, UsageFinding.Kind.MIG, detail[:200], pod.namespace, pod.name, node, detail))
    return out


def _sync_findings(names: set[str] | None, wanted: list[tuple], now: datetime) -> tuple[int, int]:
    open_rows = UsageFinding.objects.filter(resolved_at__isnull=True)
    if names is not None:
        open_rows = open_rows.filter(node__in=names)
    current = {(f.pod_uid, f.kind, f.device): f.pk for f in open_rows.only("pod_uid", "kind", "device")}
    want = {(w[0], str(w[1]), w[2]): w for w in wanted}
    new = [
        UsageFinding(
            pod_uid=uid,
            kind=kind,
            device=device,
            namespace=w[3],
            name=w[4],
            node=w[5],
            detail=w[6],
            opened_at=now,
        )
        for (uid, kind, device), w in want.items()
        if (uid, kind, device) not in current
    ]
    UsageFinding.objects.bulk_create(new, batch_size=_BATCH)
    stale = [pk for key, pk in current.items() if key not in want]
    if stale:
        UsageFinding.objects.filter(pk__in=stale).update(resolved_at=now)
    return len(new), len(stale)
