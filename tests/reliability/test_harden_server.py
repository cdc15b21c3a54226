"""Slow clients cannot hold the production server's (gunicorn's) threads.

The server runs as the web pod does (nginx in front of gunicorn with one worker and one thread).
Slow clients keep sending a header line (or a body byte) every half second; meanwhile ``/healthz``
must be answered as usual, and nginx closes each slow client: a head still incomplete at its
deadline (``client_header_timeout``, however much keeps trickling in), a body that stops arriving
(``client_body_timeout`` between two reads). And with both
production listeners running as deployed (web: TLS; extender: mTLS, each its own Deployment), slow
clients on the web listener leave the extender's readiness untouched. The client timeouts below only
detect a hang; nothing asserts how fast an answer came.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import subprocess
import threading

import orjson
import pytest

from hami_sim.server.nginx import Limits
from hami_sim.server.serve import start_server, stop_server
from tests.deploy.conftest import Pki, server_database_url  # noqa: F401 (a fixture, used by name)

pytestmark = [pytest.mark.slow]

SHORT = Limits(header_timeout=4, body_timeout=4)  # the production limits with shorter deadlines


@pytest.fixture
def one_thread_server(child_database_url):
    env = {"HAMI_SIM_THREADS": "1", "LOG_LEVEL": "WARNING", "DECISION_RECORDING": "off"}
    if child_database_url:
        env["DATABASE_URL"] = child_database_url
    proc, url = start_server(
        workers=1, env=env, limits=SHORT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
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
    """``clients`` connections that send ``first`` and then ``piece`` every ``every`` seconds until
    stopped (over TLS with ``tls``)."""

    def __init__(
        self,
        port: int,
        first: bytes,
        piece: bytes,
        clients: int = 4,
        every: float = 0.5,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(clients)]
        if tls is not None:
            self.socks = [tls.wrap_socket(s, server_hostname="localhost") for s in self.socks]
        for s in self.socks:
            s.sendall(first)
        self.piece = piece
        self.every = every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            for s in self.socks:
                with contextlib.suppress(OSError):  # the server closed it
                    s.sendall(self.piece)

    def answers(self, keep_sending: bool = True) -> list[bytes]:
        """What the server finally said to each slow client before it closed the connection (b""
        for nothing: nginx closes a connection whose request it stopped waiting for without an
        answer). They keep trickling until then, unless ``keep_sending`` is False."""
        if not keep_sending:
            self.stop.set()
        out = []
        for s in self.socks:
            s.settimeout(30)  # a hang detector: only a connection the server never closes gets here
            try:
                out.append(s.recv(200))
            except (ConnectionResetError, BrokenPipeError):
                out.append(b"")
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
    assert answers == [b""] * 4  # closed at the head's deadline, however much kept arriving


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
        answers = slow.answers(keep_sending=False)
    assert answers == [b""] * 4  # closed once the body stopped arriving


def test_a_complete_request_after_a_slow_start_is_answered(one_thread_server):
    """nginx only waits; a client that is slow but finishes in time gets its normal answer."""
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


# -- the extender's readiness does not depend on the web listener --------------------------------------

PRODUCTION_SETTINGS = {
    "SECRET_KEY": "test-" + "k" * 60,
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "HAMI_SIM_CLIENT_IDENTITIES": "cluster-autoscaler.kube-system",
    "HAMI_SIM_HTTPS": "true",
    "DECISION_RECORDING": "off",
    "LOG_LEVEL": "WARNING",
}


@pytest.fixture
def production_listeners(tmp_path, transactional_db, server_database_url):  # noqa: F811 (imported)
    """Both listeners as deploy/base runs them, one worker and one thread each: the web listener
    (TLS, no client certificate) and the extender listener (mTLS). Yields (pki, web port, extender port)."""
    pki = Pki(tmp_path)
    env = {**PRODUCTION_SETTINGS, "DATABASE_URL": server_database_url, "HAMI_SIM_THREADS": "1"}
    web, web_url = start_server(
        cert=pki.server_cert,
        key=pki.server_key,
        workers=1,
        env={**env, "HAMI_SIM_LISTENER": "web"},
        limits=Limits(header_timeout=6),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        extender, extender_url = start_server(
            cert=pki.server_cert,
            key=pki.server_key,
            client_ca=pki.ca_cert,
            workers=1,
            env={**env, "HAMI_SIM_LISTENER": "extender"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except BaseException:
        stop_server(web)
        raise
    try:
        yield pki, int(web_url.rsplit(":", 1)[1]), int(extender_url.rsplit(":", 1)[1])
    finally:
        stop_server(extender)
        stop_server(web)


def _extender_readyz(pki: Pki, port: int) -> tuple[int, dict]:
    """``GET /readyz`` on the extender listener with Cluster Autoscaler's client certificate."""
    ctx = ssl.create_default_context(cafile=pki.ca_cert)
    ctx.load_cert_chain(pki.client_pem)
    conn = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=20)  # a hang detector
    try:
        conn.request("GET", "/readyz")
        response = conn.getresponse()
        return response.status, orjson.loads(response.read())
    finally:
        conn.close()


def _accepts(port: int) -> bool:
    """What the extender's liveness probe does (kubelet has no client certificate): a TCP connect."""
    with socket.create_connection(("127.0.0.1", port), timeout=20):
        return True


def test_slow_headers_on_the_web_listener_leave_the_extender_ready(production_listeners):
    """Item 4 as reported: 4 TLS connections to the web listener sending one header every 2 s. The
    extender listener, its own process (its own Deployment in deploy/), keeps answering its readiness
    endpoint and its probe's TCP connect meanwhile."""
    pki, web_port, extender_port = production_listeners
    assert _extender_readyz(pki, extender_port)[0] == 200  # warm
    slow = _Trickle(
        web_port,
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n",
        b"X-Slow: 1\r\n",
        every=2.0,
        tls=ssl.create_default_context(cafile=pki.ca_cert),
    )
    try:
        answers = [_extender_readyz(pki, extender_port) for _ in range(3)]
        assert _accepts(extender_port)
    finally:
        slow_answers = slow.answers()
    assert answers == [(200, {"status": "ready", "checks": {"database": "ok", "migrations": "ok"}})] * 3
    assert slow_answers == [b""] * 4  # the web side held them, then closed them at the head's deadline


# -- a production listener never starts with demo defaults --------------------------------------------


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"HAMI_SIM_LISTENER": "web", "ALLOWED_HOSTS": "hami-sim.example"}, "not the demo key"),
        ({"HAMI_SIM_LISTENER": "web", "SECRET_KEY": "s" * 64}, "ALLOWED_HOSTS"),
        (
            {"HAMI_SIM_LISTENER": "extender", "SECRET_KEY": "s" * 64, "ALLOWED_HOSTS": "hami-sim"},
            "unix socket",
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

    from hami_sim.server.serve import gunicorn_argv

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
