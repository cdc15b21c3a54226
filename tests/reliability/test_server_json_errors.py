"""nginx's own 4xx answers speak JSON on the API paths, as every view does.

Requests nginx refuses before the application sees them (an invalid header, a request line or a
field over its buffers, a head over 128 KiB, a broken chunk, a transfer coding it does not speak, a
body announced over the limit) reach ``/api/...``, ``/filter-simulation``, ``/prioritize-simulation``
and the session verbs as ``{"detail": ...}`` (``{"error": ...}`` on the extender verbs, which Go
reads as ``Error``), against the production web listener (nginx with TLS in front of gunicorn, a
real secret key, DEBUG off). The dashboard keeps nginx's page; so does a request whose path cannot
be read (a request line nginx cannot parse, or one longer than its 8 KiB buffer). A request not sent in time is closed without an
answer: nginx stops waiting and says nothing.
"""

from __future__ import annotations

import socket
import ssl
import subprocess

import orjson
import pytest

from hami_sim.server.nginx import Limits
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
        limits=Limits(header_timeout=DEADLINE, body_timeout=DEADLINE),
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

# (what, raw request for a path, expected status). nginx bounds a head by bytes (a field, the line,
# the whole head), not by its number of fields, and drops a header line without a colon.
MALFORMED = {
    "invalid header name": (lambda p: _request("POST", p, b"Bad Header: x", b"Content-Length: 0"), 400),
    "header field over 8 KiB": (lambda p: _request("GET", p, b"X-Big: " + b"b" * 9000), 431),
    "broken chunk size": (
        lambda p: (
            _request("POST", p, b"Transfer-Encoding: chunked", b"Content-Type: application/json")
            + b"zz\r\n{}\r\n0\r\n\r\n"
        ),
        400,
    ),
    "Transfer-Encoding with Content-Length": (
        lambda p: _request("POST", p, b"Transfer-Encoding: chunked", b"Content-Length: 2") + b"0\r\n\r\n",
        400,
    ),
    "unsupported transfer coding": (lambda p: _request("POST", p, b"Transfer-Encoding: gzip") + b"{}", 501),
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
@pytest.mark.parametrize("part", ["head", "body"])
def test_a_request_not_sent_in_time_is_closed_without_an_answer(web, path, part):
    raw = _request("POST", path, b"Content-Length: 100")
    head, body = _exchange(web, raw.rstrip(b"\r\n") + b"\r\n" if part == "head" else raw + b"{")
    assert (head, body) == (b"", b"")


@pytest.mark.parametrize(
    ("case", "raw", "status"),
    [
        ("invalid header name on the dashboard", _request("GET", "/", b"Bad Header: x"), b"400"),
        ("no request line at all", b"\x16garbage\r\n\r\n", b"400"),
        ("unsupported HTTP version", _request("GET", "/api/v1/estimate", version=b"HTTP/9.9"), b"505"),
        ("lowercase method", _request("gEt", "/api/v1/estimate"), b"400"),
        ("request line over 8 KiB", _request("GET", "/api/v1/estimate?q=" + "a" * 9000), b"414"),
    ],
)
def test_other_paths_and_unreadable_request_lines_keep_nginxs_page(web, case, raw, status):
    head, _ = _exchange(web, raw)
    assert head.startswith(b"HTTP/1.1 " + status) and b"Content-Type: text/html" in head, head


def test_the_server_keeps_serving_json_after_the_refusals(web):
    head, body = _exchange(web, _request("GET", "/healthz", b"Connection: close"))
    assert head.startswith(b"HTTP/1.1 200"), head
