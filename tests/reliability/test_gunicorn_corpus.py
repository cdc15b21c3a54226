"""The whole bad-input corpus against the production server (gunicorn): no 5xx, no hang.

Every case of ``corpus.py`` (extender verbs, session verbs, session API, the hardening probes) is sent
over real HTTP to gunicorn with the production worker. The client timeout only detects a hang (a
frozen worker); nothing asserts how fast an answer came.
"""

from __future__ import annotations

import subprocess
from urllib.parse import urlencode

import orjson
import pytest
import requests

from hami_sim.server.serve import start_server, stop_server

from .corpus import FILTER_DEFINED, FILTER_ERRORS, GOOD_POD, HARDENING, SESSION_ERRORS, SESSION_NODE

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

HANG = 120  # seconds: far beyond any answer; only a stuck worker gets here


def _browser_session(user) -> dict[str, str]:
    """Cookies of a logged-in browser for ``user`` (made in the shared database) plus a CSRF cookie."""
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    store["_auth_user_id"] = str(user.pk)
    store["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    store["_auth_user_hash"] = user.get_session_auth_hash()
    store.create()
    return {"sessionid": store.session_key, "csrftoken": "c" * 32}


@pytest.fixture
def server(child_database_url, make_probe_world):
    if not child_database_url:
        pytest.skip("needs a database the server process can share (PostgreSQL or a SQLite file)")
    env = {"DATABASE_URL": child_database_url, "LOG_LEVEL": "ERROR", "DECISION_RECORDING": "off"}
    proc, url = start_server(workers=2, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    viewer, operator = make_probe_world
    yield url, {"anon": {}, "viewer": _browser_session(viewer), "operator": _browser_session(operator)}
    stop_server(proc)


def _send(url: str, cookies: dict, method: str, path: str, body: bytes | dict, content_type: str):
    headers = {"X-CSRFToken": cookies.get("csrftoken", ""), "Host": "localhost"} if cookies else {}
    if isinstance(body, dict):
        body, content_type = urlencode(body, doseq=True).encode(), "application/x-www-form-urlencoded"
    headers["Content-Type"] = content_type
    return requests.request(method, url + path, data=body, headers=headers, cookies=cookies, timeout=HANG)


def test_no_case_of_the_corpus_gets_a_5xx_or_hangs_on_gunicorn(server):
    url, cookies = server
    created = _send(url, {}, "POST", "/api/v1/sessions", b'{"name": "sweep"}', "application/json")
    assert created.status_code == 201, created.text
    sid = created.json()["id"]
    placed = _send(
        url,
        {},
        "POST",
        f"/api/v1/sessions/{sid}/placements",
        orjson.dumps({"pod": GOOD_POD, "node": SESSION_NODE}),
        "application/json",
    )
    assert placed.status_code == 201, placed.text

    requests_sent: list[tuple[str, str, str, bytes | dict, str, dict]] = []
    for case in [*FILTER_ERRORS, *(c for c, _ in FILTER_DEFINED)]:
        for path in ("/filter-simulation", "/prioritize-simulation", f"/sessions/{sid}/filter-simulation"):
            requests_sent.append((case.id, "POST", path, case.body, case.content_type, {}))
    for case in SESSION_ERRORS:
        path = case.extra.get("path", "/api/v1/sessions/{id}/placements").format(id=sid)
        method = case.extra.get("method", "post").upper()
        requests_sent.append((case.id, method, path, case.body, case.content_type, {}))
    for probe in HARDENING:
        requests_sent.append(
            (probe.id, probe.method, probe.path, probe.body, probe.content_type, cookies[probe.auth])
        )

    server_errors = []
    for name, method, path, body, content_type, jar in requests_sent:
        response = _send(url, jar, method, path, body, content_type)
        if response.status_code >= 500:
            server_errors.append((name, path, response.status_code, response.text[:200]))
    assert server_errors == []
    assert len(requests_sent) >= 3 * len(FILTER_ERRORS) + len(SESSION_ERRORS) + len(HARDENING)
    # and the server still answers a good request
    assert _send(url, {}, "GET", "/healthz", b"", "application/json").status_code == 200
