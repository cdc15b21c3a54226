"""Issue 16 item 4 on the production server: slow clients cannot hold gunicorn's threads.

The server runs as the web container does (gunicorn, one worker, one thread). Slow clients keep
sending a header line (or a body byte) every half second; meanwhile ``/healthz`` must be answered
as usual, and the slow clients get ``408`` once their head deadline has passed. The client timeouts
below only detect a hang; nothing asserts how fast an answer came.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import subprocess
import threading

import pytest

from hami_sim.serve import start_server, stop_server

pytestmark = [pytest.mark.slow]


@pytest.fixture
def one_thread_server(child_database_url):
    env = {
        "HAMI_SIM_THREADS": "1",
        "HAMI_SIM_HEADER_TIMEOUT": "4",
        "HAMI_SIM_BODY_TIMEOUT": "4",
        "LOG_LEVEL": "WARNING",
        "DECISION_RECORDING": "off",
    }
    if child_database_url:
        env["DATABASE_URL"] = child_database_url
    proc, url = start_server(workers=1, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = int(url.rsplit(":", 1)[1])
    assert _healthz(port) == 200  # warm: the first request imports the rest of Django
    yield port
    stop_server(proc)


def _healthz(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)  # a hang detector, not a benchmark
    try:
        conn.request("GET", "/healthz", headers={"Host": "localhost"})
        return conn.getresponse().status
    finally:
        conn.close()


class _Trickle:
    """``clients`` connections that send ``first`` and then ``piece`` every half second until stopped."""

    def __init__(self, port: int, first: bytes, piece: bytes, clients: int = 4) -> None:
        self.socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(clients)]
        for s in self.socks:
            s.sendall(first)
        self.piece = piece
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.5):
            for s in self.socks:
                with contextlib.suppress(OSError):  # the server closed it
                    s.sendall(self.piece)

    def answers(self) -> list[bytes]:
        """What the server finally said to each slow client (they keep trickling until it does)."""
        out = []
        for s in self.socks:
            s.settimeout(30)
            try:
                out.append(s.recv(200))
            except OSError as exc:
                out.append(repr(exc).encode())
        self.stop.set()
        self.thread.join()
        for s in self.socks:
            s.close()
        return out


def test_slow_headers_cannot_hold_healthz_and_get_408(one_thread_server):
    port = one_thread_server
    slow = _Trickle(port, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n", b"X-Slow: 1\r\n")
    try:
        assert [_healthz(port) for _ in range(3)] == [200, 200, 200]
    finally:
        answers = slow.answers()
    assert all(a.startswith(b"HTTP/1.1 408") for a in answers), answers


def test_slow_body_cannot_hold_healthz(one_thread_server):
    port = one_thread_server
    head = (
        b"POST /filter-simulation HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100000\r\n\r\n{"
    )
    slow = _Trickle(port, head, b" ")
    try:
        assert [_healthz(port) for _ in range(3)] == [200, 200, 200]
    finally:
        answers = slow.answers()
    assert all(a.startswith(b"HTTP/1.1 408") for a in answers), answers


def test_a_complete_request_after_a_slow_start_is_answered(one_thread_server):
    """The front only waits; a client that is slow but finishes in time gets its normal answer."""
    port = one_thread_server
    with socket.create_connection(("127.0.0.1", port)) as s:
        for piece in (
            b"GET /healthz HTTP/1.1\r\n",
            b"Host: localhost\r\n",
            b"Connection: close\r\n",
            b"\r\n",
        ):
            s.sendall(piece)
        s.settimeout(10)
        assert s.recv(100).startswith(b"HTTP/1.1 200")


# -- item 12: a production listener never starts with demo defaults -----------------------------------


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"HAMI_SIM_LISTENER": "web", "ALLOWED_HOSTS": "hami-sim.example"}, "not the demo key"),
        ({"HAMI_SIM_LISTENER": "web", "SECRET_KEY": "s" * 64}, "ALLOWED_HOSTS"),
        (
            {"HAMI_SIM_LISTENER": "extender", "SECRET_KEY": "s" * 64, "ALLOWED_HOSTS": "hami-sim"},
            "HAMI_SIM_TLS_CLIENT_CA",
        ),
        (
            {
                "HAMI_SIM_LISTENER": "extender",
                "SECRET_KEY": "s" * 64,
                "ALLOWED_HOSTS": "hami-sim",
                "HAMI_SIM_CLIENT_IDENTITIES": "",
            },
            "HAMI_SIM_CLIENT_IDENTITIES",
        ),
    ],
)
def test_production_listener_with_unsafe_settings_refuses_to_start(env, reason):
    import os

    from hami_sim.serve import gunicorn_argv

    base = {
        k: v for k, v in os.environ.items() if not k.startswith(("SECRET_KEY", "ALLOWED_HOSTS", "HAMI_SIM_"))
    }
    result = subprocess.run(
        gunicorn_argv(),
        env={**base, "HAMI_SIM_BIND": "127.0.0.1:0", "PYTHONPATH": os.getcwd(), **env},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    )
    assert result.returncode != 0
    assert "refusing to start" in result.stderr and reason in result.stderr, result.stderr[-2000:]
