"""REST: /api/v1/decisions, /api/v1/ca-events, /api/v1/autoscaler-status (read-only, filtered, paginated)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from decisions.models import CAEvent, Decision

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def _decision(i: int, **kw) -> Decision:
    now = timezone.now()
    fields = dict(
        digest=f"d{i}",
        pod_uid=f"uid-{i}",
        pod_namespace="ml",
        pod_name=f"pod-{i}",
        verdict="fit",
        node_groups=["gpu-a10"],
        nodes=[{"name": "n", "devices": []}],
        first_seen=now,
        last_seen=now,
    )
    fields.update(kw)
    return Decision.objects.create(**fields)


def test_list_filters_and_paginates(client, django_assert_max_num_queries):
    for i in range(12):
        _decision(i, verdict="no_fit" if i % 3 else "fit", node_groups=["gpu-t4"] if i % 2 else ["gpu-a10"])
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
    d = _decision(1)
    body = client.get(f"/api/v1/decisions/{d.pk}/").json()
    assert body["nodes"] == [{"name": "n", "devices": []}]
    response = client.get("/api/v1/decisions/?verdict=maybe")
    assert response.status_code == 400 and "verdict" in response.json()
    assert client.get("/api/v1/decisions/999999/").status_code == 404


def test_read_only(client, django_user_model):
    d = _decision(1)
    user = django_user_model.objects.create_superuser("root", "r@x", "pw")
    client.force_login(user)
    assert client.post("/api/v1/decisions/", {}, content_type="application/json").status_code == 405
    assert client.delete(f"/api/v1/decisions/{d.pk}/").status_code == 405
    assert Decision.objects.count() == 1


def test_events_filter_by_group_and_reason(client):
    CAEvent.objects.create(
        event_uid="1",
        reason="TriggeredScaleUp",
        pod_namespace="ml",
        pod_name="a",
        pod_uid="uid-a",
        message="m",
        groups=["gpu-a10"],
    )
    CAEvent.objects.create(
        event_uid="2",
        reason="FailedScheduling",
        pod_namespace="ml",
        pod_name="a",
        pod_uid="uid-a",
        message="0/1 nodes are available",
    )
    assert client.get("/api/v1/ca-events/?group=gpu-a10").json()["count"] == 1
    assert client.get("/api/v1/ca-events/?reason=FailedScheduling&pod_uid=uid-a").json()["count"] == 1
    assert client.get("/api/v1/autoscaler-status/").json()["count"] == 0


def test_paths_with_or_without_trailing_slash(client):
    d = _decision(1)
    for url in (
        "/api/v1/decisions",
        "/api/v1/decisions/",
        f"/api/v1/decisions/{d.pk}",
        "/api/v1/ca-events",
        "/api/v1/autoscaler-status",
    ):
        assert client.get(url).status_code == 200, url
