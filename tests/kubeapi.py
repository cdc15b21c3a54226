"""A loopback test double of the Kubernetes API server: real HTTP, the real paths and JSON.

Drive it with the real ``kubernetes`` client through a kubeconfig that points at it::

    with FakeKubeAPI(nodes=[...]) as api:
        kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
        ...  # KUBE_SOURCE = f"kubeconfig:{kubeconfig}"

Serves ``GET /api/v1/nodes`` and ``GET /api/v1/pods`` (``limit``/``continue``, equality
``labelSelector``; the list's ``resourceVersion`` is the current one), their watches (``?watch=true``,
see below), ``GET /api/v1/namespaces/<ns>/events`` and ``/api/v1/events`` (``fieldSelector`` equality
on ``involvedObject.*`` and ``reason``), ``GET /api/v1/namespaces/<ns>/configmaps/<name>``, and
``PATCH /api/v1/nodes/<name>/status`` (JSON patch, merge or strategic merge patch; only ``status``
changes are kept, as the subresource does; a MODIFIED event follows; ``patches`` records each
``(node, content type, body)``; ``patch_fail_status`` refuses every patch with that status).
Failures come back as ``Status`` objects (``fail_status=403`` or ``500``; ``fail_after_pages`` to
fail mid-list); ``delay`` makes every response slow; ``hold_pods_after_pages`` holds the pod list
after that many pages (``held`` is set) until the test sets ``release``. ``requests`` records each path+query, and a
wrong bearer token gets 401.

Watches behave like kube-apiserver's: a chunked stream of ``{"type": ..., "object": ...}`` lines
from the requested ``resourceVersion`` (none or ``"0"``: synthetic ``ADDED`` events for what exists
now first), ``BOOKMARK`` events when ``allowWatchBookmarks=true`` (``send_bookmark()``, or every
``bookmark_every`` seconds), the stream ends after ``timeoutSeconds``. Change the cluster through
``add_pod``/``modify_pod``/``delete_pod``/``add_node``/``modify_node``/``delete_node`` (each bumps the
resourceVersion and notifies watchers); ``compact()`` makes older resourceVersions answer an ``ERROR``
event with a 410 ``Expired`` Status (open watches too), ``drop_watches()`` cuts open streams mid-chunk
(the client sees its stream end early and reconnects) and ``watch_fail_status`` makes new watches
fail with that HTTP status.

The apps group serves ``GET /apis/apps/v1/namespaces/<ns>/deployments`` and ``.../daemonsets`` (and
their cluster-wide lists) from ``workloads`` (objects with ``kind`` and ``metadata.namespace``), with
equality ``labelSelector`` and pages; as kube-apiserver does, a list is a ``DeploymentList`` or
``DaemonSetList`` of ``apiVersion: apps/v1`` whose items carry no ``kind``. ``apps_fail_status``
refuses them (403: the service account may not read the apps group) without touching the core lists.

The DRA group serves ``GET /apis/resource.k8s.io/v1/{resourceslices,deviceclasses,resourceclaims,
resourceclaimtemplates}`` (cluster-wide lists, pages, ``…List`` kinds of ``apiVersion:
resource.k8s.io/v1``) and their watches, from ``dra[resource]``; change them with ``add_dra``,
``modify_dra`` and ``delete_dra``. ``dra_fail_status`` refuses the group (404 on a cluster without
DRA, 403 without the RBAC).
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

REASONS = {
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    500: "InternalError",
}


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


#: the DRA resources the double serves, with their kinds
DRA_KINDS = {
    "resourceslices": "ResourceSlice",
    "deviceclasses": "DeviceClass",
    "resourceclaims": "ResourceClaim",
    "resourceclaimtemplates": "ResourceClaimTemplate",
}
DRA_VERSION = "resource.k8s.io/v1"


class FakeKubeAPI:
    """A threaded ``http.server`` on 127.0.0.1 that answers like kube-apiserver for a few resources."""

    token = "test-token"

    def __init__(self, nodes: list[dict] | None = None, pods: list[dict] | None = None) -> None:
        self.nodes: list[dict] = list(nodes or [])
        self.pods: list[dict] = list(pods or [])
        self.events: dict[str, list[dict]] = {}
        self.configmaps: dict[tuple[str, str], dict] = {}
        self.workloads: list[dict] = []  # Deployments and DaemonSets (``kind`` set), apps/v1
        self.apps_fail_status: int | None = None
        self.dra: dict[str, list[dict]] = {r: [] for r in DRA_KINDS}
        self.dra_fail_status: int | None = None
        self.fail_status: int | None = None
        self.fail_message = (
            'nodes is forbidden: User "system:serviceaccount:hami:hami-sim" cannot list resource "nodes"'
        )
        self.fail_after_pages: int | None = None
        self.delay = 0.0
        self.hold_pods_after_pages: int | None = None
        self.held = threading.Event()
        self.release = threading.Event()
        self.requests: list[str] = []
        self.patches: list[tuple[str, str, object]] = []
        self.patch_fail_status: int | None = None
        self._lock = threading.Lock()
        self._init_watch()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> FakeKubeAPI:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # TCP_NODELAY, as Go's net/http (kube-apiserver) sets: without it the body written after
            # the headers waits for the client's delayed ACK, 40 ms per response on Linux
            disable_nagle_algorithm = True

            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                api._handle(self)

            def do_PATCH(self) -> None:  # noqa: N802 (http.server's name)
                api._handle_patch(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-kube-api", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
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
        return write_kubeconfig(self.url, path, self.token)

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
        if segments in (["api", "v1", "nodes"], ["api", "v1", "pods"]) and query.get("watch") in (
            "true",
            "1",
        ):
            return self._watch(handler, segments[2], query)
        if segments[:3] == ["apis", "apps", "v1"]:
            return self._list_workloads(handler, segments[3:], query)
        if (
            segments[:3] == ["apis", "resource.k8s.io", "v1"]
            and len(segments) == 4
            and segments[3] in DRA_KINDS
        ):
            return self._list_dra(handler, segments[3], query)
        if segments == ["api", "v1", "nodes"]:
            return self._list_nodes(handler, query)
        if segments == ["api", "v1", "pods"]:
            return self._list_pods(handler, query)
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

    def _handle_patch(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        with self._lock:
            self.requests.append(f"PATCH {handler.path}")
        if handler.headers.get("Authorization") != f"Bearer {self.token}":
            return self._send(handler, 401, status_object(401, "Unauthorized"))
        segments = [s for s in parts.path.split("/") if s]
        if not (len(segments) == 5 and segments[:3] == ["api", "v1", "nodes"] and segments[4] == "status"):
            return self._send(
                handler, 404, status_object(404, "the server could not find the requested resource")
            )
        name = segments[3]
        if self.patch_fail_status:
            code = self.patch_fail_status
            message = (
                f'nodes "{name}" is forbidden: User "system:serviceaccount:hami-sim:hami-sim-watcher" '
                'cannot patch resource "nodes/status" in API group "" at the cluster scope'
            )
            return self._send(handler, code, status_object(code, message))
        content_type = (handler.headers.get("Content-Type") or "").split(";")[0].strip()
        try:
            patch = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return self._send(handler, 400, status_object(400, f"invalid JSON: {exc}"))
        with self._changed:
            current = next((n for n in self.nodes if _object_key(n) == ("", name)), None)
            if current is None:
                return self._send(handler, 404, status_object(404, f'nodes "{name}" not found'))
            target = orjson.loads(orjson.dumps(current))
            try:
                if content_type == "application/json-patch+json":
                    target = _json_patch(target, patch)
                elif content_type in (
                    "application/merge-patch+json",
                    "application/strategic-merge-patch+json",
                ):
                    target = _merge_patch(target, patch)
                else:
                    return self._send(
                        handler,
                        415,
                        status_object(
                            415,
                            f"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json ({content_type})",
                        ),
                    )
            except _PatchError as exc:
                return self._send(handler, 422, status_object(422, str(exc)))
            updated = orjson.loads(orjson.dumps(current))
            updated["status"] = target.get("status") or {}  # the status subresource keeps status only
            self.patches.append((name, content_type, patch))
            obj = self._record("nodes", "Node", "MODIFIED", updated)
        self._send(handler, 200, obj)

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
        meta: dict = {"resourceVersion": str(self._rv)}
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

    def _list_pods(self, handler: BaseHTTPRequestHandler, query: dict) -> None:
        pages_served = (
            sum(1 for r in self.requests if r.startswith("/api/v1/pods?") and "watch=" not in r) - 1
        )
        if self.hold_pods_after_pages is not None and pages_served >= self.hold_pods_after_pages:
            self.held.set()
            self.release.wait(60)
        if self.fail_status and self.fail_after_pages is None:
            return self._send(handler, self.fail_status, status_object(self.fail_status, self.fail_message))
        pods = list(self.pods)
        if query.get("labelSelector"):
            pods = [p for p in pods if _selector_match(p, query["labelSelector"], _label)]
        code, body = self._page(pods, query, "PodList")
        for pod in body.get("items", []):
            pod.setdefault("kind", "Pod")
            pod.setdefault("apiVersion", "v1")
        self._send(handler, code, body)

    def _list_workloads(self, handler: BaseHTTPRequestHandler, rest: list[str], query: dict) -> None:
        """``deployments`` / ``daemonsets``, in one namespace or all, as the apps group lists them."""
        kinds = {"deployments": "Deployment", "daemonsets": "DaemonSet"}
        namespace = None
        if len(rest) == 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if len(rest) != 1 or rest[0] not in kinds:
            return self._send(
                handler, 404, status_object(404, "the server could not find the requested resource")
            )
        resource, kind = rest[0], kinds[rest[0]]
        if self.apps_fail_status:
            code = self.apps_fail_status
            where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
            message = (
                f'{resource}.apps is forbidden: User "system:serviceaccount:hami-sim:hami-sim-worker" '
                f'cannot list resource "{resource}" in API group "apps"{where}'
            )
            return self._send(handler, code, status_object(code, message))
        items = [
            {k: v for k, v in w.items() if k not in ("kind", "apiVersion")}
            for w in self.workloads
            if w.get("kind") == kind
            and (namespace is None or (w.get("metadata") or {}).get("namespace") == namespace)
        ]
        if query.get("labelSelector"):
            items = [w for w in items if _selector_match(w, query["labelSelector"], _label)]
        code, body = self._page(items, query, f"{kind}List")
        if code == 200:
            body["apiVersion"] = "apps/v1"
        self._send(handler, code, body)

    def _list_dra(self, handler: BaseHTTPRequestHandler, resource: str, query: dict) -> None:
        if self.dra_fail_status:
            code = self.dra_fail_status
            return self._send(
                handler, code, status_object(code, "the server could not find the requested resource")
            )
        if query.get("watch") in ("true", "1"):
            return self._watch(handler, resource, query)
        items = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in self.dra[resource]]
        code, body = self._page(items, query, f"{DRA_KINDS[resource]}List")
        if code == 200:
            body["apiVersion"] = DRA_VERSION
        self._send(handler, code, body)

    def _items(self, resource: str) -> list[dict]:
        if resource in DRA_KINDS:
            return self.dra[resource]
        return self.nodes if resource == "nodes" else self.pods

    def _list_events(self, handler: BaseHTTPRequestHandler, namespace: str | None, query: dict) -> None:
        if namespace is None:
            events = [e for evs in self.events.values() for e in evs]
        else:
            events = list(self.events.get(namespace, []))
        if query.get("fieldSelector"):
            events = [e for e in events if _selector_match(e, query["fieldSelector"], _field)]
        code, body = self._page(events, query, "EventList")
        self._send(handler, code, body)

    # -- watches -----------------------------------------------------------------------------------
    def _init_watch(self) -> None:
        self._changed = threading.Condition()
        self._rv = 1000
        self._log: list[tuple[int, str, str, dict]] = []  # (resourceVersion, resource, type, object)
        self._compacted = 0  # a watch from a resourceVersion below this gets 410 Expired
        self._drops = self._expiries = self._bookmarks = 0
        self._stopping = False
        self.bookmark_every: float | None = None
        self.watch_fail_status: int | None = None
        self.open_watches = 0

    @property
    def resource_version(self) -> str:
        return str(self._rv)

    def _record(self, resource: str, kind: str, event: str, obj: dict) -> dict:
        with self._changed:
            self._rv += 1
            obj = orjson.loads(orjson.dumps(obj))  # the server's copy: later edits by the test do not leak
            obj.setdefault("kind", kind)
            obj.setdefault("apiVersion", DRA_VERSION if resource in DRA_KINDS else "v1")
            obj.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
            items = self._items(resource)
            key = _object_key(obj)
            index = next((i for i, o in enumerate(items) if _object_key(o) == key), None)
            if event == "DELETED":
                if index is not None:
                    del items[index]
            elif index is None:
                items.append(obj)
            else:
                items[index] = obj
            self._log.append((self._rv, resource, event, obj))
            self._changed.notify_all()
            return obj

    def add_pod(self, pod: dict) -> dict:
        return self._record("pods", "Pod", "ADDED", pod)

    def modify_pod(self, pod: dict) -> dict:
        return self._record("pods", "Pod", "MODIFIED", pod)

    def delete_pod(self, namespace: str, name: str) -> dict:
        current = next(p for p in self.pods if _object_key(p) == (namespace, name))
        return self._record("pods", "Pod", "DELETED", current)

    def add_node(self, node: dict) -> dict:
        return self._record("nodes", "Node", "ADDED", node)

    def modify_node(self, node: dict) -> dict:
        return self._record("nodes", "Node", "MODIFIED", node)

    def delete_node(self, name: str) -> dict:
        current = next(n for n in self.nodes if _object_key(n) == ("", name))
        return self._record("nodes", "Node", "DELETED", current)

    def add_dra(self, resource: str, obj: dict) -> dict:
        return self._record(resource, DRA_KINDS[resource], "ADDED", obj)

    def modify_dra(self, resource: str, obj: dict) -> dict:
        return self._record(resource, DRA_KINDS[resource], "MODIFIED", obj)

    def delete_dra(self, resource: str, namespace: str, name: str) -> dict:
        current = next(o for o in self.dra[resource] if _object_key(o) == (namespace, name))
        return self._record(resource, DRA_KINDS[resource], "DELETED", current)

    def compact(self) -> None:
        """Forget history: every resourceVersion so far is too old (open watches get 410 as well)."""
        with self._changed:
            self._compacted = self._rv
            self._expiries += 1
            self._changed.notify_all()

    def drop_watches(self) -> None:
        """Cut every open watch connection without ending the chunked stream (a network failure)."""
        with self._changed:
            self._drops += 1
            self._changed.notify_all()

    def send_bookmark(self) -> None:
        with self._changed:
            self._bookmarks += 1
            self._changed.notify_all()

    def wait_for_watches(self, count: int, timeout: float = 30.0) -> bool:
        """Block until ``count`` watches are open (a test's way to know the watcher is listening)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self.open_watches < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    def _chunk(self, handler: BaseHTTPRequestHandler, body: dict) -> None:
        line = orjson.dumps(body) + b"\n"
        handler.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
        handler.wfile.flush()

    def _watch(self, handler: BaseHTTPRequestHandler, resource: str, query: dict) -> None:
        if self.watch_fail_status:
            code = self.watch_fail_status
            return self._send(handler, code, status_object(code, f"watch {resource} failed"))
        kind = DRA_KINDS.get(resource) or ("Node" if resource == "nodes" else "Pod")
        selector = query.get("labelSelector") or ""
        bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
        timeout = float(query.get("timeoutSeconds") or 0)
        deadline = time.monotonic() + timeout if timeout else None
        requested = query.get("resourceVersion") or ""
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        with self._changed:
            self.open_watches += 1
            self._changed.notify_all()
        try:
            self._stream(handler, resource, kind, selector, bookmarks, deadline, requested)
        except (BrokenPipeError, ConnectionResetError):
            return
        finally:
            with self._changed:
                self.open_watches -= 1

    def _stream(self, handler, resource, kind, selector, bookmarks, deadline, requested) -> None:  # noqa: C901
        with self._changed:
            drops, expiries, marks = self._drops, self._expiries, self._bookmarks
            if requested in ("", "0"):
                cursor = self._rv
                initial = list(self._items(resource))
            else:
                cursor, initial = int(requested), []
                if cursor < self._compacted:
                    initial = None
        if initial is None:
            self._chunk(
                handler,
                {"type": "ERROR", "object": status_object(410, f"too old resource version: {requested}")},
            )
            return self._end(handler)
        for obj in initial:
            if not selector or _selector_match(obj, selector, _label):
                self._chunk(handler, {"type": "ADDED", "object": obj})
        last_mark = time.monotonic()
        while True:
            with self._changed:
                pending = [e for e in self._log if e[0] > cursor and e[1] == resource]
                if (
                    not pending
                    and self._drops == drops
                    and self._expiries == expiries
                    and self._bookmarks == marks
                ):
                    self._changed.wait(0.05)
                    pending = [e for e in self._log if e[0] > cursor and e[1] == resource]
                stopping, dropped, expired = self._stopping, self._drops != drops, self._expiries != expiries
                mark, marks = self._bookmarks != marks, self._bookmarks
                rv = self._rv
            if stopping or dropped:
                handler.wfile.write(b'40\r\n{"type":')  # half a chunk, then the connection goes
                handler.wfile.flush()
                handler.close_connection = True
                return
            if expired:
                self._chunk(
                    handler, {"type": "ERROR", "object": status_object(410, "too old resource version")}
                )
                return self._end(handler)
            for event_rv, _res, event, obj in pending:
                cursor = event_rv
                if not selector or _selector_match(obj, selector, _label):
                    self._chunk(handler, {"type": event, "object": obj})
            periodic = self.bookmark_every is not None and time.monotonic() - last_mark >= self.bookmark_every
            if bookmarks and (mark or periodic):
                cursor = max(cursor, rv)
                self._chunk(
                    handler,
                    {
                        "type": "BOOKMARK",
                        "object": {
                            "kind": kind,
                            "apiVersion": "v1",
                            "metadata": {"resourceVersion": str(cursor)},
                        },
                    },
                )
                last_mark = time.monotonic()
            if deadline is not None and time.monotonic() >= deadline:
                return self._end(handler)

    def _end(self, handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()


class _PatchError(ValueError):
    """A patch that does not apply (kube-apiserver answers 422)."""


def _pointer(path: str) -> list[str]:
    if not path.startswith("/"):
        raise _PatchError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _json_patch(doc: dict, ops: object) -> dict:
    """RFC 6902 add/replace/remove/test on objects (what a status patch needs)."""
    if not isinstance(ops, list):
        raise _PatchError("a JSON patch is a list of operations")
    for op in ops:
        kind, tokens = op.get("op"), _pointer(str(op.get("path", "")))
        parent: object = doc
        for token in tokens[:-1]:
            if not isinstance(parent, dict) or token not in parent:
                raise _PatchError(
                    f"jsonpatch {kind} operation does not apply: doc is missing path: {op['path']}"
                )
            parent = parent[token]
        if not isinstance(parent, dict):
            raise _PatchError(f"jsonpatch {kind} operation does not apply: {op['path']}")
        last = tokens[-1]
        if kind == "add":
            parent[last] = op["value"]
        elif kind in ("replace", "remove", "test"):
            if last not in parent:
                raise _PatchError(
                    f"jsonpatch {kind} operation does not apply: doc is missing key: {op['path']}"
                )
            if kind == "replace":
                parent[last] = op["value"]
            elif kind == "remove":
                del parent[last]
            elif parent[last] != op["value"]:
                raise _PatchError(f"testing value {op['path']} failed")
        else:
            raise _PatchError(f"unexpected kind of operation: {kind}")
    return doc


def _merge_patch(doc: object, patch: object) -> object:
    """RFC 7386 (strategic merge is the same for the maps a status patch touches)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(doc) if isinstance(doc, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge_patch(out.get(key), value)
    return out


def write_kubeconfig(url: str, path: Path | str, token: str = "test-token") -> Path:
    """A kubeconfig for the double at ``url`` (also one served from another process, as in bench/)."""
    path = Path(path)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "fake", "cluster": {"server": url}}],
        "users": [{"name": "fake", "user": {"token": token}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
        "current-context": "fake",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def _object_key(obj: dict) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")
