"""``POST /api/v1/estimate``: CA's binpacking with HAMi device fit carried from pod to pod."""

from __future__ import annotations

import orjson
import pytest

from tests.factories import extender_args, gpu, node, pod
from tests.factories.models import A10G, NodeGroupFactory, NodeInventoryFactory
from tests.sessions.conftest import a10_node

from .answers import node_pods, scheduled, unschedulable

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def owned(p: dict, owner: str = "rs-1") -> dict:
    p["metadata"]["ownerReferences"] = [
        {"kind": "ReplicaSet", "name": owner, "uid": f"uid-{owner}", "controller": True}
    ]
    return p


def estimate(client, body: dict) -> tuple[int, dict]:
    response = client.post("/api/v1/estimate", orjson.dumps(body), content_type="application/json")
    return response.status_code, orjson.loads(response.content)


def group(name: str, tmpl: dict, **extra) -> dict:
    return {"name": name, "template": tmpl, **extra}


@pytest.mark.parametrize(("mem", "nodes", "per_card"), [(12000, 8, 1), (5000, 2, 4)])
def test_a10_group_needs_the_nodes_hami_would_fill(client, mem, nodes, per_card):
    tmpl = a10_node("template-node-for-a10-x")
    # a stateless per-pod check accepts the template for every one of these pods: "1 node"
    one = client.post(
        "/filter-simulation", extender_args(pod(gpumem=mem), [tmpl]), content_type="application/json"
    )
    assert orjson.loads(one.content)["Nodes"]["items"][0]["metadata"]["name"] == "template-node-for-a10-x"

    status, body = estimate(
        client,
        {"pods": [{"pod": owned(pod("w", gpumem=mem)), "count": 16}], "nodeGroups": [group("a10", tmpl)]},
    )
    assert status == 200, body
    [option] = body["options"]
    assert option["nodeGroup"] == "a10" and option["nodeCount"] == nodes
    assert unschedulable(body, option) == {}
    assert scheduled(body, option) == [f"default/w#{i}" for i in range(16)]
    assert body["chosen"] == "a10"
    for n in option["nodes"]:
        assert len(node_pods(body, n)) == 2 * per_card
        assert [(d["used"], d["usedmem"]) for d in n["devices"]] == [(per_card, per_card * mem)] * 2
    assert option["nodes"][0]["name"] == "template-node-for-a10-x-e-0"
    assert 0 < option["waste"]["gpuMemory"] < 1


def test_separate_pods_of_one_owner_pack_the_same(client):
    pods = [owned(pod(f"w{i}", uid=f"u{i}", gpumem=12000)) for i in range(16)]
    status, body = estimate(client, {"pods": pods, "nodeGroups": [group("a10", a10_node())]})
    assert status == 200 and body["options"][0]["nodeCount"] == 8
    assert scheduled(body, body["options"][0]) == [f"u{i}" for i in range(16)]


def test_pod_that_fits_no_group(client):
    pods = [{"pod": pod("huge", gpumem=30000), "count": 2}, pod("ok", uid="ok", gpumem=1000)]
    status, body = estimate(client, {"pods": pods, "nodeGroups": [group("a10", a10_node())]})
    assert status == 200
    [option] = body["options"]
    assert unschedulable(body, option) == {
        "default/huge#0": "2/2 CardInsufficientMemory",
        "default/huge#1": "2/2 CardInsufficientMemory",
    }
    assert scheduled(body, option) == ["ok"] and option["nodeCount"] == 1
    status, body = estimate(
        client, {"pods": [pod("huge", gpumem=30000)], "nodeGroups": [group("a10", a10_node())]}
    )
    assert body["chosen"] is None and body["options"][0]["nodeCount"] == 0
    assert (
        "No node group can schedule" in body["explanation"]
        and "CardInsufficientMemory" in body["explanation"]
    )


def test_taint_without_toleration(client):
    tainted = a10_node("tainted")
    tainted["spec"]["taints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    body = {"pods": [pod("p", uid="p", gpumem=1000)], "nodeGroups": [group("tainted", tainted)]}
    status, answer = estimate(client, body)
    assert status == 200 and answer["chosen"] is None
    assert unschedulable(answer, answer["options"][0]) == {
        "p": "node(s) had untolerated taint {nvidia.com/gpu: present}"
    }
    tolerant = pod("p", uid="p", gpumem=1000)
    tolerant["spec"]["tolerations"] = [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    status, answer = estimate(client, {**body, "pods": [tolerant]})
    assert answer["chosen"] == "tainted" and answer["options"][0]["nodeCount"] == 1


def test_node_selector_picks_one_group(client):
    a = a10_node("tmpl-a", labels={"pool": "a"})
    b = a10_node("tmpl-b", labels={"pool": "b"})
    p = pod("sel", uid="sel", gpumem=1000)
    p["spec"]["nodeSelector"] = {"pool": "b"}
    status, body = estimate(client, {"pods": [p], "nodeGroups": [group("a", a), group("b", b)]})
    assert status == 200 and body["chosen"] == "b"
    assert unschedulable(body, body["options"][0]) == {
        "sel": "node(s) didn't match Pod's node affinity/selector"
    }
    assert scheduled(body, body["options"][1]) == ["sel"]
    assert "'a': no pod fits" in body["explanation"]


def test_required_node_affinity(client):
    a = a10_node("tmpl-a", labels={"gpu-gen": "3", "zone": "z1"})
    b = a10_node("tmpl-b", labels={"gpu-gen": "5", "zone": "z2"})
    p = pod("aff", uid="aff", gpumem=1000)
    p["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "gpu-gen", "operator": "Gt", "values": ["4"]}]}
                ]
            }
        }
    }
    status, body = estimate(client, {"pods": [p], "nodeGroups": [group("a", a), group("b", b)]})
    assert body["chosen"] == "b"


def _expander_groups() -> list[dict]:
    small = a10_node("tmpl-small")  # 2 cards a node
    big = node("tmpl-big", [gpu(f"GPU-big-{i}", index=i) for i in range(8)])  # 8 cards, same cpu/memory
    return [group("gpu-small", small), group("gpu-big", big)]


def test_expanders_choose_as_ca_would(client):
    pods = [{"pod": owned(pod("w", gpumem=12000)), "count": 4}]
    groups = _expander_groups()

    status, body = estimate(client, {"pods": pods, "nodeGroups": groups})  # least-waste by default
    small, big = body["options"]
    assert (small["nodeCount"], big["nodeCount"]) == (2, 1)
    assert small["waste"]["gpuMemory"] < big["waste"]["gpuMemory"]
    assert body["chosen"] == "gpu-small" and "least-waste chose 'gpu-small'" in body["explanation"]

    status, body = estimate(client, {"pods": pods, "nodeGroups": groups, "expander": "least-nodes"})
    assert body["chosen"] == "gpu-big"

    limited = [{**groups[0], "maxNewNodes": 1}, groups[1]]
    status, body = estimate(client, {"pods": pods, "nodeGroups": limited, "expander": "most-pods"})
    assert body["options"][0]["nodeCount"] == 1 and len(scheduled(body, body["options"][0])) == 2
    assert unschedulable(body, body["options"][0])["default/w#2"].startswith("node limit reached")
    assert body["chosen"] == "gpu-big"

    prio = {"10": ["^gpu-small$"], "50": [".*big.*"]}
    status, body = estimate(
        client, {"pods": pods, "nodeGroups": groups, "expander": "priority", "priorities": prio}
    )
    assert body["chosen"] == "gpu-big" and "priority" in body["explanation"]
    same = {"10": ["^gpu-"]}
    status, body = estimate(
        client,
        {
            "pods": pods,
            "nodeGroups": groups,
            "expander": {"name": "priority,least-waste", "priorities": same},
        },
    )
    assert body["chosen"] == "gpu-small"


def test_max_nodes_per_scale_up(client):
    body = {
        "pods": [{"pod": pod("w", gpumem=12000), "count": 16}],
        "nodeGroups": [group("a10", a10_node())],
        "maxNodesPerScaleUp": 3,
    }
    status, answer = estimate(client, body)
    [option] = answer["options"]
    assert (
        option["nodeCount"] == 3
        and len(scheduled(answer, option)) == 6
        and len(unschedulable(answer, option)) == 10
    )


def test_cpu_memory_and_pod_count_limit_a_node(client):
    tmpl = a10_node()
    tmpl["status"]["allocatable"] = {"cpu": "31", "memory": "120Gi", "pods": "110"}
    p = pod("cpu", gpumem=100)
    p["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "10", "memory": "1Gi"}
    status, body = estimate(
        client, {"pods": [{"pod": owned(p), "count": 7}], "nodeGroups": [group("a10", tmpl)]}
    )
    assert body["options"][0]["nodeCount"] == 3  # 3 pods of 10 cpu on a 31 cpu node
    assert [len(node_pods(body, n)) for n in body["options"][0]["nodes"]] == [3, 3, 1]
    tmpl["status"]["allocatable"]["pods"] = "2"
    status, body = estimate(
        client, {"pods": [{"pod": owned(p), "count": 4}], "nodeGroups": [group("a10", tmpl)]}
    )
    assert body["options"][0]["nodeCount"] == 2


def test_named_group_from_the_database(client):
    NodeGroupFactory(name="gpu-a10g", max_size=5, rows=[{**A10G, "quantity": 2}])
    pods = [{"pod": pod("w", gpumem=12000), "count": 16}]
    status, body = estimate(client, {"pods": pods, "nodeGroups": ["gpu-a10g"]})
    assert status == 200, body
    [option] = body["options"]
    assert option["nodeCount"] == 5  # max_size caps the group: 5 nodes, 10 pods
    assert len(scheduled(body, option)) == 10
    status, body = estimate(client, {"pods": pods, "nodeGroups": [{"name": "gpu-a10g", "maxNewNodes": 8}]})
    assert body["options"][0]["nodeCount"] == 8
    status, body = estimate(client, {"pods": pods, "nodeGroups": ["nope"]})
    assert status == 400 and "unknown node group 'nope'" in body["detail"]


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ([], "JSON object"),
        ({"pods": "x", "nodeGroups": ["a"]}, "pods must be a list"),
        ({"pods": [], "nodeGroups": []}, "nodeGroups"),
        ({"pods": [1], "nodeGroups": [{"name": "a", "template": {}}]}, "pods[0]"),
        ({"pods": [{"pod": {}, "count": -1}], "nodeGroups": [{"name": "a", "template": {}}]}, "count"),
        (
            {"pods": [], "nodeGroups": [{"name": "a", "template": {}}], "expander": "fastest"},
            "unknown expander",
        ),
        ({"pods": [], "nodeGroups": [{"name": "a", "template": {}}], "expander": "priority"}, "priorities"),
        (
            {
                "pods": [],
                "nodeGroups": [{"name": "a", "template": {}}],
                "expander": "priority",
                "priorities": {"1": ["("]},
            },
            "regex",
        ),
        (
            {"pods": [], "nodeGroups": [{"name": "a", "template": {}}], "maxNodesPerScaleUp": -1},
            "maxNodesPerScaleUp",
        ),
        ({"pods": [], "nodeGroups": [{"name": "a", "template": "x"}]}, "template"),
        ({"pods": [], "nodeGroups": [{"template": {}}]}, "no name"),
        (
            {"pods": [], "nodeGroups": [{"name": "a", "template": {"metadata": {"annotations": {"k": 5}}}}]},
            "must be a string",
        ),
        ({"pods": [], "nodeGroups": [{"name": "a", "template": {"spec": {"taints": "x"}}}]}, "spec.taints"),
        ({"pods": [], "nodeGroups": [{"name": "a", "template": {}}, {"name": "a", "template": {}}]}, "twice"),
        ({"pods": [pod("d"), pod("d")], "nodeGroups": [{"name": "a", "template": {}}]}, "duplicate pod id"),
        ({"pods": [pod("m", gpumem="lots")], "nodeGroups": [{"name": "a", "template": {}}]}, "pod default/m"),
        (
            {
                "pods": [pod("w", annotations={"hami.io/device-scoring-weights": "x"})],
                "nodeGroups": [{"name": "a", "template": {}}],
            },
            "calcScore failed",
        ),
    ],
)
def test_bad_input_is_400_json(client, body, text):
    status, answer = estimate(client, body)
    assert status == 400 and text in answer["detail"], answer


def test_malformed_json_is_400(client):
    response = client.post("/api/v1/estimate", b"{", content_type="application/json")
    assert response.status_code == 400 and "malformed JSON" in orjson.loads(response.content)["detail"]
    response = client.get("/api/v1/estimate")
    assert response.status_code == 405 and "detail" in orjson.loads(response.content)


def test_estimate_leaves_decision_records(client):
    from decisions.models import Decision

    pods = [{"pod": owned(pod("rec", gpumem=30000)), "count": 3}, pod("ok", uid="ok-uid", gpumem=1000)]
    status, body = estimate(
        client, {"pods": pods, "nodeGroups": [group("a10", a10_node()), {"name": "noname", "template": {}}]}
    )
    assert status == 200
    rows = {d.pod_name: d for d in Decision.objects.filter(caller="estimate")}
    assert set(rows) == {"rec", "ok"}
    assert rows["rec"].verdict == "no_fit" and rows["ok"].fit_count == 1


def test_a_warm_group_adds_max_size_minus_its_live_nodes(client):
    """CA's room for a group is max size minus current size: a warm gpu-a10g (max 10, 2 live nodes)
    may add 8, a max size of 0 never grows, and the answer says what CA would ask for."""
    from django.utils import timezone

    ng = NodeGroupFactory(name="gpu-a10g", max_size=10, rows=[{**A10G, "quantity": 2}])
    for name in ("live-0", "live-1"):
        NodeInventoryFactory(name=name, node_group=ng)
    NodeInventoryFactory(name="gone", node_group=ng, gone_at=timezone.now())
    pods = [{"pod": pod("w", gpumem=12000), "count": 30}]
    status, body = estimate(client, {"pods": pods, "nodeGroups": ["gpu-a10g"], "maxNodesPerScaleUp": 0})
    assert status == 200, body
    [option] = body["options"]
    assert (option["nodeCount"], option["nodeLimit"], len(scheduled(body, option))) == (8, 8, 16)
    assert body["scaleUp"]["groups"] == [{"nodeGroup": "gpu-a10g", "currentSize": 2, "newSize": 10}]
    assert body["differencesFromCA"]
    status, body = estimate(client, {"pods": pods, "nodeGroups": ["gpu-a10g"], "maxNodesTotal": 5})
    assert body["options"][0]["nodeCount"] == 3  # 2 live nodes of at most 5 in the cluster
    ng.max_size = 0
    ng.save()
    status, body = estimate(client, {"pods": pods, "nodeGroups": ["gpu-a10g"]})
    assert body["chosen"] is None and body["options"][0]["skipped"].startswith("max node group size reached")


@pytest.mark.parametrize(
    ("extra", "chosen", "candidates"),
    [
        ({"expander": ["most-pods", "least-nodes"]}, "a", ["a", "b"]),
        ({"expander": "random"}, "a", ["a", "b"]),
        ({"expander": "random", "randomSeed": 3}, None, ["a", "b"]),
    ],
)
def test_random_and_chains_over_http(client, extra, chosen, candidates):
    groups = [group("a", a10_node("ta")), group("b", a10_node("tb"))]
    body = {"pods": [{"pod": pod("w", gpumem=1000), "count": 2}], "nodeGroups": groups, **extra}
    status, answer = estimate(client, body)
    assert status == 200, answer
    assert answer["candidates"] == candidates
    assert answer["chosen"] == chosen if chosen else answer["chosen"] in candidates


def test_daemon_sets_and_allocatable_over_http(client):
    """A DaemonSet's pod takes room on every fresh node; ``allocatable`` replaces the template's."""
    tmpl = a10_node("t")
    tmpl["status"] = {"capacity": {"cpu": "1", "memory": "4Gi", "pods": "110"}}
    p = pod("w", gpumem=100)
    p["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "400m"}
    ds = {
        "metadata": {"name": "logs", "namespace": "kube-system"},
        "spec": {
            "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "300m"}}}]}}
        },
    }
    body = {"pods": [{"pod": p, "count": 4}], "nodeGroups": [group("g", tmpl)]}
    status, answer = estimate(client, body)
    assert answer["options"][0]["nodeCount"] == 2
    status, answer = estimate(client, {**body, "daemonSets": [ds]})
    assert answer["options"][0]["nodeCount"] == 4
    assert answer["options"][0]["daemonSetPods"] == ["daemonset/kube-system/logs"]
    status, answer = estimate(
        client,
        {
            **body,
            "nodeGroups": [
                {**group("g", tmpl), "allocatable": {"cpu": "500m", "memory": "4Gi", "pods": "110"}}
            ],
        },
    )
    assert answer["options"][0]["nodeCount"] == 4
    status, answer = estimate(client, {**body, "daemonSets": "x"})
    assert status == 400 and "daemonSets" in answer["detail"]


@pytest.mark.parametrize(
    "expander,named,summed",
    [
        ("least-waste", "least-waste score", ("cpu", "memory")),
        ("least-waste-gpu", "least-waste-gpu score", ("cpu", "memory", "gpuMemory", "gpuCores")),
    ],
)
def test_the_explanation_names_what_each_waste_score_sums(client, expander, named, summed):
    """A least-waste score is two shares added: the explanation says so and shows that sum, not the
    sum of all four shares as "score"."""
    import re

    pods = [{"pod": owned(pod("w", gpumem=12000)), "count": 4}]
    status, body = estimate(client, {"pods": pods, "nodeGroups": _expander_groups(), "expander": expander})
    for option in body["options"]:
        shown = re.search(rf"'{option['nodeGroup']}': .*?{named} ([0-9.]+) = ([^;)]+)", body["explanation"])
        assert shown, body["explanation"]
        assert float(shown.group(1)) == pytest.approx(sum(option["waste"][k] for k in summed), abs=1e-3)
        assert shown.group(2).split(", of")[0] == " + ".join(summed)
    assert "(score " not in body["explanation"]


def test_node_devices_list_usage_and_the_option_lists_the_cards_once(client):
    """The compact answer: an option's ``devices`` are the template's cards (fixed fields, no usage);
    each new node gives their usage in that order, MIG instances in use included."""
    profiles = [
        {
            "name": "1g.5gb",
            "memoryMB": 5120,
            "core": 14,
            "sliceCount": 1,
            "placements": [{"start": s, "size": 1} for s in range(7)],
        }
    ]
    card = gpu("GPU-M", count=7, devmem=40960, type="NVIDIA A100-SXM4-40GB", mode="mig", migProfiles=profiles)
    body = {
        "pods": [{"pod": owned(pod("m", gpumem=4000)), "count": 9}],
        "nodeGroups": [group("mig", node("mig", [card]))],
    }
    status, answer = estimate(client, body)
    assert status == 200, answer
    [option] = answer["options"]
    assert option["devices"] == [
        {
            "uuid": "GPU-M",
            "index": 0,
            "type": "NVIDIA A100-SXM4-40GB",
            "count": 7,
            "devmem": 40960,
            "devcore": 100,
            "numa": 0,
            "mode": "mig",
            "health": True,
        }
    ]
    assert [len(node_pods(answer, n)) for n in option["nodes"]] == [7, 2]
    first = option["nodes"][0]["devices"][0]
    assert (first["used"], len(first["migInUse"])) == (7, 7) and "uuid" not in first
    assert option["nodes"][0]["pods"] == [[0, 7]] and option["nodes"][1]["pods"] == [[7, 2]]
