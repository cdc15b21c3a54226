"""Closed by default, and the other 500s (hardening, second round): each probe as it was reported,
against the real URL routing, middleware and views (the server-level repeats are in
``test_closed_by_default_server.py``).

- an unknown ``HAMI_SIM_LISTENER`` refuses to serve; ``check --deploy`` fails on what production must
  not have;
- no route reaches a simulation view past its listener's guards (format suffixes);
- one address cannot lock out every user behind it;
- JSON errors from every API path, Django's own 403/404/500 included;
- a Content-Security-Policy on the dashboard;
- a maximum page size on every list;
- deep JSON in a form field, a NUL in the path, a pod name with ``/``: clear answers, not 500s.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import orjson
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, RequestFactory

from tests.factories.models import DecisionFactory, UserFactory

pytestmark = [pytest.mark.api]

REPO = Path(__file__).resolve().parents[2]


def _json(response) -> dict:
    assert response["Content-Type"] == "application/json", (response.status_code, response.content[:300])
    return orjson.loads(response.content)


# -- an unknown listener name refuses to serve -------------------------------------------------------------


@pytest.mark.parametrize("name", ["Extender", "WEB", "extender ", "mtls", ""])
def test_an_unknown_listener_name_refuses_to_serve(settings, name):
    from hami_sim.project.checks import start_problems

    settings.HAMI_SIM_LISTENER = name
    assert any("is not one of all, extender, web" in p for p in start_problems())
    with pytest.raises(ImproperlyConfigured, match="not one of all, extender, web"):
        Client().get("/api/v1/sessions")  # the middleware chain is built on the first request


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SECRET_KEY", "HAMI_SIM_", "DEBUG"))}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env={**base, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION = {
    "SECRET_KEY": "k" * 64,
    "ALLOWED_HOSTS": "hami-sim.example.com",
    "HAMI_SIM_HTTPS": "true",
    "HAMI_SIM_LISTENER": "web",
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"SECRET_KEY": ""}, "hami_sim.E003"),  # the demo key
        ({"DEBUG": "true"}, "hami_sim.E005"),
        ({"HAMI_SIM_LISTENER": "all"}, "hami_sim.E006"),
        ({"HAMI_SIM_LISTENER": "Extender"}, "hami_sim.E002"),
        # a TCP port: clients would reach it without nginx's mTLS
        ({"HAMI_SIM_LISTENER": "extender", "HAMI_SIM_BIND": "0.0.0.0:8443"}, "hami_sim.E004"),
    ],
)
def test_check_deploy_fails_on_what_production_must_not_have(change, error):
    result = _manage("check", "--deploy", **{**PRODUCTION, **change})
    assert result.returncode != 0, result.stdout + result.stderr
    assert error in result.stderr and "ERROR" in result.stderr, result.stderr[-2000:]


@pytest.mark.slow
def test_an_unknown_listener_stops_every_command():
    result = _manage("migrate", "--check", HAMI_SIM_LISTENER="Extender")
    assert result.returncode != 0 and "HAMI_SIM_LISTENER='Extender'" in result.stderr


# -- format suffixes do not bypass the listener ---------------------------------------------------------------


SUFFIXED = [
    "/api/v1/sessions.json",
    "/api/v1/estimate.json",
    "/api/v1/sessions.api",
    "/api/v1/node-groups.json",
]


@pytest.mark.django_db
@pytest.mark.parametrize("path", SUFFIXED)
def test_format_suffix_routes_are_gone(client, path):
    for response in (client.get(path), client.post(path, b"{}", content_type="application/json")):
        assert response.status_code == 404 and "not found" in _json(response)["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/v1/sessions.json", "/api/v1/estimate.json", "/api/v1/sessions.json/"])
def test_suffixed_simulation_paths_meet_the_web_listeners_guard(settings, path):
    settings.HAMI_SIM_LISTENER = "web"
    response = Client().post(path, b"{}", content_type="application/json")
    assert response.status_code == 403 and "need a logged-in user" in _json(response)["detail"]


# -- login throttling per account and per address ---------------------------------------------------------------


def _login(client: Client, username: str, password: str, address: str) -> int:
    return client.post(
        "/admin/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    ).status_code


@pytest.mark.django_db
def test_one_address_cannot_lock_out_every_user_behind_it(empty_cache):
    for name in ("alice", "bob"):
        UserFactory(username=name, password=f"{name}-pw-123", is_staff=True)
    nat = "10.0.0.1"
    assert _login(Client(), "alice", "alice-pw-123", nat) == 302  # alice works from behind the NAT
    # someone behind the same address guesses many names
    statuses = [_login(Client(), f"guess-{i}", "x", nat) for i in range(60)]
    assert statuses[:50] == [200] * 50 and set(statuses[50:]) == {429}
    assert _login(Client(), "alice", "alice-pw-123", nat) == 302  # known here: still gets in
    assert _login(Client(), "bob", "bob-pw-123", nat) == 429  # never seen here: waits for the window
    assert _login(Client(), "bob", "bob-pw-123", "10.0.0.2") == 302  # the lock is the address's


@pytest.mark.django_db
def test_an_account_is_locked_per_address_and_then_everywhere(empty_cache):
    UserFactory(username="carol", password="carol-pw-123", is_staff=True)
    assert [_login(Client(), "carol", "wrong", "10.1.0.1") for _ in range(6)][-1] == 429
    assert _login(Client(), "carol", "carol-pw-123", "10.1.0.1") == 429  # this address, this account
    assert _login(Client(), "carol", "carol-pw-123", "10.1.0.2") == 302  # elsewhere: fine
    for i in range(50):  # guessing carol's password from many addresses
        _login(Client(), "carol", "wrong", f"10.2.{i // 4}.{i % 4}")
    assert _login(Client(), "carol", "carol-pw-123", "10.1.0.3") == 429  # a new address waits
    assert _login(Client(), "carol", "carol-pw-123", "10.1.0.2") == 302  # her known address does not


# -- JSON errors from every API path ----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("get", "/api/v1/nope/", 404),
        ("get", "/api/v1/nope", 404),
        ("post", "/api/nothing-here", 404),
        ("get", "/api/v1/node-groups/%00/", 400),
        ("get", "/api/v1/sessions/%00", 400),
        ("get", "/api/v1/decisions/999999/", 404),
        ("get", "/api/v1/sessions/not-a-uuid", 404),
        ("get", "/filter-simulation", 405),
        ("put", "/sessions/x/prioritize-simulation", 405),
    ],
)
def test_refusals_on_api_paths_are_json(client, method, path, status):
    response = getattr(client, method)(path)
    assert response.status_code == status
    body = _json(response)
    assert body.get("detail") or body.get("Error") or body.get("error")


def test_djangos_own_403_404_500_and_csrf_answers_are_json_on_api_paths_only():
    from django.urls import get_resolver

    from hami_sim.project.middleware import csrf_failure

    factory = RequestFactory()
    resolver = get_resolver()
    for status, args in ((403, (None,)), (404, (None,)), (500, ())):
        handler = resolver.resolve_error_handler(status)
        for path, json_expected in (
            ("/api/v1/profiles/", True),
            ("/filter-simulation", True),
            ("/nodes/", False),
        ):
            response = handler(factory.get(path), *args)
            assert response.status_code == status
            assert (response["Content-Type"] == "application/json") is json_expected, (status, path)
    response = csrf_failure(factory.post("/api/v1/node-groups/"), reason="CSRF cookie not set.")
    assert response.status_code == 403 and "CSRF cookie not set" in _json(response)["detail"]


# -- a Content-Security-Policy on the dashboard -----------------------------------------------------------------


@pytest.fixture
def operator_client(make_probe_world) -> Client:
    _, operator = make_probe_world
    client = Client()
    client.force_login(operator)
    return client


_NONCE = re.compile(r"script-src 'self' 'nonce-([A-Za-z0-9_-]+)'")


@pytest.mark.parametrize("path", ["/", "/node-groups/gpu-a10/", "/what-if/", "/sessions/", "/decisions/"])
def test_dashboard_pages_carry_a_csp_and_every_inline_script_its_nonce(operator_client, path):
    response = operator_client.get(path)
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert "'unsafe-inline'" not in policy.replace("style-src-attr 'unsafe-inline'", "")
    assert "'unsafe-eval'" not in policy and "frame-ancestors 'none'" in policy
    nonce = _NONCE.search(policy).group(1)
    html = response.content.decode()
    for tag in re.findall(r"<(?:script|style)\b[^>]*>", html):
        assert "src=" in tag or 'type="application/json"' in tag or f'nonce="{nonce}"' in tag, tag
    assert not re.search(r"\son[a-z]+=", html), "inline event handlers cannot run under the policy"
    assert operator_client.get(path)["Content-Security-Policy"] != policy  # a fresh nonce per answer


def test_api_answers_carry_no_dashboard_csp(operator_client):
    assert "Content-Security-Policy" not in operator_client.get("/api/v1/node-groups/")


# -- a maximum page size on every list ----------------------------------------------------------------------------


def test_every_list_api_has_a_capped_page_size(settings):
    from hami_sim.project.rest import LimitOffsetPagination
    from hami_sim.project.urls import router

    settings.API_MAX_PAGE_SIZE = 7
    for prefix, viewset, _ in router.registry:
        if not hasattr(viewset, "list") or getattr(viewset, "one_answer", False):
            continue  # a computed answer (the upgrade comparison) carries its own cap, tested with it
        paginator = viewset.pagination_class
        assert paginator is not None and issubclass(paginator, LimitOffsetPagination), prefix
        assert paginator().max_limit == 7


@pytest.mark.django_db
def test_limit_one_million_on_decisions_is_capped(client, settings):
    settings.API_MAX_PAGE_SIZE = 3
    DecisionFactory.create_batch(5)
    page = _json(client.get("/api/v1/decisions/?limit=1000000"))
    assert page["count"] == 5 and len(page["results"]) == 3 and "limit=3" in page["next"]


# -- the other 500s ------------------------------------------------------------------------------------------------


DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/x-www-form-urlencoded", urlencode({"name": "deep", "match_labels": DEEP})),
        (
            "multipart/form-data; boundary=b",
            f'--b\r\nContent-Disposition: form-data; name="name"\r\n\r\ndeep\r\n'
            f'--b\r\nContent-Disposition: form-data; name="match_labels"\r\n\r\n{DEEP}\r\n--b--\r\n',
        ),
    ],
    ids=["form-encoded", "multipart"],
)
def test_deep_json_in_a_form_field_is_a_400(operator_client, content_type, body):
    from profiles.models import NodeGroup

    before = NodeGroup.objects.count()
    response = operator_client.post("/api/v1/node-groups/", body, content_type=content_type)
    assert response.status_code == 400
    assert "match_labels: JSON nested deeper than" in _json(response)["detail"]
    assert NodeGroup.objects.count() == before


def test_a_form_field_that_merely_starts_with_a_bracket_is_the_fields_own_error(operator_client):
    response = operator_client.post(
        "/api/v1/node-groups/",
        urlencode({"name": "g2", "match_labels": "[not json"}),
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 400 and "nested deeper" not in _json(response)["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/v1/node-groups/%00/", "/node-groups/%00/", "/nodes/a%00b/"])
def test_a_nul_in_the_path_is_a_400(client, path):
    response = client.get(path)
    assert response.status_code == 400


@pytest.mark.parametrize("pod_name", ["team/a/train-0", "", "x?y#z"])
def test_a_decision_page_for_a_pod_name_with_a_slash_works(operator_client, pod_name):
    from django.urls import reverse

    decision = DecisionFactory(pod_name=pod_name)
    assert operator_client.get(f"/decisions/{decision.pk}/").status_code == 200
    pod_page = reverse("dashboard:pod", args=["ml", pod_name])  # what the pages link to
    assert operator_client.get(pod_page)["Location"] == f"/decisions/{decision.pk}/"
