"""A loopback test double of the Kubernetes API server: real HTTP, the real paths and JSON.

Drive it with the real ``kubernetes`` client through a kubeconfig that points at it::

    with FakeKubeAPI(nodes=[...]) as api:
        kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
        ...  # KUBE_SOURCE = f"kubeconfig:{kubeconfig}"

Serves ``GET /api/v1/nodes`` (``limit``/``continue``, equality ``labelSelector``),
``GET /api/v1/namespaces/<ns>/events`` and ``/api/v1/events`` (``fieldSelector`` equality on
``involvedObject.*`` and ``reason``), ``GET /api/v1/namespaces/<ns>/configmaps/<name>``.
Failures come back as ``Status`` objects (``fail_status=403`` or ``500``; ``fail_after_pages`` to
fail mid-list); ``delay`` makes every response slow. ``requests`` records each path+query, and a
wrong bearer token gets 401.
"""

from __future__ import annotations

import base64
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import orjson
import yaml

__all__ = ["FakeKubeAPI", "status_object"]

REASONS = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 410: "Expired", 500: "InternalError"}


def status_object(code: int, message: str) -> dict:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": REASONS.get(code, "Unknown"),
        "code": code,
    }


def _selector_match(obj: dict, selector: str, getter) -> bool:
    for term in filter(None, selector.split(",")):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if getter(obj, key) == value:
                return False
        elif "=" in term:
            key, value = term.replace("==", "=").split("=", 1)
            if getter(obj, key) != value:
                return False
        elif getter(obj, term) is None:
            return False
    return True


def _label(obj: dict, key: str):
    return (obj.get("metadata") or {}).get("labels", {}).get(key)


def _field(obj: dict, path: str):
    value: object = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


class FakeKubeAPI:
    """A threaded ``http.server`` on 127.0.0.1 that answers like kube-apiserver for a few resources."""

    token = "test-token"

    def __init__(self, nodes: list[dict] | None = None) -> None:
        self.nodes: list[dict] = list(nodes or [])
        self.events: dict[str, list[dict]] = {}
        self.configmaps: dict[tuple[str, str], dict] = {}
        self.fail_status: int | None = None
        self.fail_message = (
            'nodes is forbidden: User "system:serviceaccount:hami:hami-sim" cannot list resource "nodes"'
        )
        self.fail_after_pages: int | None = None
        self.delay = 0.0
        self.requests: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> FakeKubeAPI:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                api._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-kube-api", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeKubeAPI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "start() first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def write_kubeconfig(self, path: Path | str) -> Path:
        path = Path(path)
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": {"token": self.token}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
            "current-context": "fake",
        }
        path.write_text(yaml.safe_dump(config))
        return path

    # -- requests ----------------------------------------------------------------------------------
    def _send(self, handler: BaseHTTPRequestHandler, code: int, body: dict) -> None:
        data = orjson.dumps(body)
        handler.send_response(code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with self._lock:
            self.requests.append(handler.path)
        if self.delay:
            time.sleep(self.delay)
        if handler.headers.get("Authorization") != f"Bearer {self.token}":
            return self._send(handler, 401, status_object(401, "Unauthorized"))
        segments = [s for s in parts.path.split("/") if s]
        if segments == ["api", "v1", "nodes"]:
            return self._list_nodes(handler, query)
        if segments == ["api", "v1", "events"] or (
            len(segments) == 5 and segments[:3] == ["api", "v1", "namespaces"] and segments[4] == "events"
        ):
            namespace = segments[3] if len(segments) == 5 else None
            return self._list_events(handler, namespace, query)
        if len(segments) == 6 and segments[:3] == ["api", "v1", "namespaces"] and segments[4] == "configmaps":
            cm = self.configmaps.get((segments[3], segments[5]))
            if cm is None:
                return self._send(handler, 404, status_object(404, f'configmaps "{segments[5]}" not found'))
            return self._send(handler, 200, {"kind": "ConfigMap", "apiVersion": "v1", **cm})
        return self._send(
            handler, 404, status_object(404, "the server could not find the requested resource")
        )

    def _page(self, items: list[dict], query: dict, kind: str) -> tuple[int, dict]:
        offset = 0
        token = query.get("continue")
        if token:
            try:
                offset = int(base64.urlsafe_b64decode(token.encode()).decode())
            except ValueError:
                return 410, status_object(410, "The provided continue parameter is too old")
        limit = int(query.get("limit") or 0)
        end = offset + limit if limit else len(items)
        meta: dict = {"resourceVersion": "12345"}
        if end < len(items):
            meta["continue"] = base64.urlsafe_b64encode(str(end).encode()).decode()
            meta["remainingItemCount"] = len(items) - end
        return 200, {"kind": kind, "apiVersion": "v1", "metadata": meta, "items": items[offset:end]}

    def _list_nodes(self, handler: BaseHTTPRequestHandler, query: dict) -> None:
        pages_served = sum(1 for r in self.requests if r.startswith("/api/v1/nodes")) - 1
        if self.fail_status and (self.fail_after_pages is None or pages_served >= self.fail_after_pages):
            return self._send(handler, self.fail_status, status_object(self.fail_status, self.fail_message))
        nodes = self.nodes
        if query.get("labelSelector"):
            nodes = [n for n in nodes if _selector_match(n, query["labelSelector"], _label)]
        code, body = self._page(nodes, query, "NodeList")
        for node in body.get("items", []):
            node.setdefault("kind", "Node")
            node.setdefault("apiVersion", "v1")
        self._send(handler, code, body)

    def _list_events(self, handler: BaseHTTPRequestHandler, namespace: str | None, query: dict) -> None:
        if namespace is None:
            events = [e for evs in self.events.values() for e in evs]
        else:
            events = list(self.events.get(namespace, []))
        if query.get("fieldSelector"):
            events = [e for e in events if _selector_match(e, query["fieldSelector"], _field)]
        code, body = self._page(events, query, "EventList")
        self._send(handler, code, body)
