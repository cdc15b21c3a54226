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
from hami_sim.engine.hami_releases import INIT_APART
from hami_sim.engine.model import MigPlacement
from hami_sim.engine.vendors import allocated_annotations, pod_info_annotations
from hami_sim.runtime.rejects import bad_identity, note, object_name
from hami_sim.runtime.simulator import get_simulator
from hami_sim.runtime.storable import clean_json, clean_text, encode_checked, text_needs_cleaning

__all__ = [
    "BATCH",
    "checklist",
    "pod_info_keys",
    "allocation_of",
    "digest",
    "row_fields",
    "RepairedFields",
    "admissible",
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
    """The pod's allocation as HAMi counts it, or ``None`` when HAMi does not count the pod; its init
    containers as the release ``HAMI_VERSION`` names counts them (``pod_allocation``'s ``init_peak``)."""
    init_peak = get_simulator().rules.init_containers == INIT_APART
    return pod_allocation(pod, checklist(), pod_info_keys(), init_peak=init_peak)


def admissible(pod: object) -> bool:
    """Whether a pod read from the cluster can be stored under its identity (uid, namespace, name,
    the node it is bound to); one that cannot is skipped and noted, never a failed sync."""
    problem = _identity_problem(pod)
    if problem is None:
        return True
    meta = pod.get("metadata") if isinstance(pod, Mapping) else None
    note("pod", object_name(meta), "bad-identity", "skipped", problem)
    return False


def _identity_problem(pod: object) -> str | None:
    if not isinstance(pod, Mapping):
        return "not an object"
    meta = pod.get("metadata")
    problem = bad_identity(meta, named=False)
    if problem is not None:
        return problem
    assert isinstance(meta, Mapping)
    if not meta.get("uid"):
        if not meta.get("name"):
            return "neither metadata.uid nor metadata.name"
        if len(f"{meta.get('namespace') or 'default'}/{meta['name']}") > 100:  # what stands for its uid
            return "no metadata.uid, and namespace/name is longer than the 100 characters a uid may have"
    spec = pod.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        return "spec is not an object"
    node = (spec or {}).get("nodeName")
    if node is not None and (not isinstance(node, str) or text_needs_cleaning(node, 253)):
        return "spec.nodeName is not a storable node name"
    return None


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
    encoded, dirty = encode_checked({**fields, "pod_info": pod_info} if pod_info else fields)
    fields["content_hash"] = hashlib.blake2b(encoded, digest_size=16).hexdigest()
    fields["pod_info"] = pod_info
    return _repaired(fields) if dirty else fields


def _repaired(fields: dict) -> dict:
    """A pod whose allocation holds text the database refuses (a NUL in an annotation HAMi reads),
    stored with that text replaced by U+FFFD and noted; its content hash stays the original's."""
    note(
        "pod",
        clean_text(f"{fields['namespace']}/{fields['name']}"),
        "unstorable-text",
        "sanitised",
        "NUL characters or lone surrogates in its allocation replaced by U+FFFD",
    )
    out = RepairedFields((k, clean_json(v)) for k, v in fields.items())
    for key in ("namespace", "name", "node"):
        out[key] = clean_text(out[key], 253)
    return out


class RepairedFields(dict):
    """The row of a pod stored repaired: what it holds differs from the decoded allocation, so a
    relist reads that pod's allocation back from its row instead of reusing the decoded one."""


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
