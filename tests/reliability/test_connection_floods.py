"""Anonymous connections cannot take ``/healthz`` away from the kubelet.

The production server (``start_server``: nginx in front of gunicorn with ONE worker and ONE thread, so
a single held thread would show) gets the two attacks the third hardening round found against the
hand-written front it replaced: four connections announcing a ``Content-Length`` of 16 digits and
trickling a body, and 2,000 idle connections (some with half a request head). Meanwhile
``/healthz`` must be answered within the kubelet's probe timeout (``timeoutSeconds: 5`` on the web
and extender pods in ``deploy/base``): that timeout is the probe's contract, not a speed target.
A body announced over the limit is refused at once, however many digits it has.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import subprocess

import pytest

from hami_sim.server.serve import start_server, stop_server

from .test_harden_server import _Trickle

pytestmark = [pytest.mark.slow]

PROBE_TIMEOUT = 5  # deploy/base/{web,extender}.yaml: the kubelet gives up on /healthz after 5 s
IDLE = 2000  # idle connections held open at once (bounded: the test opens no more)


@pytest.fixture(scope="module")
def one_thread_server():
    env = {"HAMI_SIM_THREADS": "1", "LOG_LEVEL": "ERROR", "DECISION_RECORDING": "off"}
    proc, url = start_server(workers=1, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = int(url.rsplit(":", 1)[1])
    assert _probe(port, timeout=60) == 200  # warm: the first request imports the rest of Django
    yield port
    stop_server(proc)


def _probe(port: int, timeout: float = PROBE_TIMEOUT) -> int:
    """What the kubelet's httpGet probe does: a new connection, ``GET /healthz``, its timeout."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/healthz", headers={"Host": "localhost"})
        return conn.getresponse().status
    finally:
        conn.close()


def _head(length: str, path: str = "/filter-simulation") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n{{"
    ).encode()


@pytest.mark.parametrize(
    "length",
    [
        "0000000000000100",  # 16 digits, 100 bytes: the body never completes
        "00000000000000000000000000100",  # 29 digits
    ],
)
def test_a_long_content_length_keeps_the_read_deadline(one_thread_server, length):
    port = one_thread_server
    slow = _Trickle(port, _head(length), b" ", clients=4, every=1.0)
    try:
        assert [_probe(port) for _ in range(4)] == [200] * 4
    finally:
        slow.answers()  # each slow client is closed by the server (a hang would fail here)
    assert _probe(port) == 200


@pytest.mark.parametrize("length", ["1000000000000000", "99999999999999999999999"])
def test_a_body_announced_over_the_limit_is_refused_however_many_digits(one_thread_server, length):
    with socket.create_connection(("127.0.0.1", one_thread_server), timeout=20) as s:
        s.sendall(_head(length))
        answer = s.recv(4096)
    assert answer.split(b" ", 2)[1] in (b"413", b"400"), answer[:200]


def test_many_idle_connections_do_not_starve_healthz(one_thread_server):
    port = one_thread_server
    idle: list[socket.socket] = []
    try:
        for i in range(IDLE):
            s = socket.create_connection(("127.0.0.1", port), timeout=20)
            if i % 10 == 0:  # every tenth has sent half a request head
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
            idle.append(s)
        assert [_probe(port) for _ in range(5)] == [200] * 5
    finally:
        for s in idle:
            with contextlib.suppress(OSError):
                s.close()
    assert _probe(port) == 200
