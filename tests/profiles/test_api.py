"""REST API: CRUD with tokens, open reads, clear 400s that change nothing, the template endpoint."""

from __future__ import annotations

import orjson
import pytest
import yaml

from tests.factories.models import NodeGroupFactory

from .conftest import A10, H100

pytestmark = [pytest.mark.api, pytest.mark.django_db]

GROUP = {
    "name": "gpu-h100",
    "match_labels": {"eks.amazonaws.com/nodegroup": "gpu-h100"},
    "provider": "aws",
    "instance_type": "p5.48xlarge",
    "min_size": 0,
    "max_size": 4,
    "inventory_source": "annotation-first",
    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
}


def test_token_user_creates_group_and_profile_anonymous_cannot(client, token_client):
    assert client.post("/api/v1/node-groups/", GROUP, content_type="application/json").status_code in (
        401,
        403,
    )
    created = token_client.post("/api/v1/node-groups/", GROUP, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["instance_type"] == "p5.48xlarge"
    profile = {"node_group": "gpu-h100", "vendor": "NVIDIA", "devices": [{**H100, "quantity": 8}]}
    response = token_client.post("/api/v1/device-profiles/", profile, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    devices = orjson.loads(body["register_annotation"])
    assert len(devices) == 8 and devices[0]["devmem"] == 81559 and devices[0]["health"] is True
    # reads are open
    listing = client.get("/api/v1/node-groups/?provider=aws").json()
    assert listing["count"] == 1 and listing["results"][0]["profiles"][0]["version"] >= 1
    assert client.get("/api/v1/node-groups/?provider=gcp").json()["count"] == 0


def test_bad_input_is_a_clear_400_and_changes_nothing(token_client, db):
    from profiles.models import DeviceProfile, DeviceRow, NodeGroup

    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    before = (NodeGroup.objects.count(), DeviceProfile.objects.count(), DeviceRow.objects.count())
    cases = [
        (
            "/api/v1/node-groups/",
            {**GROUP, "match_labels": {"eks.amazonaws.com/nodegroup": "gpu-a10"}},
            "match_labels",
        ),
        ("/api/v1/node-groups/", {**GROUP, "match_labels": ["not", "a", "map"]}, "match_labels"),
        ("/api/v1/node-groups/", {**GROUP, "min_size": 5, "max_size": 2}, "min_size"),
        ("/api/v1/node-groups/", {**GROUP, "inventory_source": "sometimes"}, "inventory_source"),
        ("/api/v1/node-groups/", {**GROUP, "name": "gpu-a10"}, "name"),
        ("/api/v1/device-profiles/", {"node_group": "gpu-a10", "devices": [{**A10}]}, "vendor"),
        ("/api/v1/device-profiles/", {"node_group": "nope", "devices": [{**A10}]}, "node_group"),
        ("/api/v1/device-profiles/", {"node_group": "gpu-a10", "vendor": "NVIDIA", "devices": []}, "devices"),
    ]
    for url, data, field in cases:
        response = token_client.post(url, data, format="json")
        assert response.status_code == 400, (data, response.content)
        assert field in response.json(), response.json()
    NodeGroupFactory(name="gpu-l4")
    bad_rows = [
        ({**A10, "devmem": -1}, "devmem must be a positive number of MiB, got -1"),
        ({**A10, "count": 0}, "count (split count) must be at least 1, got 0"),
        (
            {
                **A10,
                "mode": "mig",
                "mig_profiles": [{"name": "7g.80gb", "memoryMB": 81920, "core": 100, "sliceCount": 7}],
            },
            "MIG profile 7g.80gb has memoryMB 81920, larger than the card's devmem 23028",
        ),
    ]
    for row, message in bad_rows:
        response = token_client.post(
            "/api/v1/device-profiles/", {"node_group": "gpu-l4", "devices": [row]}, format="json"
        )
        assert response.status_code == 400
        assert message in str(response.json()["devices"])
    assert (
        token_client.post("/api/v1/node-groups/", b"{not json", content_type="application/json").status_code
        == 400
    )
    assert (NodeGroup.objects.count() - 1, DeviceProfile.objects.count(), DeviceRow.objects.count()) == before


def test_update_profile_replaces_rows_and_bumps_version(token_client, db):
    group = NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    profile = group.profiles.get()
    url = f"/api/v1/device-profiles/{profile.pk}/"
    old_version = token_client.get(url).json()["version"]
    response = token_client.patch(url, {"devices": [{**A10, "quantity": 1}]}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["version"] > old_version
    assert len(orjson.loads(response.json()["register_annotation"])) == 1
    assert token_client.delete(f"/api/v1/node-groups/{group.name}/").status_code == 204


def test_template_node_and_kwok_yaml(client, db):
    NodeGroupFactory(
        name="gpu-h100",
        rows=[{**H100, "quantity": 4}, {**H100, "numa": 1, "quantity": 4}],
        machine_type="p5.48xlarge",
        taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
        capacity={"cpu": "192", "memory": "2048Gi", "pods": "110"},
    )
    node = client.get("/api/v1/node-groups/gpu-h100/template").json()
    assert node["kind"] == "Node" and node["metadata"]["name"].startswith("template-node-for-gpu-h100-")
    assert node["metadata"]["labels"]["eks.amazonaws.com/nodegroup"] == "gpu-h100"
    assert node["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "p5.48xlarge"
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "80"  # 8 devices x split 10
    assert node["status"]["allocatable"]["cpu"] == "192"
    devices = orjson.loads(node["metadata"]["annotations"]["hami.io/node-nvidia-register"])
    assert [d.get("numa", 0) for d in devices] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert node["spec"]["taints"][0]["key"] == "nvidia.com/gpu"
    # Stable: the same template twice (placeholder UUIDs are deterministic)
    assert client.get("/api/v1/node-groups/gpu-h100/template").json() == node

    response = client.get("/api/v1/node-groups/gpu-h100/template?format=kwok")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/yaml")
    kwok = yaml.safe_load(response.content)
    assert kwok["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
    assert (
        kwok["metadata"]["annotations"]["hami.io/node-nvidia-register"]
        == node["metadata"]["annotations"]["hami.io/node-nvidia-register"]
    )
    assert client.get("/api/v1/node-groups/nope/template").status_code == 404


def test_template_answers_the_extender_like_the_cold_template(client, db):
    """The template endpoint's Node, sent back as a warm template, gives the same verdict as cold."""
    from tests.factories import extender_args, pod

    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 8}])
    node = client.get("/api/v1/node-groups/gpu-h100/template").json()
    body = extender_args(pod(gpu_count=8, gpumem=81559), [node])
    answer = orjson.loads(client.post("/filter-simulation", body, content_type="application/json").content)
    assert answer["Nodes"]["items"][0]["metadata"]["name"] == node["metadata"]["name"]


def test_inventory_findings_and_task_runs_are_read_only_and_paginated(
    client, token_client, db, django_assert_max_num_queries
):
    from profiles.sync import sync_nodes
    from tests.factories import gpu, node

    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 1}])
    nodes = [
        node(
            f"n{i}",
            [gpu(f"GPU-{i}", type="NVIDIA A10G", health=i != 0)],
            labels={"eks.amazonaws.com/nodegroup": "gpu-a10"},
        )
        for i in range(12)
    ]
    sync_nodes(nodes)
    with django_assert_max_num_queries(6):
        page = client.get("/api/v1/node-inventories/?limit=5").json()
    assert page["count"] == 12 and len(page["results"]) == 5 and page["next"]
    assert client.get("/api/v1/node-inventories/?node_group=gpu-a10&registered=true").json()["count"] == 12
    findings = client.get("/api/v1/drift-findings/?open=true&kind=degradation").json()
    assert findings["count"] == 1 and findings["results"][0]["node"] == "n0"
    assert token_client.post("/api/v1/node-inventories/", {}, format="json").status_code == 405
    assert token_client.delete(f"/api/v1/drift-findings/{findings['results'][0]['id']}/").status_code == 405
    assert "node-groups" in client.get("/api/v1/").json()


def test_list_queries_do_not_grow_with_the_number_of_groups(client, db, django_assert_max_num_queries):
    for i in range(15):
        NodeGroupFactory(name=f"g{i}", rows=[{**A10, "quantity": 2}, {**A10, "numa": 1, "quantity": 2}])
    with django_assert_max_num_queries(6):
        body = client.get("/api/v1/node-groups/?limit=50").json()
    assert body["count"] == 15 and all(
        len(orjson.loads(g["profiles"][0]["register_annotation"])) == 4 for g in body["results"]
    )
    with django_assert_max_num_queries(5):
        assert client.get("/api/v1/device-profiles/?type=a10g").json()["count"] == 15
