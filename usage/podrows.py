"""A pod as HAMi counts it, to and from its ``PodAllocation`` row.

HAMi counts a pod's devices from its allocated annotations (``SupportDevices``: one key per vendor)
and, for the vendor rules that read the pods on a device, a few more annotations. A row keeps that
allocation as compact JSON plus a content hash, so a relist rewrites only the pods whose counted
allocation changed, and reads rows back with orjson (Django's JSON decoding was a quarter of a cold
100,000-pod relist).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator, Mapping
from functools import lru_cache

import orjson
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast

from hami_sim.engine.allocations import ContainerDevice, MigAllocation, pod_allocation
from hami_sim.engine.allocations import PodAllocation as Allocation
from hami_sim.engine.model import MigPlacement
from hami_sim.engine.vendors import allocated_annotations, pod_info_annotations

__all__ = [
    "BATCH",
    "checklist",
    "pod_info_keys",
    "allocation_of",
    "digest",
    "row_fields",
    "uid_of",
    "json_text",
    "stored_allocations",
]

BATCH = 2000


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


def digest(value: object) -> str:
    """A short stable hash of a JSON-able value (keys sorted)."""
    return hashlib.blake2b(orjson.dumps(value, option=orjson.OPT_SORT_KEYS), digest_size=16).hexdigest()


def row_fields(alloc: Allocation) -> dict:
    """The ``PodAllocation`` columns of an allocation, with the content hash a relist compares."""
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
    fields["content_hash"] = digest({**fields, "pod_info": pod_info} if pod_info else fields)
    fields["pod_info"] = pod_info
    return fields


def uid_of(alloc: Allocation) -> str:
    """Pods from a file snapshot may lack a uid: fall back to namespace/name."""
    return alloc.uid or f"{alloc.namespace}/{alloc.name}"


def json_text(field: str) -> Cast:
    """A JSON column read as its text, for orjson: Django's ``JSONField`` decodes with the standard
    library, which was a quarter of a cold 100,000-pod relist."""
    return Cast(field, TextField())


def stored_allocations(rows: QuerySet) -> Iterator[Allocation]:
    """The allocations of these ``PodAllocation`` rows, decoded once with orjson."""
    values = rows.annotate(
        devices_json=json_text("devices"), mig_json=json_text("mig"), info_json=json_text("pod_info")
    ).values_list(
        "namespace", "name", "uid", "node", "devices_json", "mig_json", "terminating", "error", "info_json"
    )
    for namespace, name, uid, node, devices, mig, terminating, error, info in values.iterator(
        chunk_size=BATCH
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
