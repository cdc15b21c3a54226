"""REST: /api/v1/decisions, /api/v1/ca-events, /api/v1/autoscaler-status (read-only, filtered, paginated)."""

from __future__ import annotations

import pytest

from decisions.models import Decision
from tests.factories.models import CAEventFactory, DecisionFactory, UserFactory

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def test_list_filters_and_paginates(client, django_assert_max_num_queries):
    for i in range(12):
        DecisionFactory(
            pod_name=f"pod-{i}",
            verdict="no_fit" if i % 3 else "fit",
            node_groups=["gpu-t4"] if i % 2 else ["gpu-a10"],
        )
    with django_assert_max_num_queries(3):
        body = client.get("/api/v1/decisions/?limit=5").json()
    assert body["count"] == 12 and len(body["results"]) == 5 and body["next"]
    assert "nodes" not in body["results"][0]
    fits = client.get("/api/v1/decisions/?verdict=fit").json()
    assert fits["count"] == 4
    t4 = client.get("/api/v1/decisions/?node_group=gpu-t4").json()
    assert t4["count"] == 6
    assert client.get("/api/v1/decisions/?q=pod-11").json()["count"] == 1


def test_detail_has_nodes_and_bad_filter_is_400(client):
    d = DecisionFactory(nodes=[{"name": "n", "devices": []}])
    body = client.get(f"/api/v1/decisions/{d.pk}/").json()
    assert body["nodes"] == [{"name": "n", "devices": []}]
    response = client.get("/api/v1/decisions/?verdict=maybe")
    assert response.status_code == 400 and "verdict" in response.json()
    assert client.get("/api/v1/decisions/999999/").status_code == 404


def test_read_only(client):
    d = DecisionFactory()
    client.force_login(UserFactory(superuser=True))
    assert client.post("/api/v1/decisions/", {}, content_type="application/json").status_code == 405
    assert client.delete(f"/api/v1/decisions/{d.pk}/").status_code == 405
    assert Decision.objects.count() == 1


def test_events_filter_by_group_and_reason(client):
    CAEventFactory(reason="TriggeredScaleUp", pod_name="a", pod_uid="uid-a", groups=["gpu-a10"])
    CAEventFactory(
        reason="FailedScheduling", pod_name="a", pod_uid="uid-a", message="0/1 nodes are available"
    )
    assert client.get("/api/v1/ca-events/?group=gpu-a10").json()["count"] == 1
    assert client.get("/api/v1/ca-events/?reason=FailedScheduling&pod_uid=uid-a").json()["count"] == 1
    assert client.get("/api/v1/autoscaler-status/").json()["count"] == 0


def test_paths_with_or_without_trailing_slash(client):
    d = DecisionFactory()
    for url in (
        "/api/v1/decisions",
        "/api/v1/decisions/",
        f"/api/v1/decisions/{d.pk}",
        "/api/v1/ca-events",
        "/api/v1/autoscaler-status",
    ):
        assert client.get(url).status_code == 200, url
