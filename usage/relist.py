"""Sync the cluster's Nodes and Pods into inventories and usage once: a full list of each
(``sync_cluster``, ``manage.py sync_cluster``, the Celery relist), also how ``ClusterWatcher``
(``usage.cluster``) starts and recovers. A failed read raises ``SourceError`` and changes nothing.
"""

from __future__ import annotations

import logging

from hami_sim.project.conf import conf
from hami_sim.runtime.bulk import gc_paused
from profiles.kube import SourceError

from .kube import list_resource
from .pending import (
    BoundIndex,
    apply_reasons,
    failed_scheduling,
    pending_entry,
    sync_node_facts,
    sync_pending,
    write_requested,
)
from .podrows import admissible
from .sync import allocation_of, record_error, stored_versions, sync_allocations

__all__ = ["sync_cluster", "relist_nodes", "relist_pods", "nodes_changed", "refresh_reasons"]

log = logging.getLogger("hami_sim.usage")


def _options() -> dict:
    return {"page_size": conf().kube_page_size, "timeout": conf().kube_request_timeout}


def relist_nodes(source: str, selector: str = "") -> tuple[list[dict], str, dict]:
    """List every Node and sync inventories; returns the nodes, the list's resourceVersion, counts."""
    from profiles.sync import sync_nodes

    nodes: list[dict] = []
    with gc_paused():
        rv = list_resource(source, "nodes", nodes.extend, label_selector=selector, **_options())
        counts = sync_nodes(nodes)
        sync_node_facts(nodes)
        return nodes, rv, counts


def nodes_changed(counts: dict) -> bool:
    """Whether a node sync changed any registration (then every node's usage is recomputed)."""
    return bool(counts.get("created") or counts.get("updated") or counts.get("gone"))


def _managed() -> frozenset[str]:
    from hami_sim.runtime.simulator import get_simulator

    return get_simulator().managed_resources()


def relist_pods(source: str, *, everything: bool = True, bound: BoundIndex | None = None) -> tuple[str, dict]:
    """List every Pod and replace the stored allocations, pending HAMi pods (with their
    FailedScheduling messages) and each node's requested sums; a failed read changes nothing.

    A pod listed with the resourceVersion its stored allocation has is not decoded again, so the
    periodic relist of an unchanged cluster costs the list and one comparison per pod (and its
    request, summed per node). ``everything``: recompute every node (the node sync changed
    registrations). ``bound``: filled with each bound pod's request (the watcher keeps it).
    """
    allocations = []
    stored = stored_versions()
    keep: list[str] = []
    versions: dict[str, str] = {}
    managed = _managed()
    pending: list[tuple[str, dict]] = []
    bound = bound if bound is not None else BoundIndex()
    bound.pods.clear()
    bound.sums.clear()

    def page(pods: list[dict]) -> None:  # keep only what HAMi counts; the page's JSON goes
        for pod in pods:
            if not admissible(pod):  # its identity cannot be stored: skipped and noted
                continue
            meta = pod.get("metadata") or {}
            uid, rv = meta.get("uid"), meta.get("resourceVersion")
            spec = pod.get("spec") or {}
            if spec.get("nodeName"):
                bound.update(pod)
            else:
                entry = pending_entry(pod, managed)
                if entry is not None:
                    pending.append((str(uid or f"{entry['namespace']}/{entry['name']}"), entry))
            if uid and rv and stored.get(uid) == rv:
                keep.append(uid)
                continue
            alloc = allocation_of(pod)
            if alloc is not None:
                allocations.append(alloc)
                if uid and rv:
                    versions[uid] = str(rv)

    with gc_paused():
        try:
            rv = list_resource(source, "pods", page, **_options())
        except SourceError as exc:
            record_error(str(exc))
            raise
        counts = sync_allocations(
            allocations, source=source, versions=versions, keep=keep, everything=everything
        )
        counts.update(sync_pending(pending))
        write_requested(bound.sums)
    counts["pods_unchanged"] = len(keep)
    counts["reasons"] = _reasons_of_relist(source)
    return rv, counts


def _reasons_of_relist(source: str) -> int:
    """A relist's FailedScheduling refresh: the messages are context for pending pods, so a failure
    of any kind is logged with its traceback and the relist stands."""
    try:
        return refresh_reasons(source)
    except Exception:
        log.exception("FailedScheduling reasons refresh failed; the relist stands without it")
        return 0


def refresh_reasons(source: str) -> int:
    """Read the FailedScheduling events and store each pending pod's newest message. A failed read
    keeps the messages stored (they are context, not what the views are computed from)."""
    events: list[dict] = []
    try:
        list_resource(source, "events", events.extend, field_selector="reason=FailedScheduling", **_options())
    except SourceError as exc:
        log.warning("FailedScheduling events unreadable; pending pods keep their last messages: %s", exc)
        return 0
    return apply_reasons(failed_scheduling(events))


def sync_cluster(source: str, selector: str = "") -> dict:
    """One full sync in the foreground: Nodes, then the DRA objects (with ``DRA_SYNC``), then Pods
    (``manage.py sync_cluster``)."""
    _nodes, _rv, counts = relist_nodes(source, selector)
    if conf().dra_sync:
        from .dra import sync_dra

        counts["dra"] = sync_dra(source)
    _rv, pod_counts = relist_pods(source, everything=nodes_changed(counts))
    return {**counts, **pod_counts}
