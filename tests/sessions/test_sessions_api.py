"""``/api/v1/sessions``: create/get/delete, placements, retries, conflicts, revisions, checkpoints."""

from __future__ import annotations

import uuid
from datetime import timedelta

import orjson
import pytest
from django.utils import timezone

from hami_sim.runtime.models import TaskRun
from simulations.models import SimulationSession
from simulations.tasks import expire_sessions
from tests.factories import extender_args, gpu, node, pod

from .conftest import a10_node, chosen

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def test_create_get_delete(api):
    created = api.create(name="ca-loop-1", ttlSeconds=60)
    assert created["revision"] == 0 and created["depth"] == 0
    assert created["nodes"] == [] and created["placements"] == []
    assert created["name"] == "ca-loop-1"
    got = api.get(created["id"])
    assert got["id"] == created["id"] and got["expiresAt"] == created["expiresAt"]
    status, _ = api.call("delete", f"/api/v1/sessions/{created['id']}")
    assert status == 204
    status, body = api.call("get", f"/api/v1/sessions/{created['id']}")
    assert status == 404 and "unknown or expired session" in body["detail"]


def test_create_defaults_and_bad_input(api):
    created = api.create()
    assert created["name"] == ""
    for body, text in (
        ({"ttlSeconds": -5}, "ttlSeconds"),
        ({"ttlSeconds": 0}, "ttlSeconds"),
        ({"ttlSeconds": 86401}, "ttlSeconds"),
        ({"ttlSeconds": "60"}, "ttlSeconds"),
        ({"name": 7}, "name"),
        ({"name": "a\u0000b"}, "NUL"),
        ([1, 2], "object"),
    ):
        status, payload = api.call("post", "/api/v1/sessions", body)
        assert status == 400 and text in payload["detail"], (body, payload)
    status, payload = (
        api.client.post("/api/v1/sessions", b"{nope", content_type="application/json").status_code,
        None,
    )
    assert status == 400
    assert SimulationSession.objects.count() == 1


def test_unknown_and_malformed_session_ids_are_404_json(api):
    for sid in (str(uuid.uuid4()), "not-a-uuid"):
        for method, path in (
            ("get", f"/api/v1/sessions/{sid}"),
            ("delete", f"/api/v1/sessions/{sid}"),
            ("post", f"/api/v1/sessions/{sid}/fork"),
            ("post", f"/api/v1/sessions/{sid}/revert"),
            ("post", f"/api/v1/sessions/{sid}/commit"),
            ("delete", f"/api/v1/sessions/{sid}/placements/x"),
        ):
            status, body = api.call(method, path)
            assert status == 404 and body["detail"] == f"unknown or expired session {sid}", (method, path)
        status, body = api.place(sid, pod(uid="p"), a10_node())
        assert status == 404


def test_placement_uses_hami_device_choice_and_carries_usage(api):
    sid = api.create()["id"]
    tmpl = a10_node()
    status, first = api.place(sid, pod("a", uid="a", gpumem=12000), tmpl)
    assert status == 201, first
    assert first["podUID"] == "a" and first["nodeName"] == "tmpl-a10" and first["revision"] == 1
    assert first["containers"] == [
        [{"uuid": chosen(first)[0], "type": "NVIDIA", "usedmem": 12000, "usedcores": 0}]
    ]
    status, second = api.place(sid, pod("b", uid="b", gpumem=12000), node_name="tmpl-a10")
    assert status == 201 and second["revision"] == 2
    assert chosen(second) != chosen(first), "the second 12000 MiB pod must take the other card"
    status, third = api.place(sid, pod("c", uid="c", gpumem=12000), node_name="tmpl-a10")
    assert status == 422
    assert third == {"detail": "pod does not fit", "reason": "2/2 CardInsufficientMemory"}
    state = api.get(sid)
    assert state["revision"] == 2
    [n] = state["nodes"]
    assert n["name"] == "tmpl-a10"
    assert sorted((d["uuid"], d["used"], d["usedmem"]) for d in n["devices"]) == [
        ("GPU-tmpl-a10-0", 1, 12000),
        ("GPU-tmpl-a10-1", 1, 12000),
    ]
    assert set(n["devices"][0]) >= {
        "uuid",
        "index",
        "type",
        "count",
        "used",
        "devmem",
        "usedmem",
        "devcore",
        "usedcores",
        "numa",
        "mode",
        "health",
    }
    assert [(p["podUID"], p["name"], p["namespace"]) for p in state["placements"]] == [
        ("a", "a", "default"),
        ("b", "b", "default"),
    ]


def test_identical_retry_is_noop_and_conflicts_are_409(api):
    sid = api.create()["id"]
    tmpl = a10_node()
    other = a10_node("tmpl-other")
    status, first = api.place(sid, pod("a", uid="a", gpumem=1000), tmpl)
    assert status == 201
    status, again = api.place(sid, pod("a", uid="a", gpumem=1000), tmpl)
    assert status == 200 and again == first
    status, again = api.place(sid, pod("a", uid="a", gpumem=1000), node_name="tmpl-a10", **{"If-Match": "0"})
    assert status == 200 and again["revision"] == 1  # a retry of a success is still a success
    status, body = api.place(sid, pod("a", uid="a", gpumem=1000), other)
    assert status == 409 and "already placed on node tmpl-a10" in body["detail"]
    changed = a10_node(devmem=40000)
    status, body = api.place(sid, pod("b", uid="b", gpumem=1000), changed)
    assert status == 409 and "template changed" in body["detail"]
    state = api.get(sid)
    assert state["revision"] == 1 and [n["name"] for n in state["nodes"]] == ["tmpl-a10"]


def test_failed_placement_changes_nothing_not_even_the_node_list(api):
    sid = api.create()["id"]
    status, body = api.place(sid, pod("big", uid="big", gpumem=30000), a10_node())
    assert status == 422 and body["reason"] == "2/2 CardInsufficientMemory"
    status, body = api.place(sid, pod("x", uid="x"), node("cold", None))
    assert status == 422 and body["reason"] == "node unregistered"
    state = api.get(sid)
    assert state["nodes"] == [] and state["placements"] == [] and state["revision"] == 0


def test_bad_placement_input_is_400_and_changes_nothing(api):
    sid = api.create()["id"]
    tmpl = a10_node()
    cases = [
        ({"pod": pod(uid="p")}, "node"),
        ({"pod": pod(uid="p"), "nodeName": "never-seen"}, "unknown nodeName"),
        ({"node": tmpl}, "pod"),
        ({"pod": "x", "node": tmpl}, "pod"),
        ({"pod": pod(uid="p"), "node": {"metadata": {}}}, "metadata.name"),
        (
            {
                "pod": pod(uid="p"),
                "node": {"metadata": {"name": "n", "annotations": {"hami.io/node-nvidia-register": 5}}},
            },
            "must be a string",
        ),
        ({"pod": {"metadata": {"uid": "p"}, "spec": {"containers": "no"}}, "node": tmpl}, "malformed pod"),
        ({"pod": pod(uid="p", gpumem="lots"), "node": tmpl}, "malformed pod"),
        ({"pod": pod(uid="p"), "node": tmpl, "nodeName": "other"}, "differs"),
        ({"pod": pod(uid="p" * 301), "node": tmpl}, "at most 300"),
        ({"pod": pod(uid="p"), "node": a10_node("n" * 254)}, "at most 253"),
        ({"pod": pod("nul\u0000", uid="p"), "node": tmpl}, "NUL"),
    ]
    for body, text in cases:
        status, payload = api.call("post", f"/api/v1/sessions/{sid}/placements", body)
        assert status == 400 and text in payload["detail"], (body, payload)
    status = api.client.post(
        f"/api/v1/sessions/{sid}/placements", b"[", content_type="application/json"
    ).status_code
    assert status == 400
    assert api.get(sid)["revision"] == 0


def test_bad_scoring_weights_is_422_with_hami_text(api):
    sid = api.create()["id"]
    bad = pod("w", uid="w", annotations={"hami.io/device-scoring-weights": "slot=1"})
    status, body = api.place(sid, bad, a10_node())
    assert status == 422
    assert body["reason"].startswith(
        'calcScore failed invalid hami.io/device-scoring-weights annotation "slot=1"'
    )


def test_remove_placement_restores_usage(api):
    sid = api.create()["id"]
    api.place(sid, pod("a", uid="a", gpumem=12000), a10_node())
    status, _ = api.place(sid, pod("b", uid="b", gpumem=3000, gpucores=30), node_name="tmpl-a10")
    assert status == 201
    status, body = api.call("delete", f"/api/v1/sessions/{sid}/placements/a")
    assert status == 200 and body["revision"] == 3
    state = api.get(sid)
    assert [p["podUID"] for p in state["placements"]] == ["b"]
    assert sum(d["usedmem"] for d in state["nodes"][0]["devices"]) == 3000
    assert sum(d["usedcores"] for d in state["nodes"][0]["devices"]) == 30
    status, body = api.call("delete", f"/api/v1/sessions/{sid}/placements/a")
    assert status == 404 and "not placed" in body["detail"]
    # pod ids without uid are <namespace>/<name> and still addressable
    status, placed = api.place(sid, pod("named", namespace="ml"), node_name="tmpl-a10")
    assert status == 201 and placed["podUID"] == "ml/named"
    status, _ = api.call("delete", f"/api/v1/sessions/{sid}/placements/ml/named")
    assert status == 200


def test_if_match_revisions(api):
    sid = api.create()["id"]
    status, body = api.place(sid, pod("a", uid="a"), a10_node(), **{"If-Match": "0"})
    assert status == 201 and body["revision"] == 1
    response = api.client.get(f"/api/v1/sessions/{sid}")
    assert response["ETag"] == '"1"'
    status, body = api.place(sid, pod("b", uid="b"), node_name="tmpl-a10", **{"If-Match": "0"})
    assert status == 412 and body["revision"] == 1
    status, body = api.place(sid, pod("b", uid="b"), node_name="tmpl-a10", **{"If-Match": '"1"'})
    assert status == 201 and body["revision"] == 2
    for method, path in (
        ("post", "fork"),
        ("post", "commit"),
        ("post", "revert"),
        ("delete", "placements/a"),
    ):
        status, body = api.call(method, f"/api/v1/sessions/{sid}/{path}", **{"If-Match": "1"})
        assert status == 412, path
    status, body = api.call("post", f"/api/v1/sessions/{sid}/fork", **{"If-Match": "abc"})
    assert status == 400
    status, body = api.call("post", f"/api/v1/sessions/{sid}/fork", **{"If-Match": "*"})
    assert status == 200
    assert api.get(sid)["revision"] == 3


def test_fork_revert_commit_restore_exact_state(api):
    sid = api.create()["id"]
    api.place(sid, pod("a", uid="a", gpumem=5000), a10_node())
    before = api.get(sid)
    status, body = api.call("post", f"/api/v1/sessions/{sid}/fork")
    assert status == 200 and body["depth"] == 1
    api.place(sid, pod("b", uid="b", gpumem=5000), node_name="tmpl-a10")
    api.place(sid, pod("c", uid="c", gpumem=5000), a10_node("tmpl-b"))
    api.call("delete", f"/api/v1/sessions/{sid}/placements/a")
    status, body = api.call("post", f"/api/v1/sessions/{sid}/revert")
    assert status == 200 and body == {"depth": 0, "revision": 6}
    after = api.get(sid)
    assert after["nodes"] == before["nodes"] and after["placements"] == before["placements"]
    assert after["revision"] == 6  # never goes back
    status, body = api.call("post", f"/api/v1/sessions/{sid}/revert")
    assert status == 409 and "no checkpoint" in body["detail"]
    status, body = api.call("post", f"/api/v1/sessions/{sid}/commit")
    assert status == 409
    api.call("post", f"/api/v1/sessions/{sid}/fork")
    api.place(sid, pod("d", uid="d", gpumem=5000), node_name="tmpl-a10")
    status, body = api.call("post", f"/api/v1/sessions/{sid}/commit")
    assert status == 200 and body["depth"] == 0
    assert [p["podUID"] for p in api.get(sid)["placements"]] == ["a", "d"]


def test_revert_restores_mig_placements(api):
    profiles = [
        {
            "name": "1g.5gb",
            "memoryMB": 5120,
            "core": 14,
            "sliceCount": 1,
            "placements": [{"start": s, "size": 1} for s in range(7)],
        },
        {
            "name": "3g.20gb",
            "memoryMB": 20480,
            "core": 42,
            "sliceCount": 3,
            "placements": [{"start": 0, "size": 4}, {"start": 4, "size": 4}],
        },
    ]
    tmpl = node(
        "mig",
        [gpu("GPU-M", count=7, devmem=40960, type="NVIDIA A100-SXM4-40GB", mode="mig", migProfiles=profiles)],
    )
    sid = api.create()["id"]
    status, first = api.place(sid, pod("m1", uid="m1", gpumem=4000), tmpl)
    assert status == 201, first
    assert first["containers"][0][0]["migProfile"] == "1g.5gb"
    assert first["containers"][0][0]["migPlacement"] == {"start": 6, "size": 1}
    before = api.get(sid)
    assert before["nodes"][0]["devices"][0]["migInUse"] == [{"profile": "1g.5gb", "start": 6, "size": 1}]
    api.call("post", f"/api/v1/sessions/{sid}/fork")
    status, second = api.place(sid, pod("m2", uid="m2", gpumem=15000), node_name="mig")
    assert status == 201 and second["containers"][0][0]["migProfile"] == "3g.20gb"
    assert len(api.get(sid)["nodes"][0]["devices"][0]["migInUse"]) == 2
    api.call("post", f"/api/v1/sessions/{sid}/revert")
    after = api.get(sid)
    assert after["nodes"] == before["nodes"] and after["placements"] == before["placements"]
    # removing the placement frees the MIG slot too
    api.call("delete", f"/api/v1/sessions/{sid}/placements/m1")
    dev = api.get(sid)["nodes"][0]["devices"][0]
    assert dev["migInUse"] == [] and dev["used"] == 0 and dev["usedmem"] == 0


def test_session_scoped_filter_and_prioritize_see_session_usage(api):
    sid = api.create()["id"]
    tmpl = a10_node()
    fresh = a10_node("tmpl-fresh")
    api.place(sid, pod("a", uid="a", gpumem=12000), tmpl)
    api.place(sid, pod("b", uid="b", gpumem=12000), node_name="tmpl-a10")
    body = extender_args(pod("c", uid="c", gpumem=12000), [tmpl, fresh])
    plain = orjson.loads(api.client.post("/filter-simulation", body, content_type="application/json").content)
    assert [n["metadata"]["name"] for n in plain["Nodes"]["items"]] == ["tmpl-a10", "tmpl-fresh"]
    scoped = orjson.loads(
        api.client.post(f"/sessions/{sid}/filter-simulation", body, content_type="application/json").content
    )
    assert [n["metadata"]["name"] for n in scoped["Nodes"]["items"]] == ["tmpl-fresh"]
    assert scoped["FailedNodes"] == {"tmpl-a10": "2/2 CardInsufficientMemory"} and scoped["Error"] == ""
    from decisions.models import Decision

    record = Decision.objects.get(caller="session", pod_name="c")
    assert record.session == sid and record.fit_count == 1
    small = extender_args(pod("d", uid="d", gpumem=1000), [tmpl, fresh])
    scores = orjson.loads(
        api.client.post(
            f"/sessions/{sid}/prioritize-simulation", small, content_type="application/json"
        ).content
    )
    by_host = {s["Host"]: s["Score"] for s in scores}
    assert by_host["tmpl-a10"] > by_host["tmpl-fresh"]  # binpack prefers the node the session already uses
    assert api.get(sid)["revision"] == 2  # read-only


def test_session_scoped_verbs_for_unknown_session(api):
    sid = str(uuid.uuid4())
    body = extender_args(pod(uid="c"), [a10_node()])
    response = api.client.post(f"/sessions/{sid}/filter-simulation", body, content_type="application/json")
    assert response.status_code == 200
    answer = orjson.loads(response.content)
    assert answer["Error"] == f"unknown or expired session {sid}" and answer["Nodes"] is None
    response = api.client.post(
        f"/sessions/{sid}/prioritize-simulation", body, content_type="application/json"
    )
    assert response.status_code == 200 and orjson.loads(response.content) == []


def test_expired_sessions_are_gone_and_the_task_deletes_them(api):
    live = api.create(ttlSeconds=600)["id"]
    old = api.create(ttlSeconds=1)["id"]
    SimulationSession.objects.filter(pk=old).update(expires_at=timezone.now() - timedelta(seconds=1))
    status, _ = api.call("get", f"/api/v1/sessions/{old}")
    assert status == 404
    body = extender_args(pod(uid="c"), [a10_node()])
    answer = orjson.loads(
        api.client.post(f"/sessions/{old}/filter-simulation", body, content_type="application/json").content
    )
    assert answer["Error"] == f"unknown or expired session {old}"
    assert expire_sessions.apply().get() == 1
    assert list(SimulationSession.objects.values_list("pk", flat=True)) == [uuid.UUID(live)]
    run = TaskRun.objects.filter(task="expire_sessions").latest("started_at")
    assert run.outcome == "success" and run.counts == {"deleted": 1}
    assert expire_sessions.apply().get() == 0  # idempotent


def test_mutation_refreshes_ttl(api):
    created = api.create(ttlSeconds=120)
    sid = created["id"]
    SimulationSession.objects.filter(pk=sid).update(expires_at=timezone.now() + timedelta(seconds=5))
    api.place(sid, pod("a", uid="a"), a10_node())
    session = SimulationSession.objects.get(pk=sid)
    assert session.expires_at > timezone.now() + timedelta(seconds=100)


def test_cold_group_template_gets_the_profile_inventory(api):
    from tests.factories.models import A10G, NodeGroupFactory

    NodeGroupFactory(name="gpu-a10g", rows=[{**A10G, "quantity": 2}])
    cold = node("template-node-for-gpu-a10g-8a7f", None, labels={"eks.amazonaws.com/nodegroup": "gpu-a10g"})
    sid = api.create()["id"]
    status, body = api.place(sid, pod("a", uid="a", gpumem=12000), cold)
    assert status == 201, body
    status, body = api.place(sid, pod("b", uid="b", gpumem=12000), node_name=cold["metadata"]["name"])
    assert status == 201
    status, body = api.place(sid, pod("c", uid="c", gpumem=12000), node_name=cold["metadata"]["name"])
    assert status == 422 and body["reason"] == "2/2 CardInsufficientMemory"
    [n] = api.get(sid)["nodes"]
    assert n["nodeGroup"] == "gpu-a10g"
    assert [(d["type"], d["devmem"], d["used"]) for d in n["devices"]] == [("NVIDIA A10G", 23028, 1)] * 2


def test_unregistered_node_admits_device_less_pods_only(api):
    sid = api.create()["id"]
    cold = node("cold", None)
    status, body = api.place(sid, pod("web", uid="web", gpu_count=None), cold)
    assert status == 201 and body["containers"] == [[]]
    status, body = api.place(sid, pod("gpu", uid="gpu"), node_name="cold")
    assert status == 422 and body["reason"] == "node unregistered"
    state = api.get(sid)
    assert [n["name"] for n in state["nodes"]] == ["cold"] and state["nodes"][0]["devices"] == []
    assert state["revision"] == 1


# -- the one API style: listing, error shape ------------------------------------------------------------


def test_list_sessions_newest_first_paginated_without_expired(api):
    ids = [api.create(name=f"loop-{i}")["id"] for i in range(3)]
    SimulationSession.objects.filter(pk=ids[0]).update(expires_at=timezone.now() - timedelta(seconds=1))
    status, page = api.call("get", "/api/v1/sessions?limit=1")
    assert status == 200 and page["count"] == 2 and page["next"]
    assert [s["id"] for s in page["results"]] == [ids[2]]
    assert set(page["results"][0]) == {
        "id",
        "name",
        "owner",
        "revision",
        "depth",
        "expiresAt",
        "hamiVersion",
        "caVersion",
    }
    assert page["results"][0]["owner"] == "anonymous"  # the demo listener's anonymous caller
    status, page = api.call("get", "/api/v1/sessions/")
    assert [(s["id"], s["name"]) for s in page["results"]] == [(ids[2], "loop-2"), (ids[1], "loop-1")]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"ttlSeconds": 0}, "ttlSeconds"),
        ({"ttlSeconds": "60"}, "ttlSeconds"),
        ({"name": 7}, "name"),
        ({"name": "n" * 201}, "name"),
    ],
)
def test_request_serializer_errors_carry_detail_and_the_field(api, body, field):
    status, payload = api.call("post", "/api/v1/sessions", body)
    assert status == 400 and field in payload["detail"]
    assert isinstance(payload[field], list) and payload[field]
    assert SimulationSession.objects.count() == 0


def test_placement_body_must_be_json(api):
    sid = api.create()["id"]
    response = api.client.post(f"/api/v1/sessions/{sid}/placements", "pod=x", content_type="text/plain")
    assert response.status_code == 415 and "text/plain" in orjson.loads(response.content)["detail"]
    status, payload = api.call("get", f"/api/v1/sessions/{sid}/placements")
    assert status == 405 and payload["detail"]
    assert api.get(sid)["revision"] == 0


def test_revision_mismatch_is_412_with_the_current_revision(api):
    sid = api.create()["id"]
    api.place(sid, pod("a", uid="a", gpumem=1000), a10_node())
    status, payload = api.call("post", f"/api/v1/sessions/{sid}/fork", None, **{"If-Match": "0"})
    assert status == 412 and payload["revision"] == 1 and "revision mismatch" in payload["detail"]
