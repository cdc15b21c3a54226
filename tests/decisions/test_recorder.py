"""Every filter answer leaves a decision record; repeats fold; recording never breaks the answer."""

from __future__ import annotations

import orjson
import pytest
from django.db import connection

from decisions import recorder
from decisions.models import Decision
from tests.factories import extender_args, gpu, node, pod

pytestmark = [pytest.mark.api]

A10 = [gpu("GPU-a10-0", devmem=23028), gpu("GPU-a10-1", index=1, devmem=23028)]
T4 = [gpu("GPU-t4-0", devmem=15360, type="NVIDIA Tesla T4")]


def _ask(client, pod_obj, nodes):
    response = client.post(
        "/filter-simulation", extender_args(pod_obj, nodes), content_type="application/json"
    )
    assert response.status_code == 200
    return orjson.loads(response.content)


@pytest.fixture
def sync_recording(settings):
    settings.DECISION_RECORDING = "sync"


@pytest.mark.django_db
def test_filter_call_is_recorded_with_node_and_device_detail(client, sync_recording):
    p = pod("trainer", gpumem=20000, gpucores=30, uid="uid-trainer")
    answer = _ask(client, p, [node("tmpl-a10", A10), node("tmpl-t4", T4)])
    assert answer["FailedNodes"] == {"tmpl-t4": "1/1 CardInsufficientMemory"}

    d = Decision.objects.get()
    assert (d.pod_uid, d.pod_name, d.pod_namespace, d.caller) == (
        "uid-trainer",
        "trainer",
        "default",
        "extender",
    )
    assert d.verdict == "fit" and d.fit_count == 1 and d.node_count == 2
    assert d.top_reason == "CardInsufficientMemory"
    assert d.request == [{"NVIDIA": {"nums": 1, "memreq": 20000, "mem_percentage_req": 101, "coresreq": 30}}]
    nodes = {n["name"]: n for n in d.nodes}
    t4 = nodes["tmpl-t4"]
    assert t4["fits"] is False and t4["reason"] == "1/1 CardInsufficientMemory"
    assert [(dev["uuid"], dev["verdict"], dev["reason"]) for dev in t4["devices"]] == [
        ("GPU-t4-0", "rejected", "CardInsufficientMemory")
    ]
    a10 = nodes["tmpl-a10"]
    chosen = [dev for dev in a10["devices"] if dev["verdict"] == "chosen"]
    assert len(chosen) == 1 and chosen[0]["usedmem"] == 20000 and chosen[0]["usedcores"] == 30
    assert {dev["verdict"] for dev in a10["devices"]} == {"chosen", "free"}
    assert a10["score"] > 0
    assert d.policies["node"] == "binpack"


@pytest.mark.django_db
def test_identical_questions_fold_into_one_row(client, sync_recording):
    p = pod("p", gpumem=20000, uid="uid-1")
    for _ in range(3):
        _ask(client, p, [node("tmpl-a10", A10), node("tmpl-t4", T4)])
    # another question for the same pod (different node set) is a separate row
    _ask(client, p, [node("tmpl-t4", T4)])
    rows = list(Decision.objects.order_by("count"))
    assert [r.count for r in rows] == [1, 3]
    folded = rows[1]
    assert folded.first_seen <= folded.last_seen
    assert rows[0].verdict == "no_fit"


@pytest.mark.django_db
def test_bad_request_records_nothing(client, sync_recording):
    response = client.post("/filter-simulation", b'{"Pod": null}', content_type="application/json")
    assert orjson.loads(response.content)["Error"] == "extender args missing pod"
    assert not Decision.objects.exists()


@pytest.mark.django_db
def test_database_error_is_counted_and_the_answer_still_returned(client, sync_recording):
    before = recorder.RECORD_ERRORS._value.get()
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE decisions_decision RENAME TO decisions_decision_away")
    try:
        answer = _ask(client, pod("p", gpumem=1000, uid="u"), [node("tmpl-a10", A10)])
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE decisions_decision_away RENAME TO decisions_decision")
    assert [n["metadata"]["name"] for n in answer["Nodes"]["items"]] == ["tmpl-a10"]
    assert recorder.RECORD_ERRORS._value.get() == before + 1
    assert not Decision.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_async_writer_records_after_the_answer(client, settings):
    settings.DECISION_RECORDING = "async"
    p = pod("async-pod", gpumem=1000, uid="uid-async")
    for _ in range(5):
        _ask(client, p, [node("tmpl-a10", A10)])
    assert recorder.flush(timeout=20)
    d = Decision.objects.get(pod_uid="uid-async")
    assert d.count == 5 and d.verdict == "fit"
    # a question already on record only bumps its row
    for _ in range(3):
        _ask(client, p, [node("tmpl-a10", A10)])
    assert recorder.flush(timeout=20)
    d.refresh_from_db()
    assert d.count == 8 and Decision.objects.count() == 1


@pytest.mark.django_db
def test_unresolvable_everywhere(client, sync_recording):
    _ask(client, pod("lost", uid="uid-lost"), [node("bare-1"), node("bare-2")])
    d = Decision.objects.get()
    assert d.verdict == "unresolvable"
    assert d.top_reason == "node unregistered"
    assert all(n["unresolvable"] and n["devices"] == [] for n in d.nodes)


@pytest.mark.django_db
def test_record_function_for_other_callers(sync_recording):
    from hami_sim.runtime.simulator import get_simulator

    sim = get_simulator()
    ctx = sim.pod_context(pod("what-if", gpumem=1000))
    nodes = [node("tmpl-a10", A10)]
    recorder.record(ctx.pod, nodes, sim.filter_nodes(ctx, nodes), caller="ui")
    recorder.record(ctx.pod, nodes, sim.filter_nodes(ctx, nodes), caller="session:abc")
    callers = sorted(Decision.objects.values_list("caller", "session"))
    assert callers == [("session", "abc"), ("ui", "")]
    assert Decision.objects.get(caller="ui").pod_uid == ""


@pytest.mark.django_db
def test_recording_counters_are_exported(client, sync_recording):
    _ask(client, pod("m", gpumem=1000, uid="uid-m"), [node("tmpl-a10", A10)])
    metrics = client.get("/metrics").content.decode()
    assert "hami_sim_decisions_recorded_total" in metrics
    assert "hami_sim_decision_record_errors_total" in metrics
    assert "hami_sim_decisions_dropped_total" in metrics


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_fold_into_one_row():
    """Several replicas (threads here, each with its own connection) record the same question at once."""
    import threading

    from django.db import connection, connections
    from django.utils import timezone

    if connection.vendor != "postgresql":
        pytest.skip("SQLite's in-memory test database locks tables across threads; proven on PostgreSQL")
    now = timezone.now()
    row = dict(
        digest="same",
        pod_uid="u",
        pod_namespace="ml",
        pod_name="p",
        verdict="fit",
        first_seen=now,
        last_seen=now,
        latency_ms=1.0,
        count=1,
    )
    barrier = threading.Barrier(6)
    errors = []

    def writer():
        try:
            barrier.wait()
            for _ in range(5):
                recorder.write_batch([dict(row)])
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert list(Decision.objects.values_list("digest", "count")) == [("same", 30)]
