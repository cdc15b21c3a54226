"""Read the cluster's Nodes from ``KUBE_SOURCE``: in-cluster, a kubeconfig, or a ``file://`` snapshot.

The API is read with the real ``kubernetes`` client, page by page (``limit``/``continue``), with a
request timeout, keeping raw JSON (``_preload_content=False`` + orjson) because the sync stores raw
labels and annotations. Every failure becomes a ``SourceError`` whose text is what operators see.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from hami_sim.runtime.progress import report

__all__ = [
    "SourceError",
    "list_nodes",
    "listed_total",
    "nodes_from_snapshot",
    "match_selector",
    "read_snapshot",
    "api_client",
    "status_message",
    "client_errors",
    "source_error",
    "reading",
]


class SourceError(Exception):
    """The node list could not be read; ``status`` is the HTTP status when the API answered."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def match_selector(labels: Mapping[str, str], selector: str) -> bool:
    """Equality-based label selectors (``a=b``, ``a==b``, ``a!=b``, ``a``, ``!a``) for file snapshots."""
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            key, value = (s.strip() for s in term.split("!=", 1))
            if labels.get(key) == value:
                return False
        elif "=" in term:
            key, value = (s.strip() for s in term.replace("==", "=").split("=", 1))
            if labels.get(key) != value:
                return False
        elif term.startswith("!"):
            if term[1:].strip() in labels:
                return False
        elif term not in labels:
            return False
    return True


def nodes_from_snapshot(data: object) -> list[dict]:
    """Nodes of ``kubectl get nodes -o json`` (a NodeList), a bare list, or CA's ``/snapshotz`` JSON.

    In a CA snapshot ``NodeList`` holds ``{"Node": ..., "Pods": [...]}`` entries; its template nodes
    are not real nodes and are skipped. Items of another ``kind`` (the Pods of
    ``kubectl get nodes,pods -A -o json``) are not nodes either: the usage sync reads those.
    """
    items = [
        i
        for i in _snapshot_items(data)
        if not (isinstance(i, Mapping) and i.get("kind") not in (None, "", "Node"))
    ]
    for i, node in enumerate(items):
        meta = node.get("metadata") if isinstance(node, Mapping) else None
        if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str) or not meta["name"]:
            raise SourceError(f"snapshot node #{i} has no metadata.name")
    return list(items)


def _snapshot_items(data: object) -> list:
    """The entries of a snapshot: a NodeList's ``items``, a CA snapshot's Nodes, or a bare list."""
    if isinstance(data, list):
        return data
    if not isinstance(data, Mapping):
        raise SourceError("snapshot must be a JSON object or list")
    if isinstance(data.get("items"), list):
        return data["items"]
    if isinstance(data.get("NodeList"), list):
        return [e.get("Node", e) if isinstance(e, Mapping) else e for e in data["NodeList"]]
    raise SourceError("snapshot is neither a NodeList (items) nor a CA snapshot (NodeList)")


def status_message(body: object) -> str:
    try:
        status = orjson.loads(body) if body else {}
        return str(status.get("message") or status.get("reason") or "")
    except (orjson.JSONDecodeError, AttributeError, TypeError):
        return str(body)[:300] if body else ""


def api_client(source: str):
    """A ``kubernetes`` ApiClient for ``in-cluster`` or ``kubeconfig:<path>`` (not for ``file://``)."""
    from kubernetes import client, config

    cfg = client.Configuration()
    if source == "in-cluster":
        config.load_incluster_config(client_configuration=cfg)
    elif source.startswith("kubeconfig:"):
        path = source.split(":", 1)[1] or None
        config.load_kube_config(config_file=path, client_configuration=cfg, persist_config=False)
    else:
        raise SourceError(
            f"unknown KUBE_SOURCE {source!r}: use in-cluster, kubeconfig:<path> or file://<path>"
        )
    cfg.retries = 1  # backoff is Celery's job; one quick retry absorbs a dropped connection
    return client.ApiClient(cfg)


def read_snapshot(source: str) -> object:
    """The parsed JSON of a ``file://<path>`` source; ``SourceError`` when unreadable."""
    path = Path(source[len("file://") :])
    try:
        return orjson.loads(path.read_bytes())
    except OSError as exc:
        raise SourceError(f"cannot read snapshot {path}: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise SourceError(f"snapshot {path} is not JSON: {exc}") from None


def client_errors() -> tuple[type[BaseException], ...]:
    """What the ``kubernetes`` client raises for a failed read (the API's answer, its configuration,
    the connection, the body)."""
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException
    from urllib3.exceptions import HTTPError

    return ApiException, ConfigException, HTTPError, OSError, orjson.JSONDecodeError


def source_error(exc: BaseException) -> SourceError:
    """One of ``client_errors()`` as the ``SourceError`` operators read (the one wording of each)."""
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException
    from urllib3.exceptions import HTTPError

    if isinstance(exc, ApiException):
        detail = status_message(exc.body) or exc.reason
        return SourceError(f"Kubernetes API answered {exc.status}: {detail}", exc.status)
    if isinstance(exc, ConfigException):
        return SourceError(f"cannot configure the Kubernetes client: {exc}")
    if isinstance(exc, HTTPError):
        return SourceError(f"Kubernetes API unreachable: {exc.__class__.__name__}: {exc}")
    return SourceError(f"Kubernetes API read failed: {exc}")


@contextmanager
def reading(source: str) -> Iterator[Any]:
    """An ApiClient for ``in-cluster`` or ``kubeconfig:`` ``source``, closed afterwards; every client
    failure inside the block leaves it as a ``SourceError``."""
    errors = client_errors()
    try:
        client_ = api_client(source)
    except errors as exc:
        raise source_error(exc) from None
    try:
        yield client_
    except errors as exc:
        raise source_error(exc) from None
    finally:
        client_.close()


def list_nodes(
    source: str, label_selector: str = "", page_size: int = 500, timeout: float = 30.0
) -> list[dict]:
    """All Nodes as raw dicts. Raises ``SourceError`` and never returns a partial list."""
    if source.startswith("file://"):
        nodes = nodes_from_snapshot(read_snapshot(source))
        if label_selector:
            nodes = [n for n in nodes if match_selector(n["metadata"].get("labels") or {}, label_selector)]
        return nodes

    from kubernetes import client

    with reading(source) as client_:
        return _list_pages(client.CoreV1Api(client_), label_selector, page_size, timeout)


def listed_total(page: Mapping, seen: int) -> int | None:
    """How many items a paginated list holds, once a page says so: ``seen`` when it is the last
    page, ``seen`` plus the API server's ``remainingItemCount`` when given, else unknown."""
    meta = page.get("metadata") or {}
    if not meta.get("continue"):
        return seen
    remaining = meta.get("remainingItemCount")
    return seen + int(remaining) if isinstance(remaining, int) else None


def _list_pages(api, label_selector: str, page_size: int, timeout: float) -> list[dict]:
    """Every page of the node list, raw JSON decoded with orjson (the client's models are slow)."""
    nodes: list[dict] = []
    token: str | None = None
    while True:
        kwargs: dict = {"limit": page_size, "_request_timeout": timeout, "_preload_content": False}
        if label_selector:
            kwargs["label_selector"] = label_selector
        if token:
            kwargs["_continue"] = token
        page = orjson.loads(api.list_node(**kwargs).data)
        nodes.extend(page.get("items") or [])
        report("list nodes", len(nodes), listed_total(page, len(nodes)))
        token = (page.get("metadata") or {}).get("continue") or None
        if not token:
            return nodes
