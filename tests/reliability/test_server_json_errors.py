"""The server's own 4xx answers speak JSON on the API paths, as every view does.

Requests gunicorn refuses before Django sees them (a malformed request line, an invalid header, a
line or a field over gunicorn's limits, a broken chunk, too many headers) and the worker's own
refusals (408 at the request deadline, 431 for a head over 128 KiB, 413 for a body announced over
the limit) reach ``/api/...``, ``/filter-simulation``, ``/prioritize-simulation`` and the session
verbs as ``{"detail": ...}`` (``{"error": ...}`` on the extender verbs, which Go reads as
``Error``), against ``python -m hami_sim.server.serve`` on the production web listener (TLS, a real secret
key, DEBUG off). The dashboard keeps gunicorn's page; a request whose path cannot be read (no
request line) gets it too.
"""

from __future__ import annotations

import socket
import ssl
import subprocess

import orjson
import pytest

from hami_sim.server.front import request_path
from hami_sim.server.serve import start_server, stop_server
from tests.deploy.conftest import Pki

pytestmark = [pytest.mark.slow]

DEADLINE = 3
SETTINGS = {
    "SECRET_KEY": "test-" + "k" * 60,
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "HAMI_SIM_HTTPS": "true",
    "HAMI_SIM_LISTENER": "web",
    "DECISION_RECORDING": "off",
    "LOG_LEVEL": "ERROR",
    "HAMI_SIM_REQUEST_TIMEOUT": str(DEADLINE),
}


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    """(port, TLS client context) of the production web listener."""
    directory = tmp_path_factory.mktemp("jsonerrors")
    pki = Pki(directory)
    env = {**SETTINGS, "DATABASE_URL": f"sqlite:///{directory / 'unused.sqlite3'}"}  # no query is made
    proc, url = start_server(
        cert=pki.server_cert,
        key=pki.server_key,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield int(url.rsplit(":", 1)[1]), ssl.create_default_context(cafile=pki.ca_cert)
    finally:
        stop_server(proc)


def _exchange(web, raw: bytes, wait_close: bool = True) -> tuple[bytes, bytes]:
    """Send ``raw`` as is, read the answer until the server closes; (head, body)."""
    port, ctx = web
    with (
        socket.create_connection(("127.0.0.1", port), timeout=DEADLINE + 20) as plain,
        ctx.wrap_socket(plain, server_hostname="localhost") as s,
    ):
        s.sendall(raw)
        answer = b""
        while True:
            try:
                data = s.recv(65536)
            except (ssl.SSLError, ConnectionResetError):
                break
            if not data:
                break
            answer += data
            if not wait_close and b"\r\n\r\n" in answer:
                break
    head, _, body = answer.partition(b"\r\n\r\n")
    return head, body


def _request(method: str, path: str, *headers: bytes, version: bytes = b"HTTP/1.1") -> bytes:
    line = b"%s %s %s\r\n" % (method.encode(), path.encode(), version)
    return line + b"Host: localhost\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n"


API_PATHS = {
    "/api/v1/estimate": "detail",
    "/api/v1/sessions": "detail",
    "/api/v1/node-groups/": "detail",
    "/filter-simulation": "error",
    "/prioritize-simulation": "error",
    "/sessions/abc/filter-simulation": "error",
}

# (what, raw request for a path, expected status)
MALFORMED = {
    "invalid header name": (lambda p: _request("POST", p, b"Bad Header: x", b"Content-Length: 0"), 400),
    "header without a colon": (lambda p: _request("POST", p, b"NoColonHere", b"Content-Length: 0"), 400),
    "request line over 8190 bytes": (lambda p: _request("GET", p + "?q=" + "a" * 9000), 414),
    "header field over 16 KiB": (lambda p: _request("GET", p, b"X-Big: " + b"b" * 17000), 431),
    "more than 100 headers": (lambda p: _request("GET", p, *(b"X-H%d: 1" % i for i in range(120))), 431),
    "unsupported HTTP version": (lambda p: _request("GET", p, version=b"HTTP/9.9"), 400),
    "lowercase method": (lambda p: _request("gEt", p), 400),
    "broken chunk size": (
        lambda p: (
            _request("POST", p, b"Transfer-Encoding: chunked", b"Content-Type: application/json")
            + b"zz\r\n{}\r\n0\r\n\r\n"
        ),
        400,
    ),
    "Transfer-Encoding with Content-Length": (
        lambda p: _request("POST", p, b"Transfer-Encoding: gzip", b"Content-Length: 2") + b"{}",
        400,
    ),
    "unsupported transfer coding": (lambda p: _request("POST", p, b"Transfer-Encoding: gzip") + b"{}", 400),
    "head over 128 KiB": (
        lambda p: _request("GET", p, *(b"X-Pad-%d: %s" % (i, b"p" * 1200) for i in range(110))),
        431,
    ),
    "body announced over the limit": (lambda p: _request("POST", p, b"Content-Length: 1000000000000"), 413),
}


def _json_error(head: bytes, body: bytes, status: int, key: str) -> str:
    assert head.startswith(b"HTTP/1.1 %d " % status), (head, body[:200])
    assert b"\r\nContent-Type: application/json" in head, head
    payload = orjson.loads(body)
    assert list(payload) == [key] and payload[key], payload
    return payload[key]


@pytest.mark.parametrize("path", list(API_PATHS))
@pytest.mark.parametrize("case", list(MALFORMED))
def test_the_servers_own_refusals_are_json_on_api_paths(web, case, path):
    build, status = MALFORMED[case]
    head, body = _exchange(web, build(path))
    _json_error(head, body, status, API_PATHS[path])


@pytest.mark.parametrize("path", ["/api/v1/estimate", "/filter-simulation"])
def test_a_request_not_sent_in_time_is_a_json_408(web, path):
    head, body = _exchange(web, _request("POST", path, b"Content-Length: 100").rstrip(b"\r\n") + b"\r\n")
    message = _json_error(head, body, 408, API_PATHS[path])
    assert f"within {DEADLINE} s" in message


@pytest.mark.parametrize(
    ("case", "raw", "status"),
    [
        ("invalid header name on the dashboard", _request("GET", "/", b"Bad Header: x"), b"400"),
        ("no request line at all", b"\x16garbage\r\n\r\n", b"400"),
    ],
)
def test_other_paths_keep_gunicorns_page(web, case, raw, status):
    head, _ = _exchange(web, raw)
    assert head.startswith(b"HTTP/1.1 " + status) and b"Content-Type: text/html" in head, head


def test_the_server_keeps_serving_json_after_the_refusals(web):
    head, body = _exchange(web, _request("GET", "/healthz", b"Connection: close"))
    assert head.startswith(b"HTTP/1.1 200"), head


@pytest.mark.parametrize(
    ("head", "path"),
    [
        (b"GET /api/v1/estimate HTTP/1.1\r\n", "/api/v1/estimate"),
        (b"\r\nPOST /filter-simulation?x=1 HTTP/1.1\r\nHost: a\r\n", "/filter-simulation"),
        (b"GET http://h:8443/api/v1/x HTTP/1.1\r\n", "/api/v1/x"),
        (b"GET /%61pi/v1/x HTTP/1.1\r\n", "/api/v1/x"),
        (b"GET /api/v1/est", None),  # the line is incomplete
        (b"GARBAGE\r\n", None),
        (b"GET * HTTP/1.1\r\n", None),
    ],
)
def test_request_path(head, path):
    assert request_path(head) == path
