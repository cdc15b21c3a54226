"""Sessions belong to the identity that made them; quotas per identity keep CA's share free.

Callers as the listeners see them: Cluster Autoscaler's client certificate (the names
``hami_sim.project.proxied`` puts in the WSGI environ from the certificate nginx verified), a logged-in user with no permission, a
token of such a user, and an operator (the ``operators`` group). All go through the real URL
routing, middleware and views.
"""

from __future__ import annotations

import orjson
import pytest
from django.core.cache import cache
from django.test import Client

from simulations.models import SimulationSession
from tests.factories import pod
from tests.factories.models import TokenFactory, UserFactory

from .conftest import a10_node

pytestmark = [pytest.mark.api]

CA = {"hami_sim.client_identities": ("cluster-autoscaler",)}  # CN/SAN from CA's client certificate


class Caller:
    """One identity's JSON client."""

    def __init__(self, client: Client, **environ: object) -> None:
        self.client = client
        self.environ = environ

    def call(self, method: str, path: str, body: object = None) -> tuple[int, dict | None]:
        data = orjson.dumps(body) if body is not None else b""
        response = getattr(self.client, method)(path, data, content_type="application/json", **self.environ)
        if response.status_code != 204:
            assert response["Content-Type"] == "application/json", response.content[:200]
        return response.status_code, orjson.loads(response.content) if response.content else None

    def create(self, **body) -> tuple[int, dict]:
        status, payload = self.call("post", "/api/v1/sessions", body)
        assert payload is not None
        return status, payload


@pytest.fixture
def callers(db) -> dict[str, Caller]:
    cache.clear()  # the per-identity create rate counts in the cache
    viewer, other = UserFactory(username="viewer"), UserFactory(username="other")
    operator = UserFactory(username="operator", roles=["operators"])
    out = {"ca": Caller(Client(), **CA)}
    for name, user in (("viewer", viewer), ("other", other), ("operator", operator)):
        client = Client()
        client.force_login(user)
        out[name] = Caller(client)
    token = TokenFactory(user=viewer)
    out["viewer-token"] = Caller(Client(), HTTP_AUTHORIZATION=f"Token {token.key}")
    return out


def test_a_session_records_who_made_it(callers):
    for name, owner in (
        ("ca", "cert:cluster-autoscaler"),
        ("viewer", "user:viewer"),
        ("viewer-token", "user:viewer"),
        ("operator", "user:operator"),
    ):
        status, body = callers[name].create(name=name)
        assert status == 201 and body["owner"] == owner, body
        assert SimulationSession.objects.get(pk=body["id"]).owner == owner


def _verbs(sid: str) -> list[tuple[str, str, object]]:
    """Every way to read or change a session, as (method, path, body)."""
    place = {"pod": pod("p", uid="p-1"), "node": a10_node()}
    return [
        ("get", f"/api/v1/sessions/{sid}", None),
        ("post", f"/api/v1/sessions/{sid}/placements", place),
        ("delete", f"/api/v1/sessions/{sid}/placements/p-1", None),
        ("post", f"/api/v1/sessions/{sid}/fork", None),
        ("post", f"/api/v1/sessions/{sid}/commit", None),
        ("post", f"/api/v1/sessions/{sid}/fork", None),
        ("post", f"/api/v1/sessions/{sid}/revert", None),
        ("delete", f"/api/v1/sessions/{sid}", None),
    ]


@pytest.mark.parametrize("intruder", ["viewer", "viewer-token", "other"])
def test_another_identity_cannot_read_change_or_delete_cas_session(callers, intruder):
    _, session = callers["ca"].create(name="ca-loop")
    sid = session["id"]
    assert callers["ca"].call("post", f"/api/v1/sessions/{sid}/fork")[0] == 200
    for method, path, body in _verbs(sid):
        status, answer = callers[intruder].call(method, path, body)
        assert status == 403, (method, path, answer)
        assert "belongs to another identity" in answer["detail"]
    _, listing = callers[intruder].call("get", "/api/v1/sessions")
    assert sid not in [s["id"] for s in listing["results"]]
    after = callers["ca"].call("get", f"/api/v1/sessions/{sid}")[1]
    assert (after["revision"], after["depth"], after["placements"]) == (1, 1, [])  # untouched


def test_the_session_verbs_answer_another_identity_in_the_extender_shape(callers):
    _, session = callers["ca"].create()
    args = {"Pod": pod("p"), "Nodes": {"items": [a10_node()]}}
    for verb, refused in (("filter", "Error"), ("prioritize", None)):
        status, body = callers["viewer"].call("post", f"/sessions/{session['id']}/{verb}-simulation", args)
        assert status == 200
        if refused:
            assert "belongs to another identity" in body[refused] and body["Nodes"] is None
        else:
            assert body == []
    status, body = callers["ca"].call("post", f"/sessions/{session['id']}/filter-simulation", args)
    assert status == 200 and body["Error"] == "" and len(body["Nodes"]["items"]) == 1


def test_the_owner_and_an_operator_may_do_everything(callers):
    for actor in ("viewer", "operator"):
        _, session = callers["viewer"].create()
        for method, path, body in _verbs(session["id"]):
            status, answer = callers[actor].call(method, path, body)
            assert status in (200, 201, 204), (actor, method, path, answer)
    _, mine = callers["viewer"].create(name="mine")
    _, ca = callers["ca"].create(name="ca")
    _, listing = callers["operator"].call("get", "/api/v1/sessions")
    assert {s["id"] for s in listing["results"]} >= {mine["id"], ca["id"]}
    _, listing = callers["viewer-token"].call("get", "/api/v1/sessions")
    assert [s["id"] for s in listing["results"]] == [mine["id"]]  # the token is the same user


def test_quota_per_identity_and_cas_reserved_share(callers, settings):
    settings.SESSION_QUOTA_PER_IDENTITY = 3
    settings.SESSION_QUOTA_PER_USER = 3  # (users and tokens have their own, smaller quota by default)
    settings.SESSION_MAX_LIVE = 7  # 3 reserved for the one client identity, 4 shared by the rest
    settings.HAMI_SIM_CLIENT_IDENTITIES = "cluster-autoscaler"
    assert [callers["viewer"].create()[0] for _ in range(4)] == [201, 201, 201, 429]
    status, body = callers["viewer-token"].create()
    assert status == 429 and "SESSION_QUOTA_PER_USER" in body["detail"] and "user:viewer" in body["detail"]
    assert callers["other"].create()[0] == 201
    status, body = callers["other"].create()
    assert status == 429 and "share of SESSION_MAX_LIVE is 4" in body["detail"]
    # everybody else is at the cap: CA still has its own share
    assert [callers["ca"].create()[0] for _ in range(4)] == [201, 201, 201, 429]
    assert SimulationSession.objects.count() == 7
    # deleting frees the owner's quota
    _, listing = callers["viewer"].call("get", "/api/v1/sessions")
    assert callers["viewer"].call("delete", f"/api/v1/sessions/{listing['results'][0]['id']}")[0] == 204
    assert callers["viewer"].create()[0] == 201


def test_create_rate_is_per_identity(callers, settings):
    settings.SESSION_CREATE_PER_MINUTE = 2
    assert [callers["viewer"].create()[0] for _ in range(3)] == [201, 201, 429]
    status, body = callers["viewer"].create()
    assert status == 429 and "this minute" in body["detail"]
    assert [callers["ca"].create()[0] for _ in range(2)] == [201, 201]
