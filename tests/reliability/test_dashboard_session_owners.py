"""The dashboard's session pages follow the API's owner rule: a reader sees and opens only the sessions
of its own identity (``user:<name>``, ``anonymous`` for a demo visitor), an operator every session.

Reported: a token with no permissions listed, forked and deleted CA's session through the API; the
API was fixed, but the dashboard's session list and page still showed every session (CA's pods,
nodes and placements) to any dashboard reader.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories.models import SessionFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.api]

OWNERS = {
    "ca": "cert:cluster-autoscaler.kube-system",
    "alice": "user:alice",
    "bob": "user:bob",
    "visitor": "anonymous",
    "server": "",  # the demo's seeded session, the dashboard form
}


@pytest.fixture
def owned():
    """One live session per owner, named after it (and an expired one of alice's)."""
    made = {name: SessionFactory(name=f"s-{name}", owner=owner) for name, owner in OWNERS.items()}
    made["alice-old"] = SessionFactory(
        name="s-alice-old", owner="user:alice", expires_at=timezone.now() - timedelta(hours=1)
    )
    return made


def _listed(client) -> set[str]:
    html = client.get("/sessions/?expired=").content.decode()
    return {name for name in ("ca", "alice", "bob", "visitor", "server", "alice-old") if f"s-{name}<" in html}


READERS = {
    # reader: (how it signs in, the sessions it sees)
    "alice, staff with no role": ({"username": "alice", "is_staff": True}, {"alice", "alice-old"}),
    "bob, no role": ({"username": "bob"}, {"bob"}),
    "an operator": ({"username": "op", "roles": ["operators"]}, set(OWNERS) | {"alice-old"}),
    "a demo visitor": (None, {"visitor"}),
}


@pytest.mark.parametrize("reader", list(READERS))
def test_a_reader_sees_and_opens_only_what_the_api_lets_it(client, settings, owned, reader):
    user, visible = READERS[reader]
    settings.DEMO_READ_ONLY = True  # the pages open to anonymous visitors too (the demo)
    if user is not None:
        client.force_login(UserFactory(**user))
    assert _listed(client) == visible
    for name, session in owned.items():
        response = client.get(f"/sessions/{session.pk}/")
        assert response.status_code == (200 if name in visible else 403), name
        if name not in visible:
            assert f"s-{name}" not in response.content.decode()
