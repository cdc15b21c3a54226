"""Hostile requests: every probe of the corpus answered with its clear 4xx, through Django's client.

The same probes run against gunicorn in ``test_gunicorn_corpus.py``; behaviour that
needs more than one request (throttles, caps, retention, start-up refusals) has its own tests below
and in the other ``test_harden_*.py`` files.
"""

from __future__ import annotations

import pytest

from .corpus import HARDENING, Probe, row_counts

pytestmark = [pytest.mark.api, pytest.mark.django_db]


@pytest.fixture
def clients(client, django_user_model, make_probe_world):
    """A Django test client per ``Probe.auth``."""
    from django.test import Client

    viewer, operator = make_probe_world
    by_auth = {"anon": client}
    for name, user in (("viewer", viewer), ("operator", operator)):
        logged_in = Client()
        logged_in.force_login(user)
        by_auth[name] = logged_in
    return by_auth


def send(client, probe: Probe):
    if isinstance(probe.body, dict):  # an HTML form
        return client.generic(
            probe.method,
            probe.path,
            _urlencode(probe.body),
            content_type="application/x-www-form-urlencoded",
        )
    return client.generic(probe.method, probe.path, probe.body, content_type=probe.content_type)


def _urlencode(form: dict) -> str:
    from urllib.parse import urlencode

    return urlencode(form, doseq=True)


@pytest.mark.parametrize("probe", HARDENING, ids=lambda p: f"item{p.item}-{p.id}")
def test_probe_gets_its_clear_refusal_and_changes_nothing(clients, probe):
    before = row_counts()
    response = send(clients[probe.auth], probe)
    assert response.status_code in probe.statuses, response.content[:500]
    assert probe.expect.lower() in response.content.decode(errors="replace").lower()
    if response.status_code >= 400:
        assert row_counts() == before


# -- writes need the model permission, not just a login -------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/v1/node-groups/", {"name": "new-group"}),
        ("PATCH", "/api/v1/node-groups/gpu-a10/", {"description": "edited"}),
        ("DELETE", "/api/v1/node-groups/gpu-a10/", None),
        ("POST", "/api/v1/device-profiles/", {"node_group": "gpu-a10", "vendor": "NVIDIA", "devices": []}),
        ("DELETE", "/api/v1/device-profiles/{profile}/", None),
    ],
)
def test_a_login_or_token_without_the_role_cannot_write(make_probe_world, method, path, body):
    import orjson
    from rest_framework.test import APIClient

    from profiles.models import DeviceProfile
    from tests.factories.models import TokenFactory

    viewer, _ = make_probe_world
    path = path.format(profile=DeviceProfile.objects.get().pk)
    for auth in ("session", "token"):
        api = APIClient()
        if auth == "session":
            api.force_login(viewer)
        else:
            api.credentials(HTTP_AUTHORIZATION=f"Token {TokenFactory(user=viewer).key}")
        before = row_counts()
        response = api.generic(
            method, path, orjson.dumps(body) if body else b"", content_type="application/json"
        )
        assert response.status_code == 403, (auth, response.content)
        assert row_counts() == before
        assert api.get("/api/v1/node-groups/gpu-a10/").status_code == 200  # reading stays open


def test_operators_group_exists_with_catalog_permissions_and_operators_can_write(make_probe_world):
    from django.contrib.auth.models import Group
    from rest_framework.test import APIClient

    perms = set(Group.objects.get(name="operators").permissions.values_list("codename", flat=True))
    assert {"add_nodegroup", "change_nodegroup", "delete_nodegroup", "change_deviceprofile"} <= perms
    _, operator = make_probe_world
    api = APIClient()
    api.force_login(operator)
    response = api.patch("/api/v1/node-groups/gpu-a10/", {"description": "edited"}, format="json")
    assert response.status_code == 200, response.content
    assert api.delete("/api/v1/node-groups/gpu-a10/").status_code == 204


def test_demo_admin_is_an_operator():
    from django.contrib.auth import get_user_model

    from hami_sim.server.demo import Demo, create_admin

    create_admin(Demo())
    admin = get_user_model().objects.get(username=Demo().user)
    assert admin.groups.filter(name="operators").exists()


# -- wrong admin passwords lock the login out ------------------------------------------------------------


def test_repeated_wrong_admin_passwords_are_locked_out_even_with_the_right_one(client, empty_cache):
    from tests.factories.models import UserFactory

    viewer = UserFactory(username="probe-staff", password="probe-viewer-pw-1", is_staff=True)
    statuses = [
        client.post("/admin/login/", {"username": viewer.username, "password": f"wrong-{i}"}).status_code
        for i in range(8)
    ]
    assert statuses[:5] == [200] * 5  # the form again, with its error
    assert statuses[5:] == [429] * 3
    locked = client.post("/admin/login/", {"username": viewer.username, "password": "probe-viewer-pw-1"})
    assert locked.status_code == 429 and b"Too many failed logins" in locked.content
    assert "_auth_user_id" not in client.session
    empty_cache.clear()  # the window has passed
    ok = client.post("/admin/login/", {"username": viewer.username, "password": "probe-viewer-pw-1"})
    assert ok.status_code in (200, 302) and client.session.get("_auth_user_id") == str(viewer.pk)


def test_many_names_from_one_address_lock_the_address_out(client, empty_cache):
    statuses = {
        client.post("/admin/login/", {"username": f"u{i}", "password": "x"}).status_code for i in range(60)
    }
    assert 429 in statuses


# -- growth has bounds -----------------------------------------------------------------------------------


def _create(client, name: str = "s"):
    return client.post("/api/v1/sessions", {"name": name}, content_type="application/json")


def test_live_sessions_are_capped_and_creation_is_rate_limited(client, settings, empty_cache):
    settings.SESSION_MAX_LIVE = 4
    settings.SESSION_QUOTA_PER_IDENTITY = 2  # 2 kept for CA's certificate, 2 for everybody else
    assert [_create(client).status_code for _ in range(3)] == [201, 201, 429]
    assert "live sessions" in _create(client).json()["detail"]
    settings.SESSION_MAX_LIVE = 1000
    settings.SESSION_CREATE_PER_MINUTE = 4
    statuses = [_create(client).status_code for _ in range(3)]
    assert statuses[-1] == 429 and "new sessions this minute" in _create(client).json()["detail"]


def test_a_session_cannot_grow_past_its_placement_and_checkpoint_caps(client, settings):
    import orjson

    from tests.factories import gpu, node, pod

    settings.SESSION_MAX_PLACEMENTS = 2
    settings.SESSION_MAX_CHECKPOINT_ROWS = 6
    sid = _create(client).json()["id"]
    template = node("tmpl-cap", [gpu(f"GPU-c{i}", index=i) for i in range(4)])

    def place(i: int):
        body = {"pod": pod(f"p{i}", gpu_count=1, gpumem=1000, uid=f"uid-cap-{i}"), "node": template}
        return client.post(
            f"/api/v1/sessions/{sid}/placements", orjson.dumps(body), content_type="application/json"
        )

    assert [place(i).status_code for i in range(2)] == [201, 201]
    before = row_counts()
    refused = place(2)
    assert refused.status_code == 409 and "placements" in refused.json()["detail"]
    assert row_counts() == before
    forks = [client.post(f"/api/v1/sessions/{sid}/fork").status_code for _ in range(3)]
    assert forks == [200, 200, 409], forks  # 3 rows per checkpoint: a third would hold 9 > 6


@pytest.mark.parametrize(
    "nodes_sent, listed, expected_rows",
    [
        (3, 256, 3),  # a small call lists every node
        (40, 10, 10 + 2),  # 30 more fold into one row per (verdict, reason): 20 fit, 10 too small
        (400, 10, 10 + 2),  # ten times the nodes, the same row count
    ],
)
def test_a_decision_row_stays_bounded_however_many_nodes_CA_sends(
    client, settings, nodes_sent, listed, expected_rows
):
    from decisions.models import Decision
    from decisions.recorder import flush
    from tests.factories import extender_args, gpu, node, pod

    settings.DECISION_LISTED_NODES = listed
    small = nodes_sent // 3
    nodes = [
        node(f"n{i}", [gpu(f"GPU-f{i}", devmem=2000 if i < small else 24000)]) for i in range(nodes_sent)
    ]
    body = extender_args(pod(f"fold-{nodes_sent}", gpumem=8000, uid=f"uid-fold-{nodes_sent}"), nodes)
    assert client.post("/filter-simulation", body, content_type="application/json").status_code == 200
    flush()
    stored = Decision.objects.get(pod_name=f"fold-{nodes_sent}")
    assert len(stored.nodes) == expected_rows
    assert stored.node_count == nodes_sent and stored.fit_count == nodes_sent - small
    assert sum(n.get("folded", 1) for n in stored.nodes) == nodes_sent  # every node accounted for


def test_decisions_keep_device_detail_for_the_first_nodes_only_and_rows_are_capped(client, settings):

    from decisions.models import Decision
    from decisions.tasks import prune_once
    from tests.factories import extender_args, gpu, node, pod

    settings.DECISION_DETAIL_NODES = 1
    nodes = [node(f"n{i}", [gpu(f"GPU-d{i}")]) for i in range(3)]
    body = extender_args(pod("detail", gpumem=1000, uid="uid-detail"), nodes)
    assert client.post("/filter-simulation", body, content_type="application/json").status_code == 200
    stored = Decision.objects.get(pod_name="detail").nodes
    assert [bool(n["devices"]) for n in stored] == [True, False, False]
    assert [n["fits"] for n in stored] == [True, True, True]  # the verdicts stay
    for i in range(4):
        other = extender_args(pod(f"more-{i}", gpumem=1000 + i, uid=f"uid-more-{i}"), nodes)
        client.post("/filter-simulation", other, content_type="application/json")
    settings.DECISION_MAX_ROWS = 2
    pruned = prune_once()
    assert pruned["decisions"] == 3 and Decision.objects.count() == 2
    assert set(Decision.objects.values_list("pod_name", flat=True)) == {"more-2", "more-3"}


# -- the estimate's time limit ---------------------------------------------------------------------------


def test_an_estimate_past_its_time_limit_says_which_groups_it_did_not_pack():
    from hami_sim.engine.estimate import GroupTemplate, PendingPods, estimate
    from hami_sim.runtime.simulator import get_simulator
    from tests.factories import gpu, node, pod

    group = GroupTemplate("g", node("template-node-for-g", [gpu("GPU-t")]))
    result = estimate(
        get_simulator(), [PendingPods(pod("t", gpumem=1000, uid="uid-t"), 10)], [group], time_limit=-1
    )
    [option] = result.options
    assert option.cut_short and "time limit of -1 s ran out" in option.skipped
    assert result.chosen is None and not option.scheduled


# -- every unsafe method with a session cookie needs the CSRF token ------------------------------------

UNSAFE_WITH_COOKIE = [
    ("POST", "/api/v1/sessions", {"name": "csrf"}),
    ("DELETE", "/api/v1/sessions/{sid}", None),
    ("POST", "/api/v1/sessions/{sid}/placements", {"pod": {}, "nodeName": "n"}),
    ("DELETE", "/api/v1/sessions/{sid}/placements/uid-x", None),
    ("POST", "/api/v1/sessions/{sid}/fork", None),
    ("POST", "/api/v1/sessions/{sid}/revert", None),
    ("POST", "/api/v1/sessions/{sid}/commit", None),
    ("POST", "/api/v1/estimate", {"pods": [], "nodeGroups": []}),
    ("POST", "/api/v1/node-groups/", {"name": "csrf-group"}),
    ("PATCH", "/api/v1/node-groups/gpu-a10/", {"description": "csrf"}),
    ("PUT", "/api/v1/node-groups/gpu-a10/", {"name": "gpu-a10"}),
    ("DELETE", "/api/v1/node-groups/gpu-a10/", None),
    ("POST", "/api/v1/device-profiles/", {"node_group": "gpu-a10"}),
    ("DELETE", "/api/v1/device-profiles/{profile}/", None),
    ("POST", "/filter-simulation", None),
    ("POST", "/prioritize-simulation", None),
    ("POST", "/sessions/{sid}/filter-simulation", None),
    ("POST", "/what-if/", None),
]


@pytest.mark.parametrize(("method", "path", "body"), UNSAFE_WITH_COOKIE, ids=lambda v: str(v)[:40])
def test_unsafe_methods_with_a_session_cookie_need_the_csrf_token(make_probe_world, method, path, body):
    """A foreign page can make the browser send the cookie, never the token: 403, nothing written."""
    import orjson
    from django.test import Client

    from profiles.models import DeviceProfile
    from tests.factories.models import SessionFactory
    from tests.reliability.corpus import good_filter_body

    _, operator = make_probe_world
    sid = SessionFactory(name="csrf-target").pk
    path = path.format(sid=sid, profile=DeviceProfile.objects.get().pk)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(operator)
    payload = good_filter_body() if "simulation" in path else orjson.dumps(body) if body else b""
    before = row_counts()
    response = browser.generic(
        method, path, payload, content_type="application/json", HTTP_ORIGIN="https://evil.example"
    )
    assert response.status_code == 403, (response.status_code, response.content[:300])
    assert b"CSRF" in response.content or b"csrf" in response.content
    assert row_counts() == before


def test_a_logged_in_browser_with_the_csrf_token_still_creates_sessions(make_probe_world):
    from django.middleware.csrf import _get_new_csrf_string
    from django.test import Client

    _, operator = make_probe_world
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(operator)
    token = _get_new_csrf_string()
    browser.cookies["csrftoken"] = token
    response = browser.post(
        "/api/v1/sessions", {"name": "ok"}, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 201, response.content
