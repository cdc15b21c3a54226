"""``POST /api/v1/estimate`` with ``upcomingNodes`` and the CA filters, through the HTTP API."""

from __future__ import annotations

import orjson
import pytest

from .answers import node_pods, scheduled
from .helpers import ca_node, ca_pod, gpu_node

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def _post(client, body: dict) -> tuple[int, dict]:
    response = client.post("/api/v1/estimate", orjson.dumps(body), content_type="application/json")
    return response.status_code, orjson.loads(response.content)


def test_upcoming_nodes_absorb_pods_before_the_estimate(client):
    body = {
        "pods": [{"pod": ca_pod("w", 100, 1000, gpu_count=1, gpumem=12000), "count": 16}],
        "nodeGroups": [{"name": "a10", "template": gpu_node("a10")}],
        "upcomingNodes": [{"nodeGroup": "a10", "count": 2}],
    }
    status, out = _post(client, body)
    assert status == 200, out
    upcoming = out["upcomingNodes"]
    assert [n["name"] for n in upcoming["nodes"]] == ["a10-upcoming-0", "a10-upcoming-1"]
    assert [len(node_pods(out, n)) for n in upcoming["nodes"]] == [2, 2]
    assert scheduled(out, upcoming) == [f"default/w#{i}" for i in range(4)]
    assert [d["usedmem"] for d in upcoming["nodes"][0]["devices"]] == [12000, 12000]
    [option] = out["options"]
    assert option["nodeCount"] == 6 and len(scheduled(out, option)) == 12


def test_without_upcoming_nodes_the_answer_is_unchanged(client):
    body = {
        "pods": [ca_pod("e", 500, 10)],
        "nodeGroups": [{"name": "g", "template": ca_node("t", 1000, "1Gi")}],
    }
    status, out = _post(client, body)
    assert status == 200 and "upcomingNodes" not in out


@pytest.mark.parametrize(
    ("upcoming", "detail"),
    [
        ([{"nodeGroup": "g"}], "upcomingNodes[0].count must be an integer"),
        ([{"nodeGroup": "other", "count": 1}], "upcomingNodes[0].nodeGroup must name one of nodeGroups"),
        ([{"nodeGroup": "g", "count": -1}], "upcomingNodes[0].count must be an integer"),
        (
            [{"nodeGroup": "g", "count": 6000}, {"nodeGroup": "g", "count": 6000}],
            "at most 10000 upcoming nodes",
        ),
        ([["g", 1]], "upcomingNodes[0] must be"),
    ],
)
def test_bad_upcoming_nodes_are_400(client, upcoming, detail):
    body = {
        "pods": [ca_pod("e", 500, 10)],
        "nodeGroups": [{"name": "g", "template": ca_node("t", 1000, "1Gi")}],
        "upcomingNodes": upcoming,
    }
    status, out = _post(client, body)
    assert status == 400 and detail in out["detail"], out


def test_host_ports_and_sidecars_through_the_api(client):
    """CA's host-port row over HTTP: 8 pods on hostPort 5555 need 8 nodes."""
    p = ca_pod("e", 200, 1000)
    p["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 5555}]
    body = {
        "pods": [{"pod": p, "count": 8}],
        "nodeGroups": [{"name": "g", "template": ca_node("t", 1000, "5000Mi")}],
        "maxNodesPerScaleUp": 0,
    }
    status, out = _post(client, body)
    assert status == 200 and out["options"][0]["nodeCount"] == 8
