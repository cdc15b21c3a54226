"""The extender evaluates live nodes with their live usage: a full live
node fails with HAMi's reason while a template of the same group fits, fits again once the blocking
pod is gone, never trusts stale usage, and follows the watcher's pod events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
import pytest

from tests.estimate.answers import scheduled
from tests.factories import extender_args, pod
from tests.usage.conftest import gpu_node, hami_pod
from tests.usage.test_watch import watching
from tests.waiting import eventually

LIVE = "ip-10-0-1-11"
TEMPLATE = "template-node-for-gpu-a10-5c9f8"


def template_of(live: dict) -> dict:
    """What CA sends for the live node's group: a copy of it under a template name."""
    node = orjson.loads(orjson.dumps(live))
    node["metadata"]["name"] = TEMPLATE
    node["metadata"]["labels"]["kubernetes.io/hostname"] = TEMPLATE
    node["metadata"].pop("uid", None)
    return node


def big_pod() -> dict:
    return pod("train", gpu_count=4, gpumem=23000)


def filter_answer(client, nodes: list[dict], verb: str = "/filter-simulation"):
    response = client.post(verb, extender_args(big_pod(), nodes), content_type="application/json")
    assert response.status_code == 200
    return orjson.loads(response.content)


def fill(kube_api, *cards: int) -> None:
    kube_api.pods = [hami_pod(f"holder-{c}", LIVE, [(f"GPU-{LIVE}-{c}", 23000, 100)]) for c in cards]


@pytest.mark.django_db
def test_a_full_live_node_fails_while_its_template_fits_and_fits_again_when_freed(client, kube_api, source):
    from usage.cluster import sync_cluster
    from usage.store import get_store

    live = gpu_node(LIVE)
    kube_api.nodes = [live]
    fill(kube_api, 0, 1, 2, 3)
    sync_cluster(source)
    get_store().refresh(force=True)
    answer = filter_answer(client, [live, template_of(live)])
    assert [n["metadata"]["name"] for n in answer["Nodes"]["items"]] == [TEMPLATE]
    assert answer["FailedNodes"] == {LIVE: "4/4 CardInsufficientMemory"}
    scores = filter_answer(client, [live, template_of(live)], "/prioritize-simulation")
    assert [s["Host"] for s in scores] == [TEMPLATE]

    fill(kube_api, 0, 1, 2)  # one blocking pod deleted: still no room for four cards
    sync_cluster(source)
    get_store().refresh(force=True)
    assert filter_answer(client, [live])["FailedNodes"] == {
        LIVE: "1/4 AllocatedCardsInsufficientRequest, 3/4 CardInsufficientMemory"
    }

    fill(kube_api)  # the blocking pods are gone
    sync_cluster(source)
    get_store().refresh(force=True)
    answer = filter_answer(client, [live, template_of(live)])
    assert [n["metadata"]["name"] for n in answer["Nodes"]["items"]] == [LIVE, TEMPLATE]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("policy", "holders", "fits", "reason"),
    [
        ("fail", (), False, "live usage is stale: last confirmed"),
        ("fail", (0, 1, 2, 3), False, "live usage is stale: last confirmed"),
        # last-known: the usage last seen decides, with HAMi's own reasons, however old it is
        ("last-known", (), True, ""),
        ("last-known", (0, 1, 2, 3), False, "4/4 CardInsufficientMemory"),
        ("last-known", (0, 1, 2), False, "1/4 AllocatedCardsInsufficientRequest, 3/4 CardInsufficientMemory"),
        ("last-known", (3,), False, "1/4 CardInsufficientMemory, 3/4 AllocatedCardsInsufficientRequest"),
    ],
)
def test_stale_usage_answers_per_the_policy(
    client, kube_api, source, settings, policy, holders, fits, reason
):
    from usage.cluster import sync_cluster
    from usage.store import get_store

    live = gpu_node(LIVE)
    kube_api.nodes = [live]
    fill(kube_api, *holders)
    sync_cluster(source)
    kube_api.pods = []  # the cluster moved on, but nobody read it again: the usage only ages
    settings.USAGE_STALE_SECONDS, settings.USAGE_STALE_POLICY = -1, policy  # every age is too old
    get_store().refresh(force=True)
    answer = filter_answer(client, [live, template_of(live)])
    names = [n["metadata"]["name"] for n in answer["Nodes"]["items"]]
    assert names == ([LIVE, TEMPLATE] if fits else [TEMPLATE])
    assert answer["FailedNodes"].get(LIVE, "").startswith(reason)
    assert fits or answer["FailedNodes"][LIVE]


@pytest.mark.django_db
def test_a_session_starts_live_nodes_from_live_usage(client, kube_api, source):
    from usage.cluster import sync_cluster
    from usage.store import get_store

    live = gpu_node(LIVE)
    kube_api.nodes = [live]
    fill(kube_api, 0)
    sync_cluster(source)
    get_store().refresh(force=True)
    session = client.post("/api/v1/sessions", {}, content_type="application/json").json()
    sid = session["id"]
    place = client.post(
        f"/api/v1/sessions/{sid}/placements",
        {"pod": pod("one", gpu_count=1, gpumem=20000), "nodeName": LIVE, "node": live},
        content_type="application/json",
    )
    assert place.status_code == 201, place.content
    state = client.get(f"/api/v1/sessions/{sid}").json()
    usedmem = {d["uuid"]: d["usedmem"] for n in state["nodes"] for d in n["devices"]}
    # card 0 keeps its live holder's 23000 MiB; the session's pod went to another card
    assert usedmem[f"GPU-{LIVE}-0"] == 23000 and sorted(usedmem.values()) == [0, 0, 20000, 23000]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_watch_events_alone_move_the_filter_answer_both_ways(client, kube_api, source):
    """No relist and no forced refresh: the watcher's pod events reach ``/filter-simulation`` with
    HAMi's reason, and the node fits again once the holders are deleted. How fast is a figure for
    ``bench/usage_bench.py``; ``eventually`` only bounds a hang."""
    live = gpu_node(LIVE)
    kube_api.add_node(live)

    def failed() -> dict:
        return filter_answer(client, [live])["FailedNodes"]

    with watching(source):
        assert kube_api.wait_for_watches(2)
        assert eventually(
            lambda: LIVE in [n["metadata"]["name"] for n in filter_answer(client, [live])["Nodes"]["items"]]
        )
        for c in range(4):
            kube_api.add_pod(hami_pod(f"holder-{c}", LIVE, [(f"GPU-{LIVE}-{c}", 23000, 100)]))
        full = {LIVE: "4/4 CardInsufficientMemory"}
        assert eventually(lambda: failed() == full, within=30), failed()
        for c in (3, 2, 1, 0):
            kube_api.delete_pod("ml", f"holder-{c}")
        assert eventually(lambda: not failed(), within=30), failed()
        assert filter_answer(client, [live])["Nodes"]["items"][0]["metadata"]["name"] == LIVE


@pytest.mark.django_db
def test_estimate_places_pods_on_live_nodes_first_when_asked(client, kube_api, source):
    from usage.cluster import sync_cluster

    live, other = gpu_node(LIVE), gpu_node("ip-10-0-1-12", cards=2)
    kube_api.nodes = [live, other]
    fill(kube_api, 0, 1, 2)  # ip-10-0-1-11 has one free card, ip-10-0-1-12 two
    sync_cluster(source)
    body = {
        "pods": [{"pod": pod("infer", gpu_count=1, gpumem=20000), "count": 5}],
        "nodeGroups": [{"name": "gpu-a10", "template": template_of(live)}],
    }
    plain = client.post("/api/v1/estimate", body, content_type="application/json").json()
    assert plain["options"][0]["nodeCount"] == 2 and "existingNodes" not in plain
    answer = client.post("/api/v1/estimate", {**body, "existingNodes": True}, content_type="application/json")
    assert answer.status_code == 200, answer.content
    data = answer.json()
    assert data["existingNodes"]["liveNodes"] == 2
    assert data["existingNodes"]["placements"] == [
        {"pod": "default/infer#0", "node": LIVE},
        {"pod": "default/infer#1", "node": "ip-10-0-1-12"},
        {"pod": "default/infer#2", "node": "ip-10-0-1-12"},
    ]
    assert data["existingNodes"]["scheduledPods"] == [[0, 3]]  # runs of the answer's pods
    option = data["options"][0]
    assert option["nodeCount"] == 1 and sorted(scheduled(data, option)) == [
        "default/infer#3",
        "default/infer#4",
    ]
    bad = client.post("/api/v1/estimate", {**body, "existingNodes": "yes"}, content_type="application/json")
    assert bad.status_code == 400 and "existingNodes" in bad.json()["detail"]


@pytest.mark.django_db
def test_usage_from_a_snapshot_file_never_goes_stale(client, tmp_path, settings):
    from usage.cluster import sync_cluster
    from usage.store import get_store

    live = gpu_node(LIVE)
    snapshot = tmp_path / "cluster.json"
    holders = [hami_pod(f"holder-{c}", LIVE, [(f"GPU-{LIVE}-{c}", 23000, 100)]) for c in range(4)]
    snapshot.write_bytes(orjson.dumps({"kind": "List", "items": [live, *holders]}))
    sync_cluster(f"file://{snapshot}")
    settings.USAGE_STALE_SECONDS = -1  # every age is too old, but a snapshot is a fixed picture
    get_store().refresh(force=True)
    assert filter_answer(client, [live])["FailedNodes"] == {LIVE: "4/4 CardInsufficientMemory"}


@pytest.mark.django_db
def test_a_live_metax_card_keeps_the_app_class_of_its_pods(client, kube_api, source):
    """HAMi's MetaX sGPU reads the app class of the pods on a card (``PodInfos``): on a live card
    holding an online pod an ordinary pod fails with ``CardAppClassMismatch``, while the template of
    the same group (no pods) fits, and an online pod fits the live card."""
    from usage.cluster import sync_cluster
    from usage.store import get_store

    name = "ip-10-0-2-21"
    card = {"uuid": "SGPU-0", "totalDevCount": 16, "totalCompute": 100, "totalVRam": 65536, "healthy": True}
    live = gpu_node(name, cards=0)
    live["metadata"]["annotations"] = {"metax-tech.com/node-gpu-devices": orjson.dumps([card]).decode()}
    kube_api.nodes = [live]
    holder = hami_pod(
        name="holder", node_name=name, devices=[], **{"metax-tech.com/sgpu-app-class": "online"}
    )
    holder["metadata"]["annotations"]["hami.io/metax-sgpu-devices-allocated"] = "SGPU-0,Metax-SGPU,1024,0:;"
    kube_api.pods = [holder]
    sync_cluster(source)
    get_store().refresh(force=True)
    assert get_store().get(name).devices["SGPU-0"].pod_infos == ({"metax-tech.com/sgpu-app-class": "online"},)
    resources = {
        "limits": {"metax-tech.com/sgpu": "1", "metax-tech.com/vcore": "10", "metax-tech.com/vmemory": "1"}
    }

    def asks(**annotations):
        p = pod(
            "q",
            containers=[{"name": "c", "image": "busybox", "resources": resources}],
            annotations=annotations,
        )
        response = client.post(
            "/filter-simulation", extender_args(p, [live, template_of(live)]), content_type="application/json"
        )
        assert response.status_code == 200
        return orjson.loads(response.content)

    ordinary = asks()
    assert [n["metadata"]["name"] for n in ordinary["Nodes"]["items"]] == [TEMPLATE]
    assert ordinary["FailedNodes"] == {name: "1/1 CardAppClassMismatch"}
    online = asks(**{"metax-tech.com/sgpu-app-class": "online"})
    assert [n["metadata"]["name"] for n in online["Nodes"]["items"]] == [name, TEMPLATE]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("stale_seconds", "policy"),
    [(3600, "fail"), (-1, "fail"), (-1, "last-known")],  # fresh, stale and failing, stale and kept
)
def test_one_calls_reader_answers_as_live_usage_does(kube_api, source, settings, stale_seconds, policy):
    """The extender reads the clock once per call (``live_usage_reader``); each node's answer is the
    one ``live_usage`` gives: the usage, the stale reason, or None for a template or unknown node."""
    from usage.cluster import sync_cluster
    from usage.live import live_usage, live_usage_reader
    from usage.store import get_store

    kube_api.nodes = [gpu_node(LIVE)]
    fill(kube_api, 0, 1)
    sync_cluster(source)
    settings.USAGE_STALE_SECONDS, settings.USAGE_STALE_POLICY = stale_seconds, policy
    get_store().refresh(force=True)
    read = live_usage_reader()
    for name in (LIVE, TEMPLATE, "ip-10-9-9-9"):
        want, got = live_usage(name), read(name)
        assert type(got) is type(want)
        assert got is want if not isinstance(want, str) else got.split(" ago")[0] == want.split(" ago")[0]
    assert (read(TEMPLATE), read("ip-10-9-9-9")) == (None, None)
    assert isinstance(read(LIVE), str) == (stale_seconds < 0 and policy == "fail")


_NOW = datetime(2026, 12, 5, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "observed_ago", "confirmed_ago", "snapshot", "policy"),
    [
        (LIVE, timedelta(seconds=10), None, False, "fail"),  # observed lately: fresh
        (LIVE, timedelta(seconds=600), None, False, "fail"),  # exactly the limit old: still fresh
        (LIVE, timedelta(seconds=600, microseconds=1), None, False, "fail"),  # a microsecond past: stale
        (LIVE, timedelta(seconds=700), None, False, "last-known"),  # stale, kept by the policy
        (LIVE, timedelta(seconds=700), timedelta(seconds=5), False, "fail"),  # confirmed lately: fresh
        (LIVE, timedelta(seconds=700), timedelta(seconds=900), False, "fail"),  # both old: stale
        (LIVE, timedelta(seconds=700), None, True, "fail"),  # a file:// snapshot never goes stale
        (TEMPLATE, timedelta(seconds=10), None, False, "fail"),  # a template is never live, held or not
        ("ip-10-9-9-9", timedelta(seconds=10), None, False, "fail"),  # not in the store: not live
    ],
)
def test_the_readers_fresh_shortcut_answers_as_live_usage_does(
    settings, name, observed_ago, confirmed_ago, snapshot, policy
):
    """A call's reader hands out a node observed or confirmed since the staleness cutoff at once;
    every answer, at and around the cutoff, is the one ``live_usage`` gives for the same state."""
    from usage.live import live_usage, live_usage_reader
    from usage.store import LiveUsage, StoreView, UsageStore

    settings.USAGE_STALE_SECONDS, settings.USAGE_STALE_POLICY = 600, policy
    held = {n: LiveUsage(n, {}, _NOW - observed_ago, 1, {}) for n in (LIVE, TEMPLATE)}
    confirmed = _NOW - confirmed_ago if confirmed_ago is not None else None
    view = StoreView(held, confirmed, snapshot, UsageStore())
    want, got = live_usage(name, _NOW, view), live_usage_reader(_NOW, view)(name)
    assert got is want if not isinstance(want, str) else got == want
