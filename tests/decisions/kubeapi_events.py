"""A loopback Kubernetes API server double for events and the CA status ConfigMap.

It speaks the real paths and JSON (``/api/v1/events`` with ``fieldSelector``/``limit``/``continue``,
``/api/v1/namespaces/kube-system/configmaps/cluster-autoscaler-status``) so the real ``kubernetes``
client is exercised end to end over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

__all__ = ["EventsAPIServer", "pod_event"]


def pod_event(
    uid: str,
    reason: str,
    message: str,
    *,
    pod: str,
    pod_uid: str,
    namespace: str = "default",
    count: int = 1,
    last: str = "2026-01-01T10:00:00Z",
    component: str = "cluster-autoscaler",
) -> dict:
    return {
        "metadata": {"name": f"{pod}.{uid}", "namespace": namespace, "uid": uid},
        "involvedObject": {"kind": "Pod", "namespace": namespace, "name": pod, "uid": pod_uid, "apiVersion": "v1"},
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": "2026-01-01T09:59:00Z",
        "lastTimestamp": last,
        "count": count,
        "type": "Normal" if reason == "TriggeredScaleUp" else "Warning",
    }


class EventsAPIServer:
    """``with EventsAPIServer(events, status_yaml) as url: ...``; ``fail`` makes every call answer it."""

    def __init__(self, events: list[dict] | None = None, status: str | None = None, page: int = 2) -> None:
        self.events = list(events or [])
        self.status = status
        self.page = page
        self.fail: int | None = None
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                outer.requests.append(self.path)
                if outer.fail:
                    return self._send(outer.fail, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                                   "reason": "Forbidden", "code": outer.fail})
                url = urlparse(self.path)
                query = parse_qs(url.query)
                if url.path == "/api/v1/events":
                    selectors = dict(
                        part.split("=", 1) for part in query.get("fieldSelector", [""])[0].split(",") if "=" in part
                    )
                    items = [
                        e for e in outer.events
                        if all(
                            (e["reason"] if k == "reason" else e["involvedObject"].get(k.split(".", 1)[1])) == v
                            for k, v in selectors.items()
                        )
                    ]
                    start = int(query.get("continue", ["0"])[0] or 0)
                    limit = int(query.get("limit", [str(outer.page)])[0])
                    limit = min(limit, outer.page)
                    chunk = items[start : start + limit]
                    nxt = str(start + limit) if start + limit < len(items) else None
                    meta = {"resourceVersion": "42"}
                    if nxt:
                        meta["continue"] = nxt
                    return self._send(200, {"kind": "EventList", "apiVersion": "v1", "metadata": meta, "items": chunk})
                if url.path == "/api/v1/namespaces/kube-system/configmaps/cluster-autoscaler-status":
                    if outer.status is None:
                        return self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                                "reason": "NotFound", "code": 404})
                    return self._send(200, {
                        "kind": "ConfigMap", "apiVersion": "v1",
                        "metadata": {"name": "cluster-autoscaler-status", "namespace": "kube-system"},
                        "data": {"status": outer.status},
                    })
                return self._send(404, {"kind": "Status", "code": 404, "reason": "NotFound"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> EventsAPIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
