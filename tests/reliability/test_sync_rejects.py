"""One object the cluster holds that the database cannot store as read (a NUL in a pending pod's
annotation, a node label, a registration, an event message; a name longer than Kubernetes allows)
never stops a sync: it is stored repaired or skipped, counted in
``hami_sim_sync_rejected_objects_total{kind,reason}``, named on the Task runs page, and the rest of
the sync lands. On PostgreSQL (whose text and jsonb refuse NUL), through the real ``kubernetes``
client against the loopback API double, with the real sync task and the real watcher."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from tests.factories import kube
from tests.factories.kube import NVIDIA_REGISTER, hami_pod
from tests.factories.models import UserFactory
from tests.kubeapi import FakeKubeAPI
from tests.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


def _node(name: str, **fields) -> dict:
    n = kube.gpu_node(name, 4, **fields)
    n["kind"], n["apiVersion"] = "Node", "v1"
    n["metadata"]["uid"] = f"uid-{name}"
    return n


def _pending(name: str, **annotations: str) -> dict:
    p = kube.pod(name, gpu_count=1, gpumem=4000, annotations=annotations, uid=f"uid-{name}", namespace="ml")
    p["kind"], p["apiVersion"] = "Pod", "v1"
    p["status"] = {"phase": "Pending"}
    return p


def _without_uid(pod: dict) -> dict:
    del pod["metadata"]["uid"]
    return pod


def _event(name: str, pod: str, message: str) -> dict:
    return {
        "kind": "Event",
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
        "reason": "FailedScheduling",
        "involvedObject": {"kind": "Pod", "namespace": "ml", "name": pod, "uid": f"uid-{pod}"},
        "message": message,
    }


def _bad_registration() -> dict:
    """A registration whose device type holds an escaped NUL: valid JSON HAMi decodes."""
    node = _node("n-reg")
    text = node["metadata"]["annotations"][NVIDIA_REGISTER]
    node["metadata"]["annotations"][NVIDIA_REGISTER] = text.replace('"NVIDIA A10"', '"NVIDIA A10\\u0000"', 1)
    return node


def _good_cluster(api: FakeKubeAPI) -> None:
    api.nodes.append(_node("n1"))
    api.pods.append(hami_pod("good-bound", "n1", [("GPU-n1-1", 7000, 30)]))
    api.pods.append(_pending("good-pending"))


# case id -> (what it adds to the cluster, (kind, name, reason, action) noted)
CASES: dict[str, tuple[Callable[[FakeKubeAPI], None], tuple[str, str, str, str]]] = {
    "NUL in a pending pod's annotation": (
        lambda api: api.pods.append(_pending("pending-nul", note="a\x00b")),
        ("pod", "ml/pending-nul", "unstorable-text", "sanitised"),
    ),
    "NUL in a bound pod's HAMi allocation": (
        lambda api: api.pods.append(hami_pod("alloc-nul", "n1", "GPU-n1-2\x00,NVIDIA,1000,10:;")),
        ("pod", "ml/alloc-nul", "unstorable-text", "sanitised"),
    ),
    "pod name longer than Kubernetes allows": (
        lambda api: api.pods.append(_pending("p" * 300)),
        ("pod", f"ml/{'p' * 296}…", "bad-identity", "skipped"),
    ),
    "pod without a uid whose namespace/name is too long to stand for one": (
        lambda api: api.pods.append(_without_uid(_pending("q" * 120))),
        ("pod", f"ml/{'q' * 120}", "bad-identity", "skipped"),
    ),
    "NUL in a node label": (
        lambda api: api.nodes.append(_node("n-label", labels={"team": "a\x00b"})),
        ("node", "n-label", "unstorable-text", "sanitised"),
    ),
    "NUL in a node name": (
        lambda api: api.nodes.append(_node("n-\x00")),
        ("node", "n-\ufffd", "bad-identity", "skipped"),
    ),
    "escaped NUL in a registration": (
        lambda api: api.nodes.append(_bad_registration()),
        ("registration", "n-reg", "unstorable-text", "sanitised"),
    ),
    "NUL in a FailedScheduling message": (
        lambda api: api.events.setdefault("ml", []).append(
            _event("ev-nul", "good-pending", "0/1 nodes are available: 1 \x00 CardInsufficientMemory.")
        ),
        ("event", "ml/ev-nul", "unstorable-text", "sanitised"),
    ),
}


def _landed() -> dict:
    """What a good sync of ``_good_cluster`` leaves: n1's registration and usage, the pending pod."""
    from profiles.models import NodeInventory
    from usage.models import NodeUsage, PendingPod

    inventory = NodeInventory.objects.filter(name="n1").first()
    usage = NodeUsage.objects.filter(name="n1").first()
    card = (usage.devices.get("GPU-n1-1") or {}) if usage else {}
    return {
        "n1 cards": len(inventory.devices) if inventory else 0,
        "GPU-n1-1": (card.get("used"), card.get("usedmem"), card.get("pods")),
        "pending": PendingPod.objects.filter(name="good-pending").exists(),
    }


LANDED = {"n1 cards": 4, "GPU-n1-1": (1, 7000, ["ml/good-bound"]), "pending": True}


@pytest.mark.parametrize("case", list(CASES))
def test_one_bad_object_is_synced_past_and_named(case, tmp_path, settings):
    from hami_sim.runtime.models import RejectedObject, TaskRun
    from profiles.tasks import sync_cluster_inventory

    add, noted = CASES[case]
    with FakeKubeAPI() as api:
        _good_cluster(api)
        add(api)
        source = f"kubeconfig:{api.write_kubeconfig(tmp_path / 'kubeconfig')}"
        settings.KUBE_PAGE_SIZE = 2
        sync_cluster_inventory.apply(kwargs={"source": source}).get()

    run = TaskRun.objects.get(task="sync_cluster_inventory")
    assert run.outcome == "success", run.error
    assert _landed() == LANDED
    rows = list(RejectedObject.objects.values_list("kind", "name", "reason", "action", "source"))
    assert rows == [(*noted, "sync_cluster_inventory")]
    assert noted[1] in run.counts["rejected"]


def test_repaired_objects_keep_what_they_hold_and_are_counted_and_named(tmp_path, settings, client):
    from hami_sim.runtime.models import RejectedObject
    from profiles.models import NodeInventory
    from profiles.tasks import sync_cluster_inventory
    from usage.models import PendingPod

    with FakeKubeAPI() as api:
        _good_cluster(api)
        for add, _noted in CASES.values():
            add(api)
        source = f"kubeconfig:{api.write_kubeconfig(tmp_path / 'kubeconfig')}"
        sync_cluster_inventory.apply(kwargs={"source": source}).get()

    assert _landed() == LANDED
    pending = PendingPod.objects.get(name="pending-nul")
    assert pending.pod["metadata"]["annotations"]["note"] == "a\ufffdb"
    assert NodeInventory.objects.get(name="n-label").labels["team"] == "a\ufffdb"
    assert NodeInventory.objects.get(name="n-reg").devices[0]["type"] == "NVIDIA A10\ufffd"
    assert RejectedObject.objects.count() == len(CASES)

    metrics = client.get("/metrics").content.decode()
    assert 'hami_sim_sync_rejected_objects_total{kind="pod",reason="unstorable-text"} 2.0' in metrics
    assert 'hami_sim_sync_rejected_objects_total{kind="node",reason="bad-identity"} 1.0' in metrics

    client.force_login(UserFactory(username="oncall", is_staff=True))
    page = client.get("/task-runs/").content.decode()
    for _add, (kind, name, reason, action) in CASES.values():
        assert all(part in page for part in (kind, name.replace("…", "&hellip;")[:60], reason, action))


@pytest.mark.slow
def test_the_watcher_writes_past_a_pod_the_database_refuses(tmp_path, settings):
    """Before: the watcher retried the same write forever (or exited), and no later event landed."""
    from django.db import connections

    from hami_sim.runtime.models import RejectedObject
    from usage.cluster import ClusterWatcher
    from usage.models import PendingPod

    settings.KUBE_PAGE_SIZE = 2
    with FakeKubeAPI() as api:
        _good_cluster(api)
        source = f"kubeconfig:{api.write_kubeconfig(tmp_path / 'kubeconfig')}"
        watcher = ClusterWatcher(source, watch_seconds=2, backoff_cap=0.3)
        failure: list[BaseException] = []

        def run() -> None:
            try:
                watcher.run()
            except BaseException as exc:  # reported below
                failure.append(exc)
            finally:
                connections.close_all()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        try:
            assert api.wait_for_watches(2)
            api.add_pod(_pending("pending-nul", note="a\x00b"))
            api.add_pod(hami_pod("bound-nul", "n1", [("GPU-n1-3", 2000, 10)], note="x\x00y"))
            api.add_pod(hami_pod("after", "n1", [("GPU-n1-0", 1000, 10)]))
            assert eventually(lambda: _card("n1", "GPU-n1-0") == (1, 1000, ["ml/after"])), failure
            assert _card("n1", "GPU-n1-3") == (1, 2000, ["ml/bound-nul"])
            assert (
                PendingPod.objects.get(name="pending-nul").pod["metadata"]["annotations"]["note"]
                == "a\ufffdb"
            )
            assert eventually(
                lambda: RejectedObject.objects.filter(name="ml/pending-nul", source="watch_cluster").exists()
            )
        finally:
            watcher.stop()
            thread.join(timeout=15)
    assert not failure, failure


def _card(node: str, uuid: str) -> tuple | None:
    from usage.models import NodeUsage

    usage = NodeUsage.objects.filter(name=node).first()
    card = (usage.devices.get(uuid) or {}) if usage else {}
    return (card.get("used"), card.get("usedmem"), card.get("pods"))


@pytest.mark.slow
def test_a_write_the_database_refuses_is_skipped_not_retried_for_ever(tmp_path, settings, monkeypatch):
    """Whatever else the database refuses for what one pod holds (here: it refuses the pod named
    ``poison``), the watcher writes its batch event by event, skips that one, names it, and goes on;
    before, it retried the same batch for ever and nothing later landed."""
    from django.db import DataError, connections

    import usage.cluster
    from hami_sim.runtime.models import RejectedObject
    from usage.cluster import ClusterWatcher

    real = usage.cluster.apply_pending_events

    def refusing(events, *args, **kwargs):
        if any((pod.get("metadata") or {}).get("name") == "poison" for _kind, pod in events):
            raise DataError("value the column cannot hold")
        return real(events, *args, **kwargs)

    monkeypatch.setattr(usage.cluster, "apply_pending_events", refusing)
    settings.KUBE_PAGE_SIZE = 2
    with FakeKubeAPI() as api:
        _good_cluster(api)
        source = f"kubeconfig:{api.write_kubeconfig(tmp_path / 'kubeconfig')}"
        watcher = ClusterWatcher(source, watch_seconds=2, backoff_cap=0.3)
        thread = threading.Thread(target=lambda: (watcher.run(), connections.close_all()), daemon=True)
        thread.start()
        try:
            assert api.wait_for_watches(2)
            api.add_pod(_pending("poison"))
            api.add_pod(hami_pod("after", "n1", [("GPU-n1-0", 1000, 10)]))
            assert eventually(lambda: _card("n1", "GPU-n1-0") == (1, 1000, ["ml/after"]))
            assert eventually(
                lambda: RejectedObject.objects.filter(
                    name="ml/poison", reason="refused", action="skipped"
                ).exists()
            )
        finally:
            watcher.stop()
            thread.join(timeout=15)
