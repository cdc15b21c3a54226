"""Fault injection: the production server with its broker or its database gone, and the cluster sync
with the Kubernetes API unreachable, failing or forbidden.

Every fault is simulated with something the test owns: an address where nothing listens (the
machine's own PostgreSQL and Redis are never touched), or the loopback Kubernetes API double.
"""

from __future__ import annotations

import http.client
import socket

import orjson
import pytest

from tests.factories import gpu, node, pod
from tests.loadgen import start

from .corpus import good_filter_body

pytestmark = [pytest.mark.slow]


def _closed_port() -> int:
    """A loopback port with nothing listening (bound and released: connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(url: str, method: str, path: str, body: bytes | None = None) -> tuple[int, str, bytes]:
    host, _, port = url.removeprefix("http://").partition(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body, headers)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        conn.close()


WARM = [
    node("template-node-for-a10-x1", [gpu("GPU-a"), gpu("GPU-b", index=1)]),
    node("template-node-for-small", [gpu("GPU-c", devmem=4096)]),
]


def _filter_body() -> bytes:
    return orjson.dumps(
        {"Pod": pod("p", gpumem=8000, uid="uid-fault"), "Nodes": {"metadata": {}, "items": WARM}}
    )


@pytest.mark.django_db
def test_postgres_unreachable_extender_answers_readyz_503_sessions_clean_503(client):
    """Only the extender's warm path works without a database; everything else says 503, never 500."""
    expected = client.post("/filter-simulation", _filter_body(), content_type="application/json").content
    assert orjson.loads(expected)["FailedNodes"] == {"template-node-for-small": "1/1 CardInsufficientMemory"}

    dead_db = f"postgres://postgres@127.0.0.1:{_closed_port()}/hami_sim_unreachable"
    proc, url, cleanup = start(dead_db, workers=1, threads=2)
    try:
        status, _, body = _call(url, "POST", "/filter-simulation", _filter_body())
        assert status == 200 and body == expected, body[:300]
        status, _, body = _call(url, "POST", "/prioritize-simulation", _filter_body())
        assert status == 200 and [p["Host"] for p in orjson.loads(body)] == ["template-node-for-a10-x1"]

        assert _call(url, "GET", "/healthz")[0] == 200
        status, ctype, body = _call(url, "GET", "/readyz")
        assert status == 503 and ctype.startswith("application/json")
        assert orjson.loads(body)["status"] == "not ready"

        for method, path, payload in [
            ("POST", "/api/v1/sessions", b"{}"),
            ("GET", "/api/v1/sessions/abc", None),
            ("POST", "/api/v1/sessions/abc/placements", orjson.dumps({"pod": pod("p"), "node": WARM[0]})),
            ("POST", "/api/v1/sessions/abc/fork", b""),
            ("GET", "/api/v1/node-groups/", None),
            ("GET", "/api/v1/decisions/", None),
        ]:
            status, ctype, body = _call(url, method, path, payload)
            assert status == 503, (method, path, status, body[:300])
            assert ctype.startswith("application/json"), (method, path, ctype)
            assert "database" in orjson.loads(body)["detail"].lower()
        # the session-scoped extender verbs keep the extender's shape: 200 with Error / []
        status, _, body = _call(url, "POST", "/sessions/abc/filter-simulation", good_filter_body())
        assert status == 200 and orjson.loads(body)["Error"]
        status, _, body = _call(url, "POST", "/sessions/abc/prioritize-simulation", good_filter_body())
        assert status == 200 and orjson.loads(body) == []
        # and after all those failures the warm path still answers, from the same process
        status, _, body = _call(url, "POST", "/filter-simulation", _filter_body())
        assert status == 200 and body == expected
        assert proc.poll() is None
    finally:
        cleanup()


def test_broker_down_extender_and_sessions_keep_answering(child_database_url):
    """No request path waits on Celery: with the broker gone, simulation works as before."""
    dead_broker = f"redis://127.0.0.1:{_closed_port()}/9"
    proc, url, cleanup = start(
        child_database_url, workers=1, threads=2, extra_env={"CELERY_BROKER_URL": dead_broker}
    )
    try:
        status, _, body = _call(url, "POST", "/filter-simulation", _filter_body())
        assert status == 200 and orjson.loads(body)["Error"] == ""
        status, _, body = _call(url, "POST", "/api/v1/sessions", b'{"name": "no-broker"}')
        assert status == 201, body
        sid = orjson.loads(body)["id"]
        placement = orjson.dumps({"pod": pod("p1", gpumem=20000, uid="u1"), "node": WARM[0]})
        status, _, body = _call(url, "POST", f"/api/v1/sessions/{sid}/placements", placement)
        assert status == 201, body
        # the session remembers the placement: a second 20000 MiB pod must go to the other GPU
        second = orjson.dumps(
            {"pod": pod("p2", gpumem=20000, uid="u2"), "nodeName": WARM[0]["metadata"]["name"]}
        )
        status, _, body = _call(url, "POST", f"/api/v1/sessions/{sid}/placements", second)
        assert status == 201, body
        third = orjson.dumps(
            {"pod": pod("p3", gpumem=20000, uid="u3"), "nodeName": WARM[0]["metadata"]["name"]}
        )
        status, _, body = _call(url, "POST", f"/api/v1/sessions/{sid}/placements", third)
        assert status == 422 and "CardInsufficientMemory" in orjson.loads(body)["reason"]
        status, _, body = _call(url, "POST", f"/sessions/{sid}/filter-simulation", _filter_body())
        assert status == 200 and orjson.loads(body)["Nodes"] is None
        estimate = orjson.dumps(
            {
                "pods": [{"pod": pod("e", gpumem=20000), "count": 3}],
                "nodeGroups": [{"name": "x", "template": WARM[0]}],
            }
        )
        status, _, body = _call(url, "POST", "/api/v1/estimate", estimate)
        assert status == 200, body
        assert orjson.loads(body)["options"][0]["nodeCount"] == 2
        assert _call(url, "GET", "/readyz")[0] == 200  # readiness does not depend on Celery
        assert proc.poll() is None
    finally:
        cleanup()


def _raw(url: str, payload: bytes, *, read: bool = True) -> bytes:
    host, _, port = url.removeprefix("http://").partition(":")
    with socket.create_connection((host, int(port)), timeout=15) as s:
        s.sendall(payload)
        if not read:
            return b""
        s.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


#: the malformed request nginx answers without a status line (HTTP/0.9 has none)
NO_STATUS_LINE = ("http-0.9",)


def test_malformed_http_is_refused_and_the_server_keeps_answering(child_database_url):
    """Broken HTTP below the application (what a confused proxy or a port scanner sends)."""
    proc, url, cleanup = start(child_database_url, workers=1, threads=2)
    body = _filter_body()
    good = _call(url, "POST", "/filter-simulation", body)
    try:
        cases = {
            "content-length-not-a-number": b"POST /filter-simulation HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}",
            "negative-content-length": b"POST /filter-simulation HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{}",
            "body-shorter-than-declared": b'POST /filter-simulation HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"Pod":',
            "request-line-garbage": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 TLS hello on a plain port\r\n\r\n",
            "huge-header": b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n",
            "too-many-headers": b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
            + b"".join(b"X-%d: 1\r\n" % i for i in range(150))
            + b"\r\n",
            "request-line-too-long": b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
            "chunked-garbage": b"POST /filter-simulation HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
            "http-0.9": b"GET /healthz\r\n\r\n",
        }
        for name, payload in cases.items():
            answer = _raw(url, payload)
            status_line = answer.split(b"\r\n", 1)[0]
            assert not status_line.startswith(b"HTTP/1.1 5") and not status_line.startswith(b"HTTP/1.0 5"), (
                name,
                answer[:300],
            )
            if status_line.startswith(b"HTTP/1.1 200"):  # what the app says to what reached it:
                # a broken body, the extender says so; 150 header fields are within the stack's
                # limits (nginx bounds the head in bytes), so /healthz answers
                said = (
                    b'"status": "ok"' if payload.startswith(b"GET /healthz ") else b"malformed extender args"
                )
                assert said in answer, (name, answer[-300:])
            elif not answer:
                # nginx closed the connection without an answer: it refused the request, or saw our
                # half-close before the app's answer (on a busy machine, either comes first)
                pass
            elif not status_line.startswith(b"HTTP/"):
                assert name in NO_STATUS_LINE, (name, answer[:300])  # HTTP/0.9 has no status line
            else:
                assert status_line.split()[1][:1] == b"4", (name, status_line)
            # and the next well-formed request gets the right answer
            assert _call(url, "POST", "/filter-simulation", body) == good, name
        # a client that opens connections and goes away mid-request does not wedge the workers
        for _ in range(20):
            _raw(
                url,
                b"POST /filter-simulation HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{",
                read=False,
            )
        assert _call(url, "POST", "/filter-simulation", body) == good
        assert proc.poll() is None
    finally:
        cleanup()
