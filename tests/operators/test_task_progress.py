"""A running Celery sync says how far it is in its task-run row, which other processes (the Task runs
page) read while it runs: the real task against the loopback Kubernetes API, held part-way through
the pod list, and the row read meanwhile on another database connection."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from hami_sim.runtime.models import TaskRun
from tests.factories import kube
from tests.kubeapi import FakeKubeAPI

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
NODES, PODS, PAGE = 20, 400, 100


def _row_from_another_connection(pk: int) -> dict:
    """The row as another process would read it (a thread has a connection of its own)."""
    seen: dict = {}

    def read() -> None:
        try:
            seen.update(TaskRun.objects.filter(pk=pk).values("outcome", "progress").get())
        finally:
            connection.close()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(30)
    return seen


def _wait_for_progress(done: int, stage: str) -> TaskRun:
    """The running sync's row, once it reports ``done`` items of ``stage`` (bounded wait)."""
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        run = TaskRun.objects.filter(task="sync_cluster_inventory").first()
        if run is not None and run.progress.get("stage") == stage and run.progress.get("done") == done:
            return run
        time.sleep(0.05)
    pytest.fail(f"no progress {stage} {done} recorded; last: {run and run.progress}")


def test_a_running_sync_records_its_progress_in_its_row(tmp_path, settings):
    from profiles.tasks import sync_cluster_inventory

    settings.KUBE_PAGE_SIZE = PAGE
    nodes = [{**kube.gpu_node(f"n{i}", 2), "kind": "Node", "apiVersion": "v1"} for i in range(NODES)]
    pods = [
        {**kube.pod(f"p{j}", uid=f"u{j}", namespace="ml"), "kind": "Pod", "apiVersion": "v1"}
        for j in range(PODS)
    ]
    with FakeKubeAPI(nodes=nodes, pods=pods) as api:
        api.hold_pods_after_pages = 2
        source = f"kubeconfig:{api.write_kubeconfig(tmp_path / 'kubeconfig')}"
        outcome: dict = {}

        def run() -> None:
            try:
                outcome["counts"] = sync_cluster_inventory.apply(kwargs={"source": source}).get()
            finally:
                connection.close()

        worker = threading.Thread(target=run)
        worker.start()
        try:
            assert api.held.wait(60)
            run_row = _wait_for_progress(2 * PAGE, "list pods")
            assert run_row.outcome == TaskRun.Outcome.RUNNING
            assert run_row.progress == {"stage": "list pods", "done": 2 * PAGE, "total": PODS}
        finally:
            api.release.set()
            worker.join(120)
    assert outcome["counts"]["nodes"] == NODES
    final = TaskRun.objects.get(task="sync_cluster_inventory")
    assert final.outcome == TaskRun.Outcome.SUCCESS


def test_progress_inside_a_transaction_is_seen_before_it_commits():
    """The node and usage syncs write in one transaction; their progress must not wait for it."""
    from hami_sim.runtime.taskruns import RowProgress

    if connection.vendor != "postgresql":
        pytest.skip("SQLite has one writer at a time: progress inside a transaction waits for it")
    run = TaskRun.objects.create(task="sync_cluster_inventory", started_at="2026-01-01T00:00:00Z")
    progress = RowProgress(run.pk)
    try:
        with transaction.atomic():
            progress("nodes", 40, 100)
            assert _row_from_another_connection(run.pk)["progress"] == {
                "stage": "nodes",
                "done": 40,
                "total": 100,
            }
    finally:
        progress.close()
