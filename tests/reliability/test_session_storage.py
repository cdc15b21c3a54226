"""What one session and one identity may store.

Reported: one session still grew the database by 67.8 MiB, and four identities could fill the
shared 800-session pool for a day. A session's stored JSON (nodes, placements, checkpoints, as
written) is bounded by ``SESSION_MAX_BYTES``: a write past it is a 400 in the API's shape naming
the limit, and nothing changes; reverting or committing a checkpoint gives its bytes back. An
identity other than CA's certificate holds at most ``SESSION_QUOTA_PER_USER`` live sessions (25),
well under the shared pool."""

from __future__ import annotations

import pytest

from tests.factories import gpu_node, pod
from tests.factories.models import TokenFactory, UserFactory
from tests.sessions.conftest import Api

pytestmark = pytest.mark.django_db

CA = {"hami_sim.client_identities": ("cluster-autoscaler",)}


def _stored(sid: str) -> int:
    from simulations.models import SimulationSession

    return SimulationSession.objects.get(pk=sid).stored_bytes


def test_a_session_stops_at_its_byte_limit_with_a_clear_400(client, settings):
    settings.SESSION_MAX_BYTES = 60_000
    api = Api(client)
    sid = api.create()["id"]
    node = gpu_node("tmpl-a10", 8, count=100)  # 800 slots: only the byte limit stops it
    placed = 0
    while True:
        status, body = api.place(sid, pod(f"p-{placed}", gpumem=10, uid=f"u-{placed}"), node)
        if status != 201:
            break
        placed += 1
        assert placed < 800, "never refused"
    assert status == 400 and "SESSION_MAX_BYTES (60000)" in body["detail"], body
    before = api.get(sid)
    assert api.place(sid, pod("again", gpumem=10, uid="u-again"), node)[0] == 400
    assert api.get(sid) == before  # nothing changed
    assert 0 < _stored(sid) <= 60_000

    # a checkpoint copies the session: with the session near its limit, a fork is refused too
    status, body = api.call("post", f"/api/v1/sessions/{sid}/fork")
    assert status == 400 and "SESSION_MAX_BYTES" in body["detail"]
    # removing placements gives their bytes back
    for i in range(placed):
        assert api.call("delete", f"/api/v1/sessions/{sid}/placements/u-{i}")[0] == 200
        if _stored(sid) < 20_000:
            break
    freed = _stored(sid)
    assert freed < 20_000
    assert api.call("post", f"/api/v1/sessions/{sid}/fork")[0] == 200
    assert api.place(sid, pod("after-fork", gpumem=10, uid="u-after"), node)[0] == 201
    assert api.call("post", f"/api/v1/sessions/{sid}/revert")[0] == 200
    assert _stored(sid) == freed  # back to what it stored before the fork


def test_one_identity_holds_a_small_share_of_the_pool(client):
    from hami_sim.project.conf import conf

    api = Api(client)
    token = TokenFactory(user=UserFactory(username="reader")).key
    auth = {"Authorization": f"Token {token}"}
    statuses = [api.call("post", "/api/v1/sessions", {}, **auth)[0] for _ in range(26)]
    assert statuses == [201] * 25 + [429]
    shared = conf().session_max_live - conf().session_quota_per_identity
    assert conf().session_quota_per_user * 8 <= shared  # it takes many identities to fill the pool
    # CA's certificate keeps its own reserved quota
    ca = [
        client.post("/api/v1/sessions", b"{}", content_type="application/json", **CA).status_code
        for _ in range(30)
    ]
    assert ca == [201] * 30
