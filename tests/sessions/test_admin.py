"""Operators can look at sessions in the admin (read-mostly: state changes go through the API)."""

from __future__ import annotations

import pytest

from tests.factories import pod

from .conftest import a10_node

pytestmark = [pytest.mark.django_db]


def test_admin_lists_and_shows_a_session(api, admin_client):
    sid = api.create(name="ops-look")["id"]
    api.place(sid, pod("a", uid="pod-a", gpumem=1000), a10_node())
    api.call("post", f"/api/v1/sessions/{sid}/fork")
    listing = admin_client.get("/admin/simulations/simulationsession/")
    assert listing.status_code == 200 and b"ops-look" in listing.content
    page = admin_client.get(f"/admin/simulations/simulationsession/{sid}/change/")
    assert page.status_code == 200
    assert b"pod-a" in page.content and b"tmpl-a10" in page.content
    checkpoints = admin_client.get("/admin/simulations/sessioncheckpoint/")
    assert checkpoints.status_code == 200
