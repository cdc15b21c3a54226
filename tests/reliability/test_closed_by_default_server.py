"""The session and closed-by-default probes repeated against ``python -m hami_sim.server.serve`` with production
settings: the web listener (TLS, a token of a user with no permissions) and the extender listener
(mTLS, Cluster Autoscaler's client certificate), each its own gunicorn, sharing one database.

Reported: the token created 600 sessions in 5.8 s and CA's own create over mTLS got 429; the token
listed, forked and deleted CA's session; ``/api/v1/sessions.json`` skipped the listener's guard; a
``%00`` path was a 500; an unknown listener name started with the demo key.
"""

from __future__ import annotations

import http.client
import os
import ssl
import subprocess
import sys
import uuid

import orjson
import pytest

from hami_sim.server.serve import gunicorn_argv, start_server, stop_server
from tests.deploy.conftest import REPO, Pki, server_database_url  # noqa: F401 (a fixture, used by name)

pytestmark = [pytest.mark.slow]

SETTINGS = {
    "SECRET_KEY": "test-" + "k" * 60,
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "HAMI_SIM_CLIENT_IDENTITIES": "cluster-autoscaler.kube-system",
    "HAMI_SIM_HTTPS": "true",
    "DECISION_RECORDING": "off",
    "LOG_LEVEL": "WARNING",
    "HAMI_SIM_THREADS": "2",
    "SESSION_QUOTA_PER_IDENTITY": "5",
    "SESSION_QUOTA_PER_USER": "5",
    "SESSION_MAX_LIVE": "12",  # 5 kept for CA's one identity, 7 shared by everybody else
}


@pytest.fixture
def listeners(tmp_path, transactional_db, server_database_url):  # noqa: F811
    """(pki, web port, extender port, token of a user with no permissions)."""
    token = _token_in(server_database_url)
    pki = Pki(tmp_path)
    env = {**SETTINGS, "DATABASE_URL": server_database_url}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    web, web_url = start_server(
        cert=pki.server_cert, key=pki.server_key, env={**env, "HAMI_SIM_LISTENER": "web"}, **quiet
    )
    try:
        extender, extender_url = start_server(
            cert=pki.server_cert,
            key=pki.server_key,
            client_ca=pki.ca_cert,
            env={**env, "HAMI_SIM_LISTENER": "extender"},
            **quiet,
        )
    except BaseException:
        stop_server(web)
        raise
    try:
        yield pki, int(web_url.rsplit(":", 1)[1]), int(extender_url.rsplit(":", 1)[1]), token
    finally:
        stop_server(extender)
        stop_server(web)


def _token_in(database_url: str) -> str:
    """An API token of a new user with no permissions, made by the factories in a child process that
    writes the servers' database (the test's own database is that one only on PostgreSQL)."""
    name = f"nobody-{uuid.uuid4().hex[:8]}"  # the SQLite server database outlives one test
    script = (
        "from tests.factories.models import TokenFactory, UserFactory; "
        f"print(TokenFactory(user=UserFactory(username={name!r})).key)"
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HAMI_SIM_", "SECRET_KEY"))}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=REPO,
        env={**base, "DATABASE_URL": database_url, "PYTHONPATH": str(REPO), "LOG_LEVEL": "ERROR"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


def _call(port: int, ctx: ssl.SSLContext, method: str, path: str, body: bytes = b"", **headers: str):
    conn = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=30)  # a hang detector
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json", **headers})
        response = conn.getresponse()
        raw = response.read()
        assert response.getheader("Content-Type") == "application/json", (response.status, raw[:300])
        return response.status, orjson.loads(raw) if raw else None
    finally:
        conn.close()


def test_a_token_cannot_crowd_out_or_touch_cas_sessions(listeners):
    pki, web, extender, token = listeners
    web_ctx = ssl.create_default_context(cafile=pki.ca_cert)
    ca_ctx = ssl.create_default_context(cafile=pki.ca_cert)
    ca_ctx.load_cert_chain(pki.client_pem)
    auth = {"Authorization": f"Token {token}"}

    status, ca_session = _call(extender, ca_ctx, "POST", "/api/v1/sessions", b"{}")
    assert status == 201 and ca_session["owner"] == "cert:cluster-autoscaler.kube-system"
    sid = ca_session["id"]
    # the token fills its quota, then gets a clear 429
    statuses = [_call(web, web_ctx, "POST", "/api/v1/sessions", b"{}", **auth)[0] for _ in range(7)]
    assert statuses == [201] * 5 + [429] * 2
    # CA keeps creating (its own reserved share)
    assert [_call(extender, ca_ctx, "POST", "/api/v1/sessions", b"{}")[0] for _ in range(4)] == [201] * 4
    # the token can neither read, fork nor delete CA's session, nor see it listed
    for method, path in (
        ("GET", f"/api/v1/sessions/{sid}"),
        ("POST", f"/api/v1/sessions/{sid}/fork"),
        ("DELETE", f"/api/v1/sessions/{sid}"),
    ):
        status, body = _call(web, web_ctx, method, path, **auth)
        assert status == 403 and "belongs to another identity" in body["detail"], (method, path, body)
    _, listing = _call(web, web_ctx, "GET", "/api/v1/sessions?limit=1000000", **auth)
    assert listing["count"] == 5 and sid not in [s["id"] for s in listing["results"]]
    assert _call(extender, ca_ctx, "GET", f"/api/v1/sessions/{sid}")[0] == 200


def test_routes_and_errors_on_the_production_listeners_are_guarded_and_json(listeners):
    pki, web, extender, token = listeners
    web_ctx = ssl.create_default_context(cafile=pki.ca_cert)
    ca_ctx = ssl.create_default_context(cafile=pki.ca_cert)
    ca_ctx.load_cert_chain(pki.client_pem)
    auth = {"Authorization": f"Token {token}"}
    for method, path, headers, status in (
        ("GET", "/api/v1/sessions.json", {}, 403),  # the web listener's guard, not the view
        ("POST", "/api/v1/estimate.json", {}, 403),
        ("GET", "/api/v1/sessions.json", auth, 404),  # no such route
        ("GET", "/api/v1/nope/", {}, 404),
    ):
        assert _call(web, web_ctx, method, path, **headers)[0] == status, (method, path)
    # a NUL in the path: nginx refuses it (400, its own page) before there is a path to route
    conn = http.client.HTTPSConnection("localhost", web, context=web_ctx, timeout=30)  # a hang detector
    try:
        conn.request("GET", "/api/v1/node-groups/%00/")
        assert conn.getresponse().status == 400
    finally:
        conn.close()
    assert _call(extender, ca_ctx, "GET", "/api/v1/sessions.json")[0] == 404
    assert _call(extender, ca_ctx, "GET", "/admin/")[0] == 404


@pytest.mark.parametrize("name", ["Extender", "web2"])
def test_an_unknown_listener_name_refuses_to_start(name):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SECRET_KEY", "HAMI_SIM_"))}
    result = subprocess.run(
        gunicorn_argv(),
        env={**base, "HAMI_SIM_BIND": "127.0.0.1:0", "PYTHONPATH": str(REPO), "HAMI_SIM_LISTENER": name},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode != 0
    assert "refusing to start" in result.stderr and "is not one of all, extender, web" in result.stderr
