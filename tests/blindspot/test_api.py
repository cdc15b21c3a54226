"""``GET /api/v1/blind-spot``: the demo's 32 invisible pods as a paginated, filterable REST list in the
one API style (``?limit=&offset=`` pages, ``{"detail"}`` errors), listed in the OpenAPI schema, and
the same estimator answer as ``POST /api/v1/estimate`` for the same pods."""

from __future__ import annotations

import orjson
import pytest

from tests.blindspot.test_demo import H100, demo  # noqa: F401  (the demo fixture)
from tests.estimate.answers import unschedulable

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def _get(client, query: str = "") -> tuple[int, dict]:
    response = client.get(f"/api/v1/blind-spot{query}")
    return response.status_code, orjson.loads(response.content)


def test_the_demos_32_invisible_pods_are_listed(demo, client):  # noqa: F811
    status, page = _get(client)
    assert status == 200, page
    assert page["count"] == 32 and len(page["results"]) == 32 and page["stale"] == ""
    first = page["results"][0]
    assert first["namespace"] == "ml" and first["name"].startswith("llm-train-7d9f8c6b5-")
    assert first["ca_node"] == H100 and first["ca_node_group"] == "gpu-h100"
    assert first["ca_free"] == {"nvidia.com/gpu": 72}
    assert first["device_memory"] == 80000 and first["largest_free_card"] == 1559
    assert first["message"].startswith(f"CA counts 72 free nvidia.com/gpu slots on {H100}")
    assert first["estimate"] == {
        "node_group": "gpu-h100",
        "new_nodes": 3,
        "pods": 32,
        "pods_left": 8,
        "reason": "8 pod(s) left pending: node limit reached: at most 3 new node(s) for node group "
        "gpu-h100 (node group gpu-h100's max size 4 with 1 node(s) now)",
    }


@pytest.mark.parametrize(
    ("query", "count", "shown"),
    [
        ("?limit=10", 32, 10),
        ("?limit=10&offset=30", 32, 2),
        ("?node_group=gpu-h100", 32, 32),
        ("?node_group=gpu-a10", 0, 0),
        ("?namespace=ml&q=-08", 1, 1),
        ("?namespace=default", 0, 0),
    ],
)
def test_it_filters_and_pages(demo, client, query, count, shown):  # noqa: F811
    status, page = _get(client, query)
    assert status == 200, page
    assert (page["count"], len(page["results"])) == (count, shown)


def test_a_bad_filter_is_a_clear_400(demo, client):  # noqa: F811
    status, body = _get(client, "?namespace=" + "x" * 300)
    assert status == 400 and body["detail"].startswith("namespace:")


def test_it_agrees_with_the_estimate_api(demo, client):  # noqa: F811
    """The same 32 pods asked of POST /api/v1/estimate: the same group, node count and pods left."""
    from usage.models import PendingPod

    pods = [
        dict(p, metadata={**p["metadata"], "uid": uid})
        for uid, p in PendingPod.objects.values_list("uid", "pod")
    ]
    response = client.post(
        "/api/v1/estimate",
        orjson.dumps({"pods": pods, "nodeGroups": ["gpu-a10", "gpu-h100", "gpu-l4"]}),
        content_type="application/json",
    )
    answer = orjson.loads(response.content)
    assert response.status_code == 200, answer
    chosen = next(o for o in answer["options"] if o["nodeGroup"] == answer["chosen"])
    _status, page = _get(client, "?limit=1")
    estimate = page["results"][0]["estimate"]
    assert (
        (answer["chosen"], chosen["nodeCount"], len(unschedulable(answer, chosen)))
        == (
            estimate["node_group"],
            estimate["new_nodes"],
            estimate["pods_left"],
        )
        == ("gpu-h100", 3, 8)
    )


def test_it_is_in_the_schema_and_the_api_root(client, db):
    schema = client.get("/api/schema/?format=json").content.decode()
    assert '"/api/v1/blind-spot"' in schema or '"/api/v1/blind-spot/"' in schema
    root = orjson.loads(client.get("/api/v1/").content)
    assert "blind-spot" in root
