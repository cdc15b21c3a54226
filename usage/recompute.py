"""Node usage rebuilt from the stored pods: HAMi's ``getNodesUsage`` per node, and its findings.

A node's usage is the sum of the stored allocations on it over the devices its inventory registers
(``hami_sim.engine.allocations.node_usage``). A row is rewritten (with a new ``version``) only when
its usage changed, so pages and the extender's live view re-read only what moved; findings (a
malformed annotation, a device the node does not register, a MIG reservation HAMi rejects) open
and resolve with the node they belong to. Every writer first takes the next generation
(``next_generation``), which serialises writers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

import orjson
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from hami_sim.engine.allocations import NodeUsage as EngineUsage
from hami_sim.engine.allocations import PodAllocation as Allocation
from hami_sim.engine.allocations import node_usage
from hami_sim.engine.hami_releases import rules_for
from hami_sim.project.conf import configured_hami_release
from hami_sim.runtime.bulk import copy_rows, gc_paused, update_rows
from hami_sim.runtime.progress import counted

from .models import NodeUsage, PodAllocation, UsageFinding, UsageState
from .podrows import BATCH, digest, json_text, stored_allocations

__all__ = ["next_generation", "recompute", "recompute_all"]


def next_generation() -> int:
    """The next generation, holding ``UsageState``'s row lock until the transaction commits, so
    writers serialise and readers never see a generation before the rows stamped with it."""
    UsageState.objects.get_or_create(pk=1)
    UsageState.objects.filter(pk=1).update(generation=F("generation") + 1)
    return UsageState.objects.values_list("generation", flat=True).get(pk=1)


@gc_paused()
def recompute_all(now: datetime | None = None) -> dict[str, int]:
    """Rebuild every node's usage (after the node sync changed inventories) in its own transaction."""
    now = now or timezone.now()
    with transaction.atomic():
        next_generation()
        return recompute(None, now)


def _registered(names: set[str] | None) -> dict[str, dict[str, str]]:
    """Live nodes' registered devices: node name -> {uuid: mode} (from the cluster inventory)."""
    from profiles.models import NodeInventory

    rows = NodeInventory.objects.filter(gone_at__isnull=True)
    if names is not None:
        rows = rows.filter(name__in=names)
    out: dict[str, dict[str, str]] = {}
    values = rows.annotate(devices_json=json_text("devices")).values_list("name", "devices_json")
    for name, text in values.iterator(chunk_size=BATCH):
        devices = orjson.loads(text or "[]")
        out[name] = {str(d.get("id")): str(d.get("mode") or "") for d in devices or [] if isinstance(d, dict)}
    return out


def _usage_json(usage: EngineUsage) -> dict:
    """The usage of a node per device, as its ``NodeUsage.devices`` JSON."""
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
        for alloc in stored_allocations(rows):
            pods.setdefault(alloc.node, []).append(alloc)
        return pods
    missing: list[str] = []
    for uid, node in rows.values_list("uid", "node").iterator(chunk_size=BATCH):
        alloc = known.get(uid)
        if alloc is None:
            missing.append(uid)  # stored earlier, unchanged in this relist
        else:
            pods.setdefault(node, []).append(alloc if alloc.uid == uid else replace(alloc, uid=uid))
    for i in range(0, len(missing), BATCH):
        for alloc in stored_allocations(PodAllocation.objects.filter(uid__in=missing[i : i + BATCH])):
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
    plan = _UsagePlan(now, generation)
    findings = []
    release = rules_for(configured_hami_release())  # how the cluster's HAMi reads MIG allocations
    for name, devices in counted(registered.items(), "usage", total=len(registered)):
        node_pods = pods.get(name, [])
        usage = node_usage(devices, node_pods, release)
        findings.extend(_findings_for(name, usage, node_pods))
        plan.add(name, existing.get(name), _usage_json(usage), len(node_pods))
    plan.write()
    vanished = [r.pk for n, r in existing.items() if n not in registered and not r.gone]
    if vanished:
        NodeUsage.objects.filter(pk__in=vanished).update(gone=True, version=generation, changed_at=now)
    opened, resolved = _sync_findings(names, findings, now)
    return {
        "nodes_usage_changed": len(plan.create) + len(plan.update),
        "nodes_usage_gone": len(vanished),
        "findings_opened": opened,
        "findings_resolved": resolved,
    }


@dataclass(slots=True)
class _UsagePlan:
    """The ``NodeUsage`` writes of one recompute: new rows (COPY), changed rows (a new ``version``),
    and unchanged ones (only ``observed_at``), so readers polling by version see only real changes."""

    now: datetime
    generation: int
    create: list[dict] = field(default_factory=list)
    update: list[NodeUsage] = field(default_factory=list)
    seen: list[int] = field(default_factory=list)

    def add(self, name: str, row: NodeUsage | None, data: dict, pod_count: int) -> None:
        content = digest(data)
        now, generation = self.now, self.generation
        if row is None:
            self.create.append(
                {
                    "name": name,
                    "devices": data,
                    "pod_count": pod_count,
                    "observed_at": now,
                    "changed_at": now,
                    "version": generation,
                    "content_hash": content,
                    "gone": False,
                }
            )
        elif row.content_hash != content or row.gone:
            row.devices, row.pod_count, row.content_hash = data, pod_count, content
            row.changed_at, row.version, row.gone, row.observed_at = now, generation, False, now
            self.update.append(row)
        else:
            self.seen.append(row.pk)

    def write(self) -> None:
        copy_rows(NodeUsage, self.create)
        update_rows(
            self.update,
            ["devices", "pod_count", "content_hash", "changed_at", "version", "gone", "observed_at"],
        )
        for i in range(0, len(self.seen), BATCH):
            NodeUsage.objects.filter(pk__in=self.seen[i : i + BATCH]).update(observed_at=self.now)


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
        out.append(
            (pod.uid, UsageFinding.Kind.UNKNOWN_DEVICE, uuid[:200], pod.namespace, pod.name, node, detail)
        )
    for key, detail in usage.problems:
        pod = by_key[key]
        out.append((pod.uid, UsageFinding.Kind.MIG, detail[:200], pod.namespace, pod.name, node, detail))
    return out


def _sync_findings(names: set[str] | None, wanted: list[tuple], now: datetime) -> tuple[int, int]:
    """Open the wanted findings not open yet, resolve the open ones no longer wanted (of ``names``)."""
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
    UsageFinding.objects.bulk_create(new, batch_size=BATCH)
    stale = [pk for key, pk in current.items() if key not in want]
    if stale:
        UsageFinding.objects.filter(pk__in=stale).update(resolved_at=now)
    return len(new), len(stale)
