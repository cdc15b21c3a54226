"""Cluster sync through the real kubernetes client against a loopback API server (and file:// snapshots)."""

from __future__ import annotations

import orjson
import pytest

from tests.factories import gpu, node
from tests.factories.models import NodeGroupFactory

from .conftest import A10

pytestmark = [pytest.mark.django_db]
LABELS = {"eks.amazonaws.com/nodegroup": "gpu-a10"}


def a10(name: str, healthy: bool = True) -> dict:
    n = node(
        name,
        [gpu(f"GPU-{name}-{i}", index=i, type="NVIDIA A10G", health=healthy or i != 0) for i in range(4)],
        labels=dict(LABELS),
    )
    n["metadata"]["uid"] = f"uid-{name}"
    return n


@pytest.fixture
def source(kube_api, tmp_path, settings):
    settings.KUBE_PAGE_SIZE = 2
    settings.KUBE_REQUEST_TIMEOUT = 1.0
    return f"kubeconfig:{kube_api.write_kubeconfig(tmp_path / 'kubeconfig')}"


def run_sync(source: str) -> dict:
    from profiles.tasks import sync_cluster_inventory

    return sync_cluster_inventory.apply(kwargs={"source": source}).get()


def test_paginated_sync_upserts_inventories_and_marks_vanished_nodes_gone(kube_api, source, db):
    from hami_sim.runtime.models import TaskRun
    from profiles.models import DriftFinding, NodeInventory

    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    kube_api.nodes = [a10(f"n{i}") for i in range(5)] + [a10("sick", healthy=False)]
    counts = run_sync(source)
    assert counts["nodes"] == 6 and counts["created"] == 6
    list_calls = [r for r in kube_api.requests if r.startswith("/api/v1/nodes")]
    assert len(list_calls) == 3 and all("limit=2" in r for r in list_calls)
    assert sum("continue=" in r for r in list_calls) == 2
    inv = NodeInventory.objects.get(name="n0")
    assert inv.node_group.name == "gpu-a10" and len(inv.devices) == 4 and inv.uid == "uid-n0"
    assert set(inv.annotations) == {"hami.io/node-nvidia-register"}
    assert (
        DriftFinding.objects.filter(
            inventory__name="sick", kind="degradation", resolved_at__isnull=True
        ).count()
        == 1
    )

    # second run: nothing changed; then two nodes disappear
    assert run_sync(source)["unchanged"] == 6
    kube_api.nodes = kube_api.nodes[2:]
    counts = run_sync(source)
    assert counts["gone"] == 2
    gone = NodeInventory.objects.filter(gone_at__isnull=False).values_list("name", flat=True)
    assert sorted(gone) == ["n0", "n1"]
    assert NodeInventory.objects.count() == 6  # gone, not deleted
    runs = TaskRun.objects.filter(task="sync_cluster_inventory")
    assert runs.count() == 3 and set(runs.values_list("outcome", flat=True)) == {"success"}


@pytest.mark.parametrize(
    ("status", "fail_after", "delay", "message"),
    [
        (403, None, 0, "Kubernetes API answered 403: nodes is forbidden"),
        (500, 1, 0, "Kubernetes API answered 500"),  # fails mid-pagination: no partial write
        (None, None, 2.0, "Kubernetes API unreachable"),  # slower than the request timeout
    ],
)
def test_failed_reads_keep_the_last_good_inventory_and_mark_it_stale(
    kube_api, source, db, status, fail_after, delay, message
):
    from hami_sim.runtime.models import TaskRun
    from profiles.models import NodeInventory

    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    kube_api.nodes = [a10(f"n{i}") for i in range(5)]
    run_sync(source)
    before = list(NodeInventory.objects.order_by("name").values("name", "devices", "labels", "gone_at"))
    for n in kube_api.nodes:  # if a failed (or partial) read were used, these changes would show
        n["metadata"]["labels"]["changed"] = "yes"
    kube_api.fail_status, kube_api.fail_after_pages, kube_api.delay = status, fail_after, delay
    kube_api.requests.clear()
    with pytest.raises(Exception, match=message):
        run_sync(source)
    after = list(NodeInventory.objects.order_by("name").values("name", "devices", "labels", "gone_at"))
    assert after == before
    assert all(NodeInventory.objects.values_list("stale", flat=True))
    assert message in NodeInventory.objects.first().sync_error
    run = TaskRun.objects.filter(task="sync_cluster_inventory").first()
    assert run.outcome == "failure" and message in run.error and run.counts["stale"] == 5
    # the API recovers: stale clears
    kube_api.fail_status, kube_api.delay = None, 0
    assert run_sync(source)["updated"] == 5  # the label change arrives only with a good read
    assert not any(NodeInventory.objects.values_list("stale", flat=True))


def test_worker_retries_with_backoff(kube_api, source, db, settings):
    """Off the eager path the task asks Celery to retry later; the run is recorded as a retry."""
    from celery.exceptions import Retry

    from hami_sim.runtime.models import TaskRun
    from profiles.tasks import backoff_seconds, sync_cluster_inventory

    kube_api.fail_status = 403
    sync_cluster_inventory.push_request(id="t-1", retries=0, called_directly=False, is_eager=False)
    try:
        with pytest.raises(Retry) as raised:
            sync_cluster_inventory.run(source=source)
    finally:
        sync_cluster_inventory.pop_request()
    assert raised.value.when == backoff_seconds(0) == 30
    assert [backoff_seconds(n) for n in (1, 2, 10)] == [60, 120, 900]
    run = TaskRun.objects.get(task_id="t-1")
    assert run.outcome == "retry" and "403" in run.error


def test_unauthorised_kubeconfig_is_an_error_not_an_empty_cluster(kube_api, tmp_path, db):
    from profiles.models import NodeInventory

    kube_api.nodes = [a10("n0")]
    path = kube_api.write_kubeconfig(tmp_path / "kc")
    path.write_text(path.read_text().replace("test-token", "wrong"))
    with pytest.raises(Exception, match="401"):
        run_sync(f"kubeconfig:{path}")
    assert NodeInventory.objects.count() == 0


def test_file_snapshots_kubectl_and_cluster_autoscaler(tmp_path, db):
    from profiles.models import NodeInventory

    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    kubectl = tmp_path / "nodes.json"
    kubectl.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": [a10("k1"), a10("k2")]}))
    assert run_sync(f"file://{kubectl}")["created"] == 2
    snapshotz = tmp_path / "snapshotz.json"
    snapshotz.write_bytes(
        orjson.dumps(
            {
                "NodeList": [{"Node": a10("k1"), "Pods": []}, {"Node": a10("k3"), "Pods": []}],
                "UnscheduledPodsCanBeScheduled": [],
                "TemplateNodes": {"gpu-a10": {"Node": a10("template-node-for-gpu-a10-1"), "Pods": []}},
                "Error": "",
            }
        )
    )
    counts = run_sync(f"file://{snapshotz}")
    assert (counts["nodes"], counts["created"], counts["gone"]) == (2, 1, 1)
    assert not NodeInventory.objects.filter(name__startswith="template-node-for").exists()
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(Exception, match="is not JSON"):
        run_sync(f"file://{broken}")
    assert NodeInventory.objects.filter(gone_at__isnull=True).count() == 2


def test_no_source_configured_is_a_recorded_no_op(settings):
    from hami_sim.runtime.models import TaskRun
    from profiles.tasks import sync_cluster_inventory

    settings.KUBE_SOURCE = ""
    assert sync_cluster_inventory.apply().get() == {"skipped": "KUBE_SOURCE is not set"}
    assert TaskRun.objects.get().outcome == "success"


def test_label_selector_reaches_the_api(kube_api, source, db):
    from profiles.models import NodeInventory
    from profiles.tasks import sync_cluster_inventory

    other = node("cpu-1", None, labels={"role": "cpu"})
    kube_api.nodes = [a10("n0"), other]
    sync_cluster_inventory.apply(
        kwargs={"source": source, "label_selector": "eks.amazonaws.com/nodegroup=gpu-a10"}
    ).get()
    assert list(NodeInventory.objects.values_list("name", flat=True)) == ["n0"]
    assert any("labelSelector=" in r for r in kube_api.requests)
