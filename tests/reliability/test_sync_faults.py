"""Cluster sync under Kubernetes API faults, and a Celery worker killed mid-task.

In-process (every database): the API unreachable, answering 500, or 403 mid-list -> the last good
inventories are kept, marked stale with the error, nothing is deleted or marked gone; when the API
recovers, the same sync clears the flag.

Through a real Celery worker on Redis (PostgreSQL + Redis only, ``slow``): a 500 is retried by the
worker until the API recovers; then the worker's pool process is SIGKILLed while the task waits
for the API, and the task is redelivered (``acks_late`` + ``reject_on_worker_lost``) and produces
the same inventories as an undisturbed run (the sync is idempotent).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from tests.factories import gpu, node
from tests.factories.models import NodeGroupFactory
from tests.kubeapi import FakeKubeAPI
from tests.loadgen import children

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("HAMI_RELIABILITY_REDIS_URL", "redis://127.0.0.1:6379/9")
LABELS = {"eks.amazonaws.com/nodegroup": "gpu-a10"}


def _cluster() -> list[dict]:
    return [
        node(
            "n1",
            [gpu("GPU-1", type="NVIDIA A10G"), gpu("GPU-2", index=1, type="NVIDIA A10G")],
            labels=dict(LABELS),
        ),
        node("n2", [gpu("GPU-3", type="NVIDIA A10G")], labels=dict(LABELS)),
        node("n3", [gpu("GPU-4", type="NVIDIA A10G")], labels=dict(LABELS)),
        node("cpu-1", None, labels={"role": "cpu"}),
    ]


def _inventories() -> dict[str, tuple]:
    from profiles.models import NodeInventory

    return {
        inv.name: (
            inv.node_group.name if inv.node_group else None,
            [d.get("id") for d in inv.devices],
            inv.gone_at is not None,
        )
        for inv in NodeInventory.objects.select_related("node_group").order_by("name")
    }


def _stale() -> dict[str, tuple[bool, str]]:
    from profiles.models import NodeInventory

    return {inv.name: (inv.stale, inv.sync_error) for inv in NodeInventory.objects.order_by("name")}


@pytest.fixture
def group(db):
    return NodeGroupFactory(name="gpu-a10", match_labels=LABELS)


@pytest.mark.django_db
@pytest.mark.parametrize("fault", ["unreachable", "500", "403", "403-mid-list"])
def test_kube_api_fault_keeps_inventories_and_marks_them_stale(fault, group, tmp_path, settings):
    from hami_sim.runtime.models import TaskRun
    from profiles.kube import SourceError
    from profiles.tasks import sync_cluster_inventory

    with FakeKubeAPI(_cluster()) as api:
        source = f"kubeconfig:{api.write_kubeconfig(tmp_path / 'kubeconfig')}"
        assert sync_cluster_inventory.apply(kwargs={"source": source}).get()["created"] == 4
        good = _inventories()
        assert set(good) == {"n1", "n2", "n3", "cpu-1"} and not any(s for s, _ in _stale().values())

        # the next read would drop n2, n3, cpu-1 and add n9, n10: a failed or partial read must do neither
        api.nodes = _cluster()[:1] + [
            node(f"n{i}", [gpu(f"GPU-{i}", type="NVIDIA A10G")], labels=dict(LABELS)) for i in (9, 10)
        ]
        if fault == "unreachable":
            api.stop()
        else:
            api.fail_status = int(fault[:3])
            if fault == "403-mid-list":  # the first page (2 nodes) is served, the second is refused
                settings.KUBE_PAGE_SIZE = 2
                api.requests.clear()
                api.fail_after_pages = 1
        with pytest.raises(SourceError):
            sync_cluster_inventory.apply(kwargs={"source": source, "label_selector": ""}, throw=True)
        assert _inventories() == good, "a failed read changed or deleted inventories"
        stale = _stale()
        assert all(flag for flag, _ in stale.values())
        expected = "unreachable" if fault == "unreachable" else f"answered {fault[:3]}"
        assert all(expected in error for _, error in stale.values()), stale
        run = TaskRun.objects.filter(task="sync_cluster_inventory").first()
        assert run.outcome == "failure" and expected in run.error
        if fault == "403-mid-list":
            assert sum(r.startswith("/api/v1/nodes") for r in api.requests) == 2  # really mid-list

        if fault != "unreachable":  # the API recovers: the next sync applies the new truth
            api.fail_status = None
            sync_cluster_inventory.apply(kwargs={"source": source}).get()
            after = _inventories()
            assert after["n1"] == good["n1"] and after["n2"][2] and after["n3"][2]  # n2, n3 now gone
            assert not any(flag for flag, _ in _stale().values())


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


# The worker as a real ``celery worker`` process. Two changes so the test does not sit idle: a 1 s
# retry backoff instead of 30 s (Celery's ``retry_backoff``, ``profiles.tasks.backoff_seconds``), and a 20 s Redis visibility
# timeout (kombu: 1 hour), after which a message held by a dead worker is redelivered, swept every
# second (kombu: every 10 x 10 s). The timeout must exceed one whole sync under ``api.delay`` (nodes,
# then the pods relist of the usage app: two delayed reads), or Redis hands a running task out twice.
WORKER = textwrap.dedent(
    """
    import sys
    import django
    django.setup()
    import celery.app.autoretry
    celery.app.autoretry.get_exponential_backoff_interval = lambda **kwargs: 1
    from hami_sim.project.celery import app
    app.conf.broker_transport_options = {
        "visibility_timeout": 20, "unacked_restore_interval": 1, "unacked_restore_throttle": 1,
    }
    app.worker_main(sys.argv[1:])
    """
)


def _wait_for(predicate, timeout: float, what: str, worker: subprocess.Popen):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if worker.poll() is not None:
            raise AssertionError(f"the worker exited ({worker.returncode}) while waiting for {what}")
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_worker_retries_api_failures_and_survives_being_killed_mid_task(child_database_url, tmp_path):
    from celery import Celery

    from hami_sim.runtime.models import TaskRun

    if not child_database_url or not child_database_url.startswith("postgres"):
        pytest.skip("the worker must share the test's database (PostgreSQL)")
    if not _redis_up():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but Redis is not reachable on 127.0.0.1:6379")
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    NodeGroupFactory(name="gpu-a10", match_labels=LABELS)

    def runs(outcome: str) -> int:
        return TaskRun.objects.filter(task="sync_cluster_inventory", outcome=outcome).count()

    with FakeKubeAPI(_cluster()) as api:
        kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
        queue = f"h7-reliability-{uuid.uuid4().hex[:8]}"  # private: no other worker takes our tasks
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "DJANGO_SETTINGS_MODULE": "hami_sim.project.settings",
            "DATABASE_URL": child_database_url,
            "CELERY_BROKER_URL": REDIS_URL,
            "KUBE_SOURCE": f"kubeconfig:{kubeconfig}",
            "KUBE_SYNC_MAX_RETRIES": "10",
            "HAMI_SIM_VAR_DIR": str(tmp_path / "var"),
        }

        def start_worker() -> subprocess.Popen:
            return subprocess.Popen(
                [sys.executable, "-c", WORKER, "worker", "--pool", "prefork", "--concurrency", "1", "-Q", queue,
                 "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING", "-n", f"{queue}@%h"],
                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip

        worker = start_worker()
        killed: list[subprocess.Popen] = []
        sender = Celery("h7-reliability-sender", broker=REDIS_URL)
        try:
            # 1. the API answers 500: the worker marks inventories stale and retries until it recovers
            api.fail_status = 500
            sender.send_task("profiles.tasks.sync_cluster_inventory", queue=queue)
            _wait_for(lambda: runs("retry") >= 2, 60, "two retried runs", worker)
            assert _inventories() == {}  # nothing was ever read: nothing invented
            api.fail_status = None
            _wait_for(lambda: runs("success") >= 1, 60, "the retry after the API recovered", worker)
            reference = _inventories()
            assert set(reference) == {"n1", "n2", "n3", "cpu-1"}
            assert not any(flag for flag, _ in _stale().values())

            # 2. kill the pool process while the task waits for the API: the task runs again, same result
            api.delay = 2.0
            api.requests.clear()
            sender.send_task("profiles.tasks.sync_cluster_inventory", queue=queue)
            _wait_for(
                lambda: any(r.startswith("/api/v1/nodes") for r in api.requests),
                60,
                "the task to call the API",
                worker,
            )
            pool = children(worker.pid)
            assert pool, "prefork worker without a pool process"
            for pid in pool:
                os.kill(pid, signal.SIGKILL)
            _wait_for(lambda: runs("success") >= 2, 90, "the redelivered task to finish", worker)
            assert sum(r.startswith("/api/v1/nodes") for r in api.requests) >= 2, "the task was not run again"
            assert _inventories() == reference
            latest = TaskRun.objects.filter(task="sync_cluster_inventory", outcome="success").first()
            assert latest.counts["nodes"] == 4 and latest.counts["unchanged"] == 4

            # 3. kill the whole worker (a pod OOM-killed or evicted) mid-task, start a new one: the
            #    message the dead worker held comes back after the visibility timeout and runs again
            api.requests.clear()
            sender.send_task("profiles.tasks.sync_cluster_inventory", queue=queue)
            _wait_for(
                lambda: any(r.startswith("/api/v1/nodes") for r in api.requests),
                60,
                "the task to call the API",
                worker,
            )
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
            killed.append(worker)
            worker = start_worker()
            _wait_for(
                lambda: runs("success") >= 3, 90, "the task held by the dead worker to run again", worker
            )
            assert sum(r.startswith("/api/v1/nodes") for r in api.requests) >= 2, "the task was not run again"
            assert _inventories() == reference
            # the killed attempts never finished their TaskRun rows (reported in docs/reliability.md)
            print(f"TaskRun rows left 'running' by the killed attempts: {runs('running')}")
        finally:
            try:
                os.killpg(worker.pid, signal.SIGTERM)
                output = worker.communicate(timeout=20)[0].decode(errors="replace")
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
                output = worker.communicate()[0].decode(errors="replace")
            sender.close()
            _forget_queue(queue)
            print(output[-3000:])


def _forget_queue(queue: str) -> None:
    """Remove what the test left in its Redis database: its queue, bindings and unacked messages."""
    import json

    import redis

    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
        for tag, raw in client.hgetall("unacked").items():
            try:
                routing_key = json.loads(raw)[2]
            except (ValueError, IndexError, TypeError):
                continue
            if routing_key == queue:
                client.hdel("unacked", tag)
                client.zrem("unacked_index", tag)
    finally:
        client.close()
