"""Read Pods (and Nodes, with the list's resourceVersion) from ``KUBE_SOURCE``; watch both.

Same sources as the node sync (``profiles.kube``): in-cluster, ``kubeconfig:<path>``, or a
``file://`` snapshot (``kubectl get nodes,pods -A -o json``: Pods beside Nodes). Lists are read page
by page with raw JSON (``_preload_content=False`` + orjson, several times cheaper than the client's
model deserialisation: ``bench/usage_bench.py`` prints both); pages go to a callback so a
100,000-pod relist never holds every Pod's JSON at once, and the next page is fetched while the
callback works. Every failure is a ``SourceError``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import orjson

from hami_sim.runtime.progress import report
from profiles.kube import (
    SourceError,
    api_client,
    client_errors,
    listed_total,
    match_selector,
    nodes_from_snapshot,
    read_snapshot,
    source_error,
)

__all__ = [
    "pods_from_snapshot",
    "list_resource",
    "watch_resource",
    "patch_nodes_status",
    "WatchExpired",
    "Event",
]

Event = tuple[str, dict]  # (ADDED/MODIFIED/DELETED/BOOKMARK, raw object)


class WatchExpired(Exception):
    """The watch's resourceVersion is too old (410 Gone): relist, then watch from the new version."""


def pods_from_snapshot(data: object) -> list[dict]:
    """The Pods of a snapshot: ``kind: Pod`` items of a ``List``/``PodList``, or a CA snapshot's
    ``NodeList[].Pods``. A NodeList alone has none."""
    if isinstance(data, Mapping) and isinstance(data.get("NodeList"), list):
        return [p for e in data["NodeList"] if isinstance(e, Mapping) for p in e.get("Pods") or []]
    items = data.get("items") if isinstance(data, Mapping) else data
    if not isinstance(items, list):
        raise SourceError("snapshot is neither a List (items) nor a CA snapshot (NodeList)")
    default_kind = _default_kind(data)
    return [i for i in items if isinstance(i, Mapping) and (i.get("kind") or default_kind) == "Pod"]


def _default_kind(data: object) -> str:
    """The kind of an item that names none: ``Pod`` in a ``PodList``, unknown elsewhere."""
    return "Pod" if isinstance(data, Mapping) and data.get("kind") == "PodList" else ""


#: the DRA resources (``resource.k8s.io/v1``): resource -> (kind, ResourceV1Api's list method)
DRA_RESOURCES = {
    "resourceslices": ("ResourceSlice", "list_resource_slice"),
    "resourceclaims": ("ResourceClaim", "list_resource_claim_for_all_namespaces"),
    "resourceclaimtemplates": ("ResourceClaimTemplate", "list_resource_claim_template_for_all_namespaces"),
    "deviceclasses": ("DeviceClass", "list_device_class"),
}


def _lister(api_client_: Any, resource: str) -> Callable[..., Any]:
    from kubernetes import client

    if resource in DRA_RESOURCES:
        return getattr(client.ResourceV1Api(api_client_), DRA_RESOURCES[resource][1])
    api = client.CoreV1Api(api_client_)
    if resource == "events":
        return api.list_event_for_all_namespaces
    return api.list_node if resource == "nodes" else api.list_pod_for_all_namespaces


def _snapshot_items(data: object, resource: str) -> list:
    if resource == "nodes":
        return nodes_from_snapshot(data)
    if resource == "pods":
        return pods_from_snapshot(data)
    kind = DRA_RESOURCES[resource][0] if resource in DRA_RESOURCES else "Event"
    items = data.get("items") if isinstance(data, Mapping) else None
    return [i for i in items or () if isinstance(i, Mapping) and i.get("kind") == kind]


def list_resource(
    source: str,
    resource: str,
    on_page: Callable[[list[dict]], None],
    *,
    label_selector: str = "",
    field_selector: str = "",
    page_size: int = 500,
    timeout: float = 30.0,
) -> str:
    """Feed every page of ``nodes``, ``pods`` or ``events`` to ``on_page``; return the list's
    resourceVersion. ``field_selector`` is passed to the API server (a snapshot ignores it).

    A failure part-way raises ``SourceError``: the caller must not treat what it saw as complete.
    """
    if source.startswith("file://"):
        data = read_snapshot(source)
        items = _snapshot_items(data, resource)
        if label_selector:
            items = [
                i
                for i in items
                if match_selector((i.get("metadata") or {}).get("labels") or {}, label_selector)
            ]
        on_page(list(items))
        report(f"list {resource}", len(items), len(items))
        return ""

    errors = client_errors()
    try:
        api_client_ = api_client(source)
    except errors as exc:
        raise source_error(exc) from None

    def fetch(token: str | None) -> dict:
        kwargs: dict = {"limit": page_size, "_request_timeout": timeout, "_preload_content": False}
        if label_selector:
            kwargs["label_selector"] = label_selector
        if field_selector:
            kwargs["field_selector"] = field_selector
        if token:
            kwargs["_continue"] = token
        return orjson.loads(_lister(api_client_, resource)(**kwargs).data)

    try:
        rv, seen = "", 0
        for page in _prefetched(fetch):
            items = page.get("items") or []
            on_page(items)
            seen += len(items)
            report(f"list {resource}", seen, listed_total(page, seen))
            rv = str((page.get("metadata") or {}).get("resourceVersion") or "")
        return rv
    except errors as exc:
        raise source_error(exc) from None
    finally:
        api_client_.close()


def patch_nodes_status(
    source: str, patches: Iterable[tuple[str, list[dict]]], *, timeout: float = 30.0
) -> dict[str, str]:
    """PATCH each node's ``status`` subresource with a JSON patch (RFC 6902: the client sends a list
    body as ``application/json-patch+json``), on one client. Returns node -> why its patch failed;
    a node missing from it was patched. A source that cannot be configured raises ``SourceError``."""
    from kubernetes import client

    if source.startswith("file://"):
        raise SourceError("a file:// snapshot cannot be patched")
    errors = client_errors()
    try:
        api_client_ = api_client(source)
    except errors as exc:
        raise source_error(exc) from None
    api = client.CoreV1Api(api_client_)
    failed: dict[str, str] = {}
    try:
        for name, ops in patches:
            try:
                api.patch_node_status(name, ops, _request_timeout=timeout, _preload_content=False)
            except errors as exc:
                failed[name] = str(source_error(exc))
    finally:
        api_client_.close()
    return failed


def _prefetched(fetch: Callable[[str | None], dict]) -> Iterator[dict]:
    """Every page of a list, the next one fetched (by one reader thread) while the caller works on
    this one: the API server's work and the network overlap ours. An error is raised to the caller
    in page order; a caller that stops early stops the reader."""
    pages: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()

    def put(item: tuple) -> None:
        while not stop.is_set():
            try:
                pages.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    def read() -> None:
        token: str | None = None
        try:
            while not stop.is_set():
                page = fetch(token)
                put(("page", page))
                token = (page.get("metadata") or {}).get("continue") or None
                if not token:
                    break
            put(("end", None))
        except BaseException as exc:  # noqa: BLE001 (handed to the caller's thread)
            put(("error", exc))

    reader = threading.Thread(target=read, name="kube-list", daemon=True)
    reader.start()
    try:
        while True:
            kind, value = pages.get()
            if kind == "error":
                raise value
            if kind == "end":
                return
            yield value
    finally:
        stop.set()
        reader.join(timeout=5)


def watch_resource(
    source: str,
    resource: str,
    resource_version: str,
    *,
    label_selector: str = "",
    timeout_seconds: int = 60,
    connect_timeout: float = 10.0,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[Event]:
    """One watch request from ``resource_version``, with bookmarks, until the server ends it.

    Yields ``(type, raw object)`` including ``BOOKMARK``; raises ``WatchExpired`` on 410 Gone and
    ``SourceError`` on any other failure (the caller backs off and reconnects from the last version).
    """
    from kubernetes import watch

    errors = client_errors()
    try:
        api_client_ = api_client(source)
    except errors as exc:
        raise source_error(exc) from None
    # return_type=object keeps raw dicts (no model deserialisation) and still tracks resourceVersion
    watcher = watch.Watch(return_type=object)
    kwargs: dict = {
        "resource_version": resource_version,
        "allow_watch_bookmarks": True,
        "timeout_seconds": timeout_seconds,
        "_request_timeout": (connect_timeout, timeout_seconds + 15),
    }
    if label_selector:
        kwargs["label_selector"] = label_selector
    try:
        for event in watcher.stream(_lister(api_client_, resource), **kwargs):
            yield str(event.get("type")), event.get("raw_object") or {}
            if stop():
                watcher.stop()
                return
    except errors as exc:
        if getattr(exc, "status", None) == 410:
            raise WatchExpired(str(exc)) from None
        raise source_error(exc) from None
    finally:
        api_client_.close()
