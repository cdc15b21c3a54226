"""A session created, forked, reverted and committed from the dashboard, and the
demo's seeded session (the sessions page is not empty after ``make demo``)."""

from __future__ import annotations

import re

import pytest

from simulations.models import SimulationSession
from tests.factories.models import SessionFactory, UserFactory

pytestmark = [pytest.mark.django_db]


def _seed(demo_data) -> SimulationSession:
    from hami_sim.server.demo import DEMO_SESSION, Demo, seed_session

    seed_session(Demo())
    seed_session(Demo())  # a second demo start replaces it rather than adding one
    return SimulationSession.objects.get(name=DEMO_SESSION)


def test_demo_seeds_one_session_with_a_checkpoint(client, operator, demo_data):
    session = _seed(demo_data)
    assert (session.depth, session.placements.count(), session.nodes.count()) == (1, 4, 1)
    client.force_login(operator)
    assert session.name in client.get("/sessions/").content.decode()
    html = client.get(f"/sessions/{session.pk}/").content.decode()
    assert "batch-infer-3" in html and 'id="fig-usage"' in html and "fork depth 1" in html


def test_create_fork_revert_commit_from_the_ui(client, operator, demo_data):
    session = _seed(demo_data)
    client.force_login(operator)
    response = client.post("/sessions/", {"name": "from-the-ui", "ttl_seconds": 600})
    created = SimulationSession.objects.get(name="from-the-ui")
    assert response.status_code == 302 and response["Location"] == f"/sessions/{created.pk}/"
    assert f"session {created.pk} created" in client.get(response["Location"]).content.decode()

    # the demo session: revert drops the placement made after the fork, exactly
    url = f"/sessions/{session.pk}/"
    response = client.post(f"{url}revert/", {"revision": session.revision}, follow=True)
    html = response.content.decode()
    assert "revert: checkpoint depth 0" in html and "batch-infer-3" not in html
    session.refresh_from_db()
    assert (session.depth, session.placements.count()) == (0, 3)
    for action, depth in (("fork", 1), ("commit", 0)):
        session.refresh_from_db()
        html = client.post(f"{url}{action}/", {"revision": session.revision}, follow=True).content.decode()
        assert f"{action}: checkpoint depth {depth}" in html


@pytest.mark.parametrize(
    ("action", "revision", "message"),
    [
        ("revert", None, "no checkpoint to revert to: fork first (HTTP 409)"),
        ("commit", None, "no checkpoint to commit: fork first (HTTP 409)"),
        ("fork", "999", "(HTTP 412)"),  # the page was stale: someone else changed the session
    ],
)
def test_refused_actions_say_why_and_change_nothing(client, operator, action, revision, message):
    client.force_login(operator)
    client.post("/sessions/", {"name": "plain", "ttl_seconds": 600})
    session = SimulationSession.objects.get(name="plain")
    data = {"revision": revision} if revision else {}
    html = client.post(f"/sessions/{session.pk}/{action}/", data, follow=True).content.decode()
    assert message in html
    session.refresh_from_db()
    assert (session.depth, session.revision) == (0, 0)


def test_anonymous_demo_visitors_cannot_change_sessions(client, settings):
    settings.DEMO_READ_ONLY = True
    html = client.get("/sessions/").content.decode()
    assert 'id="create-session"' not in html
    response = client.post("/sessions/", {"name": "x", "ttl_seconds": 60})
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert not SimulationSession.objects.exists()


def test_unknown_action_or_session_is_404(client, operator):
    client.force_login(operator)
    client.post("/sessions/", {"name": "s", "ttl_seconds": 60})
    pk = SimulationSession.objects.get().pk
    assert client.post(f"/sessions/{pk}/explode/").status_code == 404
    assert client.post("/sessions/00000000-0000-4000-8000-000000000000/fork/").status_code == 404
    assert client.get(f"/sessions/{pk}/fork/").status_code == 405
    assert re.search(r"Create session", client.get("/sessions/").content.decode())


def test_a_login_without_the_operators_role_cannot_change_sessions(client, db):
    viewer = UserFactory(username="viewer", password="pw-viewer")
    client.force_login(viewer)
    assert 'id="create-session"' not in client.get("/sessions/").content.decode()
    assert client.post("/sessions/", {"name": "x", "ttl_seconds": 60}).status_code == 403
    assert not SimulationSession.objects.exists()
    session = SessionFactory(name="theirs")
    assert 'id="session-actions"' not in client.get(f"/sessions/{session.pk}/").content.decode()
    assert client.post(f"/sessions/{session.pk}/fork/", {"revision": "0"}).status_code == 403
    session.refresh_from_db()
    assert session.depth == 0


@pytest.mark.parametrize(
    "gpumem,node,message",
    [
        (
            "12000",
            "group:gpu-a10",
            r"placed ml/train-0 on template-node-for-gpu-a10-\d+: GPU-\S+ 12000 MiB, 0% cores, revision 1",
        ),
        ("80000", "group:gpu-a10", r"pod does not fit: \d+/\d+ CardInsufficientMemory \(HTTP 422\)"),
        ("12000", "node:nowhere", r"node: Select a valid choice"),
    ],
    ids=["placed", "does-not-fit", "unknown-node"],
)
def test_a_pod_placed_from_the_session_page(client, operator, demo_data, gpumem, node, message):
    from simulations.forms import EXAMPLE_PLACEMENT_POD

    session = SessionFactory(owner="user:operator")
    client.force_login(operator)
    pod = EXAMPLE_PLACEMENT_POD.replace('"12000"', f'"{gpumem}"')
    response = client.post(f"/sessions/{session.pk}/placements/", {"pod": pod, "node": node, "revision": 0})
    assert response.status_code == 302 and response["Location"] == f"/sessions/{session.pk}/"
    html = client.get(response["Location"]).content.decode()
    assert re.search(message, html), html[html.find("message") : html.find("message") + 300]
    session.refresh_from_db()
    assert session.placements.count() == (1 if message.startswith("placed") else 0)


def test_placing_needs_the_operators_role(client, demo_data):
    reader = UserFactory(username="reader", is_staff=True)
    session = SessionFactory(owner="user:reader")
    client.force_login(reader)
    assert 'id="place"' not in client.get(f"/sessions/{session.pk}/").content.decode()
    response = client.post(f"/sessions/{session.pk}/placements/", {"pod": "{}", "node": "group:gpu-a10"})
    assert response.status_code == 403
    assert session.placements.count() == 0
