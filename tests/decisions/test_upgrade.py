"""``GET /api/v1/upgrade?release=``: the pending pods (read by the cluster sync through the API double)
and the pods of recent decisions, judged under the configured HAMi release and another, and every pod
whose verdict, node group or devices change, with the rule that changes it."""

from __future__ import annotations

import pytest

from tests.factories import container, extender_args, gpu, node, pod
from tests.factories.models import NodeGroupFactory
from tests.profiles.conftest import A10, H100

pytestmark = [pytest.mark.django_db, pytest.mark.api]

ONE_CARD = [gpu("GPU-0", devmem=23028, type="NVIDIA A10G")]
INIT_RULE = "v2.10: each init container is fitted alone"


def pending(name: str, *, main: int, init: int | None = None) -> dict:
    """A pod waiting for a node, as the API server lists it (CA considers it: Unschedulable)."""
    obj = pod(
        name,
        namespace="ml",
        uid=f"uid-{name}",
        containers=[container("main", gpumem=main)],
        init=[container("fetch", gpumem=init)] if init else None,
    )
    obj["metadata"]["creationTimestamp"] = f"2026-12-01T00:00:0{len(name) % 10}Z"
    obj["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
    }
    return obj


@pytest.fixture
def cluster(tmp_path, settings):
    """gpu-a10: one A10G card per node; the cluster sync has read the pending pods of ``api.pods``."""
    from hami_sim.runtime.simulator import get_simulator
    from profiles.tasks import sync_cluster_inventory
    from tests.kubeapi import FakeKubeAPI

    settings.HAMI_VERSION = "2.10"
    get_simulator.cache_clear()
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 1}])
    with FakeKubeAPI() as api:
        source = f"kubeconfig:{api.write_kubeconfig(tmp_path / 'kubeconfig')}"

        def sync(*pods: dict, nodes: tuple = ()) -> None:
            api.pods, api.nodes = list(pods), list(nodes)
            sync_cluster_inventory.apply(kwargs={"source": source}).get()

        yield sync


def _upgrade(client, release: str | None):
    query = "" if release is None else f"?release={release}"
    return client.get(f"/api/v1/upgrade{query}")


def test_a_pod_whose_init_container_outgrows_its_main_one_changes_with_the_init_rule(client, cluster):
    cluster(pending("train", main=10000, init=20000), pending("small", main=1000))
    answer = _upgrade(client, "2.9").json()
    assert (answer["current"], answer["release"], answer["judged"], answer["capped"]) == (
        "2.10",
        "2.9",
        2,
        False,
    )
    assert "init_containers" in {d["rule"] for d in answer["differences"]}
    [change] = answer["changes"]  # "small" fits alike under both
    assert change["pod"] == {
        "namespace": "ml",
        "name": "train",
        "uid": "uid-train",
        "source": "pending",
        "decision": None,
    }
    assert change["changed"] == ["verdict"]
    assert change["current"]["fits"] and change["current"]["nodeGroup"] == "gpu-a10"
    assert change["current"]["node"] is None  # a new node: no live node holds it
    assert not change["other"]["fits"] and "CardInsufficientMemory" in change["other"]["reason"]
    assert [(r["rule"], r["pr"]) for r in change["rules"]] == [("init_containers", 1773)]
    assert change["together"] is False
    assert change["sentence"] == f"{INIT_RULE}: fits on a new gpu-a10 node under 2.10, not under 2.9"


def test_a_pod_another_release_sends_to_another_group(client, cluster):
    """Both groups hold it under 2.10 and binpack picks the fuller new node (the A10G); under 2.9 only
    the H100's card holds the init and main containers' memory added up."""
    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 1}])
    cluster(pending("train", main=10000, init=20000))
    [change] = _upgrade(client, "2.9").json()["changes"]
    assert change["changed"] == ["group"]
    assert (change["current"]["nodeGroup"], change["other"]["nodeGroup"]) == ("gpu-a10", "gpu-h100")
    assert (
        change["sentence"]
        == f"{INIT_RULE}: goes to a new gpu-a10 node under 2.10, to a new gpu-h100 node under 2.9"
    )


def test_a_live_node_that_holds_the_pod_is_where_it_goes(client, cluster):
    """A live node of the group with a free card: under 2.10 the pod goes there (no new node)."""
    live = node("ip-10-0-0-1", ONE_CARD, labels={"eks.amazonaws.com/nodegroup": "gpu-a10"})
    cluster(pending("train", main=10000, init=20000), nodes=(live,))
    [change] = _upgrade(client, "2.9").json()["changes"]
    assert (change["current"]["node"], change["current"]["nodeGroup"]) == ("ip-10-0-0-1", "gpu-a10")
    assert change["current"]["devices"] == [["GPU-0"], ["GPU-0"]]
    assert change["sentence"].endswith("fits on ip-10-0-0-1 (gpu-a10) under 2.10, not under 2.9")


def test_under_2_8_the_init_container_takes_no_device(client, cluster):
    """v2.8 ignores init containers: the pod fits under both, but its init container's card differs."""
    cluster(pending("train", main=10000, init=20000))
    [change] = _upgrade(client, "v2.8.3").json()["changes"]
    assert change["changed"] == ["devices"]
    init_now, main_now = change["current"]["devices"]
    assert len(init_now) == 1 and main_now == init_now  # both on the one card, one after the other
    assert change["other"]["devices"] == [[], main_now]
    assert [r["rule"] for r in change["rules"]] == ["init_containers"]


def test_the_pods_of_recent_decisions_are_judged_too(client, cluster):
    """A pod CA asked about (no longer pending) is judged from what its decision kept."""
    cluster()
    asked = pod("infer", namespace="ml", uid="uid-infer", containers=[container("main", gpumem=10000)])
    asked["spec"]["initContainers"] = [container("fetch", gpumem=20000)]
    body = extender_args(asked, [node("template-node-for-gpu-a10-1", ONE_CARD)])
    assert client.post("/filter-simulation", body, content_type="application/json").status_code == 200
    from decisions.models import Decision

    decision = Decision.objects.get()
    [change] = _upgrade(client, "2.9").json()["changes"]
    assert change["pod"] == {
        "namespace": "ml",
        "name": "infer",
        "uid": "uid-infer",
        "source": "decision",
        "decision": decision.pk,
    }
    assert change["sentence"].startswith(INIT_RULE)


def test_the_same_release_changes_nothing(client, cluster):
    cluster(pending("train", main=10000, init=20000))
    answer = _upgrade(client, "2.10").json()
    assert (answer["differences"], answer["changes"], answer["judged"]) == ([], [], 1)


def test_the_work_is_capped_and_the_answer_says_so(client, cluster, monkeypatch):
    from decisions import upgrade

    monkeypatch.setattr(upgrade, "MAX_PODS", 1)
    cluster(pending("a", main=10000, init=20000), pending("bb", main=10000, init=20000))
    answer = _upgrade(client, "2.9").json()
    assert (answer["judged"], answer["cap"], answer["capped"]) == (1, 1, True)
    assert [c["pod"]["name"] for c in answer["changes"]] == ["a"]  # the oldest pending pod first


def test_a_cluster_of_many_nodes_judges_fewer_pods(client, cluster, monkeypatch):
    """The cap follows the work: pods x candidate nodes x rule sets stay within the budget."""
    from decisions import upgrade
    from hami_sim.engine.hami_releases import rule_differences

    rule_sets = 2 + len(rule_differences("2.10", "2.9"))
    monkeypatch.setattr(upgrade, "EVALUATION_BUDGET", 2 * rule_sets)  # one group's template: 2 pods
    cluster(*(pending(f"p{i}", main=10000, init=20000) for i in range(3)))
    answer = _upgrade(client, "2.9").json()
    assert (answer["judged"], answer["cap"], answer["capped"]) == (2, 2, True)


@pytest.mark.parametrize(
    ("release", "detail"),
    [
        (None, "release: required, one of 2.8, 2.9, 2.10"),
        ("", "release: required, one of 2.8, 2.9, 2.10"),
        (
            "2.7",
            "release: HAMi release '2.7' is not supported: hami-sim follows 2.8 (v2.8.3), 2.9 (v2.9.0), 2.10 (v2.10.0)",
        ),
        ("newest", "release: HAMi release 'newest' is not supported"),
    ],
)
def test_a_bad_release_is_a_400_in_the_apis_error_shape(client, release, detail):
    response = _upgrade(client, release)
    assert response.status_code == 400
    assert set(response.json()) == {"detail"} and response.json()["detail"].startswith(detail)


def test_the_endpoint_is_in_the_openapi_schema(client):
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/upgrade/"]["get"]
    [param] = [p for p in operation["parameters"] if p["name"] == "release"]
    assert param["required"] is True and set(param["schema"]["enum"]) == {"2.8", "2.9", "2.10"}
    assert {"200", "400"} <= set(operation["responses"])


# -- shapes: the comparison judges each pod shape once per rule set (``upgrade._Judges``); pods that
# differ only in name, namespace or uid share an outcome. The rules it names are the ones judging
# every pod on its own names (``_shape`` returning None), and other annotations are another shape.
def pinned(name: str) -> dict:
    """The init-outgrowing shape, kept off A10G cards by an annotation: no card under either release."""
    obj = pending(name, main=10000, init=20000)
    obj["metadata"].setdefault("annotations", {})["nvidia.com/nouse-gputype"] = "A10G"
    return obj


def _rules(answer: dict) -> dict[str, list[str]]:
    return {c["pod"]["name"]: [r["rule"] for r in c["rules"]] for c in answer["changes"]}


@pytest.mark.parametrize(
    ("release", "pods", "expected"),
    [
        # two replicas of one shape: both change with the init rule, the second from the first's outcome
        (
            "2.9",
            lambda: [pending("train", main=10000, init=20000), pending("replica", main=10000, init=20000),
                     pending("small", main=1000)],
            {"train": ["init_containers"], "replica": ["init_containers"]},
        ),
        # the same spec with another annotation is another shape: it fits under neither release
        (
            "2.9",
            lambda: [pending("train", main=10000, init=20000), pinned("pinned")],
            {"train": ["init_containers"]},
        ),
        # under 2.8 the init container takes no device: the devices change, by the same rule
        (
            "v2.8.3",
            lambda: [pending("train", main=10000, init=20000), pending("replica", main=10000, init=20000)],
            {"train": ["init_containers"], "replica": ["init_containers"]},
        ),
    ],
)  # fmt: skip
def test_shared_shapes_name_the_same_rules_as_judging_each_pod_alone(
    client, cluster, monkeypatch, release, pods, expected
):
    from decisions import upgrade

    cluster(*pods())
    shared = _upgrade(client, release).json()
    assert _rules(shared) == expected
    monkeypatch.setattr(upgrade, "_shape", lambda pod: None)  # every pod judged on its own
    alone = _upgrade(client, release).json()
    assert shared["changes"] == alone["changes"] and shared["judged"] == alone["judged"]
