"""Pending HAMi pods and what CA's simulation reads of live nodes, kept by the cluster sync.

CA's FilterOutSchedulable judges the pending pods against the live nodes before any scale-up
(``hami_sim.engine.blindspot``). For that the sync keeps, beside the allocations:

- every pending pod (no ``spec.nodeName``, not terminating or finished) that asks for a HAMi resource,
  slimmed to what the filters read, with HAMi's last ``FailedScheduling`` message from its events;
- per live node, its labels, taints, ``unschedulable`` and ``status.allocatable`` (``NodeFacts.node``)
  and what the pods bound to it request as kube-scheduler sums them (``NodeFacts.requested``).

A relist replaces both; the watcher applies pod events as they come (``BoundIndex`` remembers each
bound pod's request so an event moves a node's sum without a relist). Nothing here raises for one
bad pod: a pod whose quantities do not parse is left out of the sums and of the pending list.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from hami_sim.engine.quantity import QuantityError
from hami_sim.engine.requests import PodError
from hami_sim.engine.scheduler_filters import Resources, pod_demand
from hami_sim.project.conf import conf
from hami_sim.runtime.bulk import copy_rows
from hami_sim.runtime.rejects import bad_identity, note, object_name
from hami_sim.runtime.storable import clean_json, clean_text, encode_checked, text_needs_cleaning

from .models import NodeFacts, PendingPod

__all__ = [
    "asks_hami",
    "pending_entry",
    "bound_request",
    "BoundIndex",
    "node_facts",
    "sync_pending",
    "sync_node_facts",
    "write_requested",
    "apply_pending_events",
    "failed_scheduling",
    "apply_reasons",
]

_BATCH = 2000
_SPEC_KEYS = (
    "containers",
    "initContainers",
    "overhead",
    "nodeSelector",
    "affinity",
    "tolerations",
    "priority",
    "priorityClassName",
    "schedulerName",
    "topologySpreadConstraints",
    "resourceClaims",
)
_TERMINAL = ("Succeeded", "Failed")


def _managed() -> frozenset[str]:
    from hami_sim.runtime.simulator import get_simulator

    return get_simulator().managed_resources()


def asks_hami(pod: Mapping, managed: frozenset[str]) -> bool:
    """Whether a container or init container requests or limits a HAMi resource."""
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or ():
            resources = (container or {}).get("resources") or {}
            for part in ("limits", "requests"):
                values = resources.get(part)
                if isinstance(values, Mapping) and not managed.isdisjoint(values):
                    return True
    return False


def _uid(meta: Mapping) -> str:
    return str(meta.get("uid") or f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}")


def _unschedulable(pod: Mapping) -> bool:
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if (
            isinstance(cond, Mapping)
            and cond.get("type") == "PodScheduled"
            and cond.get("status") == "False"
            and cond.get("reason") == "Unschedulable"
        ):
            return True
    return False


def pending_entry(pod: Mapping, managed: frozenset[str]) -> dict | None:
    """The stored fields of a pending HAMi pod, or None when the pod is not one."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    if spec.get("nodeName") or meta.get("deletionTimestamp") or status.get("phase") in _TERMINAL:
        return None
    if not asks_hami(pod, managed) and not (spec.get("resourceClaims") and conf().dra_sync):
        return None  # a pod with ResourceClaims is a device pod too once DRA objects are synced
    slim = _slim(meta, spec)
    created = meta.get("creationTimestamp")
    fields = {
        "namespace": str(meta.get("namespace") or "default"),
        "name": str(meta.get("name") or ""),
        "pod": slim,
        "created_at": _created(created),
        "unschedulable": _unschedulable(pod),
    }
    encoded, dirty = encode_checked((slim, fields["unschedulable"]))
    fields["content_hash"] = hashlib.blake2b(encoded, digest_size=16).hexdigest()
    if dirty:  # a NUL in an annotation or label: stored repaired (PostgreSQL's jsonb refuses it)
        note("pod", f"{fields['namespace']}/{fields['name']}", "unstorable-text", "sanitised", _REPAIRED)
        fields["pod"] = clean_json(slim)
        fields["name"] = clean_text(fields["name"], 253)
    return fields


_REPAIRED = "NUL characters or lone surrogates replaced by U+FFFD"


def _created(value: object):
    """``creationTimestamp`` as a datetime; None when absent or not a time (never an error)."""
    if not isinstance(value, str):
        return None
    try:
        return parse_datetime(value)
    except ValueError:
        return None


def _slim(meta: Mapping, spec: Mapping) -> dict:
    """What a stored pending pod keeps: its identity and what placing it reads (no status)."""
    keep = ("name", "namespace", "uid", "labels", "annotations", "ownerReferences")
    return {
        "metadata": {k: meta[k] for k in keep if k in meta},
        "spec": {k: spec[k] for k in _SPEC_KEYS if k in spec},
    }


def bound_request(pod: Mapping) -> tuple[str, Resources] | None:
    """``(node, request)`` of a pod kube-scheduler counts on its node (bound, not finished), as
    ``NodeResourcesFit`` sums it (extended resources included); None otherwise."""
    spec = pod.get("spec") or {}
    node = spec.get("nodeName")
    if not node or (pod.get("status") or {}).get("phase") in _TERMINAL:
        return None
    try:
        return str(node), pod_demand(pod)
    except (PodError, QuantityError):
        return None


def _add(total: dict, demand: Resources, sign: int = 1) -> None:
    total["cpu"] = total.get("cpu", 0) + sign * demand.cpu
    total["memory"] = total.get("memory", 0) + sign * demand.memory
    total["ephemeral"] = total.get("ephemeral", 0) + sign * demand.ephemeral
    total["pods"] = total.get("pods", 0) + sign * demand.pods
    if demand.scalars:
        scalars = total.setdefault("scalars", {})
        for name, amount in demand.scalars.items():
            scalars[name] = scalars.get(name, 0) + sign * amount


@dataclass
class BoundIndex:
    """Each bound pod's node and request (uid -> ...), and the per-node sums built from them."""

    pods: dict[str, tuple[str, Resources]] = field(default_factory=dict)
    sums: dict[str, dict] = field(default_factory=dict)

    def add(self, uid: str, node: str, demand: Resources) -> None:
        self.pods[uid] = (node, demand)
        _add(self.sums.setdefault(node, {}), demand)

    def remove(self, uid: str) -> str | None:
        entry = self.pods.pop(uid, None)
        if entry is None:
            return None
        _add(self.sums.setdefault(entry[0], {}), entry[1], -1)
        return entry[0]

    def update(self, pod: Mapping, deleted: bool = False) -> set[str]:
        """Apply one pod event; the nodes whose sums changed."""
        uid = _uid(pod.get("metadata") or {})
        before = self.pods.get(uid)
        after = None if deleted else bound_request(pod)
        if before is not None and after is not None and before[0] == after[0] and before[1] == after[1]:
            return set()
        touched = {n for n in (self.remove(uid),) if n}
        if after is not None:
            self.add(uid, after[0], after[1])
            touched.add(after[0])
        return touched


def node_facts(node: Mapping) -> dict:
    """What CA's simulation reads of a node besides its devices."""
    meta = node.get("metadata") or {}
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    slim_spec = {k: spec[k] for k in ("taints", "unschedulable") if k in spec}
    return {
        "metadata": {"name": meta.get("name"), "labels": meta.get("labels") or {}},
        "spec": slim_spec,
        "status": {k: status[k] for k in ("allocatable", "capacity") if isinstance(status.get(k), Mapping)},
    }


# -- writes ------------------------------------------------------------------------------------------------


def sync_pending(pods: Iterable[tuple[str, dict]], now: datetime | None = None) -> dict[str, int]:
    """Replace the stored pending pods with exactly these ``(uid, fields)`` (a complete relist);
    a pod's FailedScheduling message is kept while the pod stays."""
    now = now or timezone.now()
    wanted = dict(pods)
    with transaction.atomic():
        existing = dict(PendingPod.objects.values_list("uid", "content_hash"))
        create = [
            {"uid": u, "observed_at": now, "reasons": "", **f} for u, f in wanted.items() if u not in existing
        ]
        changed = [u for u, f in wanted.items() if u in existing and existing[u] != f["content_hash"]]
        for uid in changed:
            PendingPod.objects.filter(uid=uid).update(observed_at=now, **wanted[uid])
        gone = [u for u in existing if u not in wanted]
        for i in range(0, len(gone), _BATCH):
            PendingPod.objects.filter(uid__in=gone[i : i + _BATCH]).delete()
        copy_rows(PendingPod, create)
        PendingPod.objects.update(observed_at=now)
    return {"pending": len(wanted), "pending_created": len(create), "pending_deleted": len(gone)}


def sync_node_facts(nodes: Iterable[Mapping], now: datetime | None = None) -> int:
    """Replace the stored node facts with these nodes' (a complete node list); sums are kept."""
    now = now or timezone.now()
    facts = {}
    for node in nodes:
        meta = node.get("metadata") if isinstance(node, Mapping) else None
        problem = bad_identity(meta)
        if problem is not None:
            note("node", object_name(meta), "bad-identity", "skipped", problem)
            continue
        assert isinstance(meta, Mapping)
        fact = node_facts(node)
        if encode_checked(fact)[1]:  # a NUL in a label or taint: stored repaired
            note("node", meta["name"], "unstorable-text", "sanitised", _REPAIRED)
            fact = clean_json(fact)
        facts[meta["name"]] = fact
    with transaction.atomic():
        existing = dict(NodeFacts.objects.values_list("name", "node"))
        create = [
            {"name": n, "node": f, "requested": {}, "observed_at": now}
            for n, f in facts.items()
            if n not in existing
        ]
        for name, fact in facts.items():
            if name in existing and existing[name] != fact:
                NodeFacts.objects.filter(name=name).update(node=fact)
        gone = [n for n in existing if n not in facts]
        NodeFacts.objects.filter(name__in=gone).delete()
        copy_rows(NodeFacts, create)
        NodeFacts.objects.update(observed_at=now)
    return len(facts)


def write_requested(sums: Mapping[str, dict], names: Iterable[str] | None = None) -> None:
    """Store the per-node sums (``names``: only these nodes; None: every node, zero where absent)."""
    rows = NodeFacts.objects.all() if names is None else NodeFacts.objects.filter(name__in=list(names))
    for name, requested in rows.values_list("name", "requested"):
        want = sums.get(name) or {}
        if requested != want:
            NodeFacts.objects.filter(name=name).update(requested=want)


def apply_pending_events(events: Iterable[tuple[str, Mapping]], now: datetime | None = None) -> int:
    """Watch events: upsert a pod that is (still) pending, drop one that is not. Returns changes."""
    now = now or timezone.now()
    managed = _managed()
    changes = 0
    for kind, pod in events:
        uid = _uid(pod.get("metadata") or {})
        fields = None if kind == "DELETED" else pending_entry(pod, managed)
        if fields is None:
            changes += PendingPod.objects.filter(uid=uid).delete()[0]
            continue
        updated = PendingPod.objects.filter(uid=uid).update(observed_at=now, **fields)
        if not updated:
            PendingPod.objects.create(uid=uid, observed_at=now, reasons="", **fields)
        changes += 1
    return changes


def failed_scheduling(events: Iterable[Mapping]) -> dict[str, str]:
    """Pod uid -> the message of its newest ``FailedScheduling`` event."""
    newest: dict[str, tuple[str, str]] = {}
    for event in events:
        uid = _failed_pod(event)
        if uid is None:
            continue
        when = str(
            event.get("lastTimestamp")
            or event.get("eventTime")
            or (event.get("metadata") or {}).get("creationTimestamp")
            or ""
        )
        if uid not in newest or when >= newest[uid][0]:
            newest[uid] = (when, _message(event))
    return {uid: message for uid, (_when, message) in newest.items()}


def _message(event: Mapping) -> str:
    """An event's message as it can be stored (a NUL replaced, noted)."""
    message = str(event.get("message") or "")
    if text_needs_cleaning(message):
        note("event", object_name(event.get("metadata")), "unstorable-text", "sanitised", _REPAIRED)
        message = clean_text(message)
    return message


def _failed_pod(event: object) -> str | None:
    """The uid (else namespace/name) of the pod a ``FailedScheduling`` event is about; None for
    any other event."""
    if not isinstance(event, Mapping) or event.get("reason") != "FailedScheduling":
        return None
    obj = event.get("involvedObject") or {}
    if obj.get("kind") not in (None, "Pod"):
        return None
    return str(obj.get("uid") or f"{obj.get('namespace') or 'default'}/{obj.get('name') or ''}")


def apply_reasons(reasons: Mapping[str, str]) -> int:
    """Store each pending pod's FailedScheduling message (empty for pods without one)."""
    changed = 0
    for uid, current in PendingPod.objects.values_list("uid", "reasons"):
        want = reasons.get(uid, "")[:4000]
        if want != current:
            changed += PendingPod.objects.filter(uid=uid).update(reasons=want)
    return changed
