"""``GET /api/v1/node-groups/<name>/ca-template?provider=``: each provider's output read back the way
CA's provider code reads it, so a cold group's template advertises HAMi's resources, labels, taints.

The parsing below restates ``cluster-autoscaler/cloudprovider/aws/aws_manager.go``,
``cloudprovider/azure/azure_template.go`` (with the tag names of ``azure_util.go``) and
``cloudprovider/clusterapi/clusterapi_unstructured.go`` (with the annotation keys of
``clusterapi_utils.go``), the same at tags ``cluster-autoscaler-1.32.1`` and
``cluster-autoscaler-1.36.1``; ``tests/docs/test_ca_claims.py`` holds the names as data."""

from __future__ import annotations

import re

import pytest

from hami_sim.runtime.simulator import get_simulator
from tests.factories.models import NodeGroupFactory

from .conftest import H100

pytestmark = [pytest.mark.api, pytest.mark.django_db]

TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
EFFECT = re.compile(r"(.*):(?:NoSchedule|NoExecute|PreferNoSchedule)")


@pytest.fixture
def h100(db):
    return NodeGroupFactory(
        name="gpu-h100",
        rows=[{**H100, "quantity": 8}],
        match_labels={"eks.amazonaws.com/nodegroup": "gpu-h100"},
        taints=[TAINT],
    )


def ca_aws(tags: dict) -> tuple[dict, dict, list]:
    """extractAllocatableResourcesFromAsg, extractLabelsFromAsg, extractTaintsFromAsg."""
    prefix = "k8s.io/cluster-autoscaler/node-template/"
    res = {k.split(prefix + "resources/")[1]: v for k, v in tags.items() if prefix + "resources/" in k}
    labels = {k.split(prefix + "label/")[1]: v for k, v in tags.items() if prefix + "label/" in k}
    taints = [
        {"key": k.split(prefix + "taint/")[1], "value": v.split(":", 1)[0], "effect": v.split(":", 1)[1]}
        for k, v in tags.items()
        if prefix + "taint/" in k and EFFECT.match(v)
    ]
    return res, labels, taints


def ca_azure(tags: dict) -> tuple[dict, dict, list]:
    """extractAllocatableResourcesFromScaleSet, extractLabelsFromScaleSet, extractTaintsFromScaleSet."""
    prefix = "k8s.io_cluster-autoscaler_node-template_"
    res = {
        k.split(prefix + "resources_")[1].replace("_", "/").replace("~2", "/"): v
        for k, v in tags.items()
        if prefix + "resources_" in k
    }
    labels = {
        k.split(prefix + "label_")[1].replace("_", "/").replace("~2", "_"): v
        for k, v in tags.items()
        if prefix + "label_" in k
    }
    taints = [
        {
            "key": k.split(prefix + "taint_")[1].replace("_", "/").replace("~2", "_"),
            "value": v.split(":", 1)[0],
            "effect": v.split(":", 1)[1],
        }
        for k, v in tags.items()
        if prefix + "taint_" in k and EFFECT.match(v)
    ]
    return res, labels, taints


def ca_clusterapi(ann: dict) -> tuple[dict, dict, list]:
    """InstanceCapacity (gpu-type names the resource gpu-count counts), Labels, Taints."""
    p = "capacity.cluster-autoscaler.kubernetes.io/"
    res = {"cpu": ann[p + "cpu"], "memory": ann[p + "memory"], "pods": ann[p + "maxPods"]}
    res[ann[p + "gpu-type"]] = ann[p + "gpu-count"]
    labels = dict(kv.split("=", 1) for kv in ann[p + "labels"].split(","))
    taints = []
    for t in ann[p + "taints"].split(","):
        kv, effect = t.rsplit(":", 1)
        key, value = kv.split("=", 1)
        taints.append({"key": key, "value": value, "effect": effect})
    return res, labels, taints


# 8 x H100 (81559 MiB, 100 cores, split 10): count 80, memory 652472 MiB, cores 800
CASES = [
    (
        "aws",
        "tags",
        ca_aws,
        {"nvidia.com/gpu": "80", "nvidia.com/gpumem": "652472", "nvidia.com/gpucores": "800"},
    ),
    (
        "azure",
        "tags",
        ca_azure,
        {"nvidia.com/gpu": "80", "nvidia.com/gpumem": "652472", "nvidia.com/gpucores": "800"},
    ),
    ("clusterapi", "annotations", ca_clusterapi, {"nvidia.com/gpu": "80"}),
]


@pytest.mark.parametrize(("provider", "field", "read", "resources"), CASES, ids=[c[0] for c in CASES])
def test_ca_reads_back_the_groups_resources_labels_and_taints(client, h100, provider, field, read, resources):
    answer = client.get(f"/api/v1/node-groups/gpu-h100/ca-template?provider={provider}")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    res, labels, taints = read(body[field])
    assert {k: v for k, v in res.items() if k.startswith("nvidia.com/")} == resources
    assert labels["eks.amazonaws.com/nodegroup"] == "gpu-h100"
    assert taints == [TAINT]


@pytest.mark.parametrize(("provider", "field", "read"), [c[:3] for c in CASES], ids=[c[0] for c in CASES])
def test_a_renamed_nvidia_count_resource_reaches_every_provider(
    client, settings, h100, provider, field, read
):
    """``HAMI_NVIDIA_RESOURCE_COUNT=hami.io/gpu``: CA is told the group's cards under the configured
    name (clusterapi's ``gpu-type`` included), never under the default ``nvidia.com/gpu``."""
    settings.HAMI = {
        **settings.HAMI,
        "NVIDIA": {**settings.HAMI["NVIDIA"], "resourceCountName": "hami.io/gpu"},
    }
    get_simulator.cache_clear()
    res, _, _ = read(
        client.get(f"/api/v1/node-groups/gpu-h100/ca-template?provider={provider}").json()[field]
    )
    assert res.get("hami.io/gpu") == "80" and "nvidia.com/gpu" not in res


def test_unknown_provider_is_a_400(client, h100):
    answer = client.get("/api/v1/node-groups/gpu-h100/ca-template?provider=gce")
    assert answer.status_code == 400 and "aws, azure, clusterapi" in answer.json()["detail"]


@pytest.mark.parametrize(
    ("capacity", "defaults"),
    [
        # nothing set: cpu, memory and maxPods are hami-sim's defaults, not the machine's
        ({}, ["cpu", "maxPods", "memory"]),
        # the group's own capacity is a fact and is not marked
        ({"cpu": "96", "memory": "768Gi"}, ["maxPods"]),
        ({"cpu": "96", "memory": "768Gi", "pods": "250"}, []),
    ],
)
def test_clusterapi_marks_capacities_rendered_from_defaults(client, db, capacity, defaults):
    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 8}], capacity=capacity)
    body = client.get("/api/v1/node-groups/gpu-h100/ca-template?provider=clusterapi").json()
    prefix = "capacity.cluster-autoscaler.kubernetes.io/"
    assert body["defaults"] == [prefix + key for key in defaults]
    for name, value in capacity.items():
        assert body["annotations"][prefix + ("maxPods" if name == "pods" else name)] == value
