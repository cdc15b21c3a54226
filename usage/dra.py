"""The cluster's DRA objects (``resource.k8s.io/v1``), kept in step with the API, and read back as
the engine's values.

With ``DRA_SYNC`` on, the cluster sync lists ResourceSlices, ResourceClaims, ResourceClaimTemplates
and DeviceClasses with the ``kubernetes`` client (``sync_dra``: each kind replaced whole, or left
as it was when its list fails), and the watcher applies their watch events (``apply_dra_events``).
``dra_state`` reads them back parsed: an object the engine cannot use (a malformed one, or a claim
feature hami-sim does not simulate) is left out and named in ``DraState.skipped``, never fatal.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.db import transaction

from hami_sim.engine.dra.allocator import InUse, in_use_by
from hami_sim.engine.dra.objects import (
    Claim,
    DeviceClass,
    DraError,
    ResourceSlice,
    parse_claim,
    parse_class,
    parse_slice,
)
from hami_sim.project.conf import conf
from hami_sim.runtime.rejects import note
from hami_sim.runtime.storable import clean_json, clean_text, json_needs_cleaning

from .kube import DRA_RESOURCES, list_resource
from .models import DraObject

__all__ = ["DRA_KINDS", "DraState", "relist_dra", "sync_dra", "apply_dra_events", "dra_state", "kind_of"]

log = logging.getLogger("hami_sim.usage")

#: resource -> kind, in the order a sync reads them
DRA_KINDS = {resource: kind for resource, (kind, _method) in DRA_RESOURCES.items()}


def kind_of(resource: str) -> str:
    return DRA_KINDS[resource]


def _stored(obj: Mapping, kind: str) -> tuple[str, str, str, dict]:
    """(namespace, name, resourceVersion, body) of one object, as it is stored: managedFields
    dropped (they are most of an object's bytes), and text PostgreSQL refuses (a NUL) repaired and
    noted, as for every object read from the cluster (``hami_sim.runtime.rejects``)."""
    meta = dict(obj.get("metadata") or {})
    meta.pop("managedFields", None)
    body = {**obj, "metadata": meta}
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    if json_needs_cleaning(body):
        note(
            kind,
            f"{namespace}/{name}".lstrip("/"),
            "unstorable-text",
            "sanitised",
            "NUL characters replaced by U+FFFD",
        )
        body = clean_json(body)
        namespace, name = clean_text(namespace, 253), clean_text(name, 253)
    return namespace, name, str(meta.get("resourceVersion") or ""), body


def _replace(kind: str, items: Iterable[Mapping]) -> int:
    """Make the stored objects of ``kind`` exactly ``items`` (one transaction)."""
    rows = {}
    for obj in items:
        namespace, name, version, body = _stored(obj, kind)
        if name:
            rows[(namespace, name)] = DraObject(
                kind=kind, namespace=namespace, name=name, resource_version=version, body=body
            )
    with transaction.atomic():
        DraObject.objects.filter(kind=kind).delete()
        DraObject.objects.bulk_create(rows.values(), batch_size=500)
    return len(rows)


def relist_dra(source: str, resource: str) -> tuple[int, str]:
    """List one DRA resource and store it whole; returns its count and the list's resourceVersion.
    Raises ``SourceError`` (nothing changed) when the list fails."""
    items: list[dict] = []
    options = {"page_size": conf().kube_page_size, "timeout": conf().kube_request_timeout}
    version = list_resource(source, resource, items.extend, **options)
    return _replace(DRA_KINDS[resource], items), version


def sync_dra(source: str) -> dict:
    """List every DRA kind and store it; returns per resource its count and the list's resourceVersion.
    A kind whose list fails (``SourceError``: no DRA on this cluster, no RBAC) keeps what was stored."""
    from profiles.kube import SourceError

    counts: dict = {}
    for resource in DRA_KINDS:
        try:
            count, version = relist_dra(source, resource)
        except SourceError as exc:
            log.warning("DRA sync: cannot list %s: %s", resource, exc)
            counts[resource] = {"error": str(exc)}
            continue
        counts[resource] = {"count": count, "resourceVersion": version}
    return counts


def apply_dra_events(events: Iterable[tuple[str, str, Mapping]]) -> int:
    """Apply watch events ``(resource, ADDED|MODIFIED|DELETED, object)``; returns how many changed a row."""
    changed = 0
    with transaction.atomic():
        for resource, event, obj in events:
            if resource not in DRA_KINDS:
                continue
            namespace, name, version, body = _stored(obj, DRA_KINDS[resource])
            if not name:
                continue
            key = {"kind": DRA_KINDS[resource], "namespace": namespace, "name": name}
            if event == "DELETED":
                changed += DraObject.objects.filter(**key).delete()[0]
            elif event in ("ADDED", "MODIFIED"):
                DraObject.objects.update_or_create(
                    **key, defaults={"resource_version": version, "body": body}
                )
                changed += 1
    return changed


@dataclass(frozen=True)
class DraState:
    """The cluster's DRA objects as the engine reads them."""

    slices: tuple[ResourceSlice, ...] = ()
    classes: Mapping[str, DeviceClass] = field(default_factory=dict)
    claims: Mapping[tuple[str, str], Claim] = field(default_factory=dict)
    templates: Mapping[tuple[str, str], dict] = field(default_factory=dict)
    in_use: InUse = field(default_factory=InUse)
    skipped: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.slices or self.classes or self.claims or self.templates)

    def slices_of(self, node: str) -> tuple[ResourceSlice, ...]:
        return tuple(
            s for s in self.slices if s.node_name == node or s.all_nodes or s.node_selector is not None
        )

    def nodes(self) -> tuple[str, ...]:
        return tuple(sorted({s.node_name for s in self.slices if s.node_name}))


def dra_state() -> DraState:
    """Read and parse every stored DRA object (one query)."""
    slices, classes, claims, templates, skipped = [], {}, {}, {}, []
    for row in DraObject.objects.order_by("kind", "namespace", "name").iterator():
        try:
            if row.kind == "ResourceSlice":
                slices.append(parse_slice(row.body))
            elif row.kind == "DeviceClass":
                classes[row.name] = parse_class(row.body)
            elif row.kind == "ResourceClaim":
                claims[(row.namespace, row.name)] = parse_claim(row.body)
            elif row.kind == "ResourceClaimTemplate":
                templates[(row.namespace, row.name)] = row.body
        except DraError as exc:
            skipped.append(f"{row}: {exc}")
    held = in_use_by(h for c in claims.values() for h in c.allocated)
    return DraState(tuple(slices), classes, claims, templates, held, tuple(skipped))
