"""A real Celery worker (subprocess) on Redis syncs from the loopback Kubernetes API into the test DB."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.factories import gpu, node

from .conftest import A10

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("HAMI_TEST_REDIS_URL", "redis://127.0.0.1:6379/5")


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


def _database_url(connection) -> str:
    s = connection.settings_dict
    user = s.get("USER") or "postgres"
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


def test_worker_writes_the_inventory(make_group, kube_api, tmp_path):
    from celery import Celery
    from django.db import connection

    from profiles.models import DriftFinding, NodeInventory, TaskRun

    if connection.vendor != "postgresql":
        pytest.skip("the worker needs a database it can share with the test (PostgreSQL)")
    if not _redis_up():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but Redis is not reachable on 127.0.0.1:6379")
        pytest.skip("Redis is not running on 127.0.0.1:6379")

    make_group("gpu-a10", [{**A10, "quantity": 2}])
    labels = {"eks.amazonaws.com/nodegroup": "gpu-a10"}
    kube_api.nodes = [
        node("w1", [gpu("GPU-1", type="NVIDIA A10G"), gpu("GPU-2", index=1, type="NVIDIA A10G")], labels=dict(labels)),
        node("w2", [gpu("GPU-3", type="NVIDIA A10G"), gpu("GPU-4", index=1, type="NVIDIA A10G", health=False)], labels=dict(labels)),
        node("w3", None, labels={"role": "cpu"}),
    ]
    kubeconfig = kube_api.write_kubeconfig(tmp_path / "kubeconfig")
    queue = f"h2-test-{uuid.uuid4().hex[:8]}"  # a private queue: no other test run's worker takes it
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "hami_sim.settings",
        "DATABASE_URL": _database_url(connection),
        "CELERY_BROKER_URL": REDIS_URL,
        "KUBE_SOURCE": f"kubeconfig:{kubeconfig}",
        "KUBE_PAGE_SIZE": "2",
        "HAMI_SIM_VAR_DIR": str(tmp_path / "var"),
    }
    worker = subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "hami_sim", "worker", "--pool", "solo", "-Q", queue,
            "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING", "-n", f"{queue}@%h",
        ],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    sender = Celery("h2-test-sender", broker=REDIS_URL)
    try:
        sender.send_task("profiles.tasks.sync_cluster_inventory", queue=queue)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            run = TaskRun.objects.filter(task="sync_cluster_inventory").exclude(outcome="running").first()
            if run is not None or worker.poll() is not None:
                break
            time.sleep(0.5)
        else:
            run = None
    finally:
        worker.terminate()
        try:
            output = worker.communicate(timeout=20)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            worker.kill()
            output = worker.communicate()[0].decode(errors="replace")
        sender.close()
    assert run is not None, f"the worker recorded no run; its output:\n{output[-3000:]}"
    assert run.outcome == "success", run.error
    assert run.counts["nodes"] == 3 and run.counts["created"] == 3
    assert {i.name: (i.node_group.name if i.node_group else None, len(i.devices)) for i in NodeInventory.objects.all()} == {
        "w1": ("gpu-a10", 2),
        "w2": ("gpu-a10", 2),
        "w3": (None, 0),
    }
    assert list(DriftFinding.objects.values_list("inventory__name", "kind")) == [("w2", "degradation")]
    assert any(r.startswith("/api/v1/nodes?") and "limit=2" in r for r in kube_api.requests)
