"""No connection holds a worker: nginx reads every request whole before gunicorn sees it.

The production stack (nginx in front of gunicorn with one worker and ONE thread, so a single held
connection would be visible) gets four slow clients of each kind the hardening probes used: a
chunked body sent a chunk at a time, a large ``Content-Length`` sent a kilobyte at a time, and more
than 128 KiB of headers followed by a trickle of more. Meanwhile ``/healthz`` and the extender's
``/filter-simulation`` must be answered as usual, and every slow client must be refused: a head
over 128 KiB is a ``431`` at once, a body that stops arriving is closed once
``client_body_timeout`` (4 s here) passes without a byte. Bodies announced over the limit are a
``413`` before any byte of them is read, and a client that is slow but complete in time gets its
normal answer, chunked or not. The clients' socket timeouts only detect a hang; nothing asserts how
fast an answer came.
"""

from __future__ import annotations

import http.client
import socket
import subprocess

import orjson
import pytest

from hami_sim.server.nginx import Limits
from hami_sim.server.serve import start_server, stop_server
from tests.factories import extender_args, gpu, node, pod

from .test_harden_server import _healthz, _Trickle

pytestmark = [pytest.mark.slow]

DEADLINE = 4
# CA's template nodes: answered without the database (this server has none it could read)
NODES = [node("template-node-for-a10-x1", [gpu("GPU-a"), gpu("GPU-b", index=1)])]


def good_filter_body() -> bytes:
    return extender_args(pod("p", gpumem=8000, uid="uid-deadline"), NODES)


@pytest.fixture(scope="module")
def one_thread_server():
    env = {"HAMI_SIM_THREADS": "1", "LOG_LEVEL": "WARNING", "DECISION_RECORDING": "off"}
    limits = Limits(header_timeout=DEADLINE, body_timeout=DEADLINE)
    proc, url = start_server(
        workers=1, env=env, limits=limits, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    port = int(url.rsplit(":", 1)[1])
    assert _healthz(port) == 200  # warm: the first request imports the rest of Django
    yield port
    stop_server(proc)


def _filter(port: int, body: bytes | None = None) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)  # a hang detector
    try:
        conn.request("POST", "/filter-simulation", body or good_filter_body(), {"Host": "localhost"})
        response = conn.getresponse()
        assert response.status == 200
        return orjson.loads(response.read())
    finally:
        conn.close()


def _post_head(path: str, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: localhost", "Content-Type: application/json", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


PADDING = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * 1200) for i in range(110))  # 130 KiB of valid headers

# (first bytes, what follows every 0.5 s, how the server ends it: a status line, or b"" for closed)
SLOW_CLIENTS = {
    "chunked body, a chunk every 0.5 s": (
        _post_head("/filter-simulation", "Transfer-Encoding: chunked") + b"1\r\n{\r\n",
        b"1\r\n \r\n",
        b"",
    ),
    "50 MB Content-Length, 1 KiB every 0.5 s": (
        _post_head("/filter-simulation", "Content-Length: 50000000") + b"{",
        b" " * 1024,
        b"",
    ),
    "chunked body to the REST API": (
        _post_head("/api/v1/estimate", "Transfer-Encoding: chunked") + b"1\r\n{\r\n",
        b"1\r\n \r\n",
        b"",
    ),
    "130 KiB of headers, then one more every 0.5 s": (
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + PADDING,
        b"X-Slow: 1\r\n",
        b"HTTP/1.1 431",
    ),
}


@pytest.mark.parametrize("kind", list(SLOW_CLIENTS))
def test_slow_clients_hold_no_thread_and_are_refused(one_thread_server, kind):
    port = one_thread_server
    first, piece, refusal = SLOW_CLIENTS[kind]
    expected = _filter(port)
    slow = _Trickle(port, first, piece, clients=4)
    try:
        assert [_healthz(port) for _ in range(3)] == [200] * 3
        assert [_filter(port) for _ in range(3)] == [expected] * 3
    finally:
        answers = slow.answers(keep_sending=False)  # a body is waited for while it keeps coming
    assert [a[: len(refusal)] for a in answers] == [refusal] * 4, answers
    assert _healthz(port) == 200


@pytest.mark.parametrize(("path", "key"), [("/filter-simulation", "error"), ("/api/v1/estimate", "detail")])
def test_a_body_announced_over_the_limit_is_a_json_413_before_it_is_sent(one_thread_server, path, key):
    with socket.create_connection(("127.0.0.1", one_thread_server), timeout=20) as s:
        s.sendall(_post_head(path, f"Content-Length: {10**12}"))
        answer = s.recv(4096)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and b"Connection: close" in head, answer
    assert "exceeds the limit" in orjson.loads(body)[key]


def _chunked(body: bytes, size: int) -> list[bytes]:
    """``body`` in chunks of ``size`` bytes, each its own send, then the last chunk."""
    parts = [
        b"%x;ext=1\r\n%s\r\n" % (len(body[i : i + size]), body[i : i + size])
        for i in range(0, len(body), size)
    ]
    return [*parts, b"0\r\nX-Trailer: t\r\n\r\n"]


@pytest.mark.parametrize("size", [1, 7, 4096, 1 << 20])
def test_a_chunked_request_complete_in_time_gets_its_answer(one_thread_server, size):
    port = one_thread_server
    body = good_filter_body()
    expected = _filter(port, body)
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(_post_head("/filter-simulation", "Transfer-Encoding: chunked", "Connection: close"))
        for part in _chunked(body, size)[:200]:
            s.sendall(part)
        if len(body) > 200 * size:
            s.sendall(b"".join(_chunked(body, size)[200:]))
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    head, _, content = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), answer[:300]
    assert orjson.loads(content) == expected
