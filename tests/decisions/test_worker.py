"""The decisions tasks through a real Celery worker (subprocess) on Redis, against the test database,
reading events from the loopback Kubernetes API double with the real client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from tests.decisions.test_tasks import STATUS, EventsAPIServer, _events

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


def test_worker_syncs_events_and_prunes(tmp_path):
    from celery import Celery
    from django.db import connection

    from decisions.models import AutoscalerStatus, CAEvent, Decision
    from profiles.models import TaskRun

    if connection.vendor != "postgresql":
        pytest.skip("the worker needs a database it can share with the test (PostgreSQL)")
    if not _redis_up():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but Redis is not reachable on 127.0.0.1:6379")
        pytest.skip("Redis is not running on 127.0.0.1:6379")

    old = timezone.now() - timedelta(days=30)
    Decision.objects.create(digest="old", pod_namespace="ml", pod_name="gone", verdict="fit", first_seen=old,
                            last_seen=old)
    queue = f"h5-test-{uuid.uuid4().hex[:8]}"  # a private queue: no other test run's worker takes it
    with EventsAPIServer(_events(), STATUS, tmp_path) as api:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "DJANGO_SETTINGS_MODULE": "hami_sim.settings",
            "DATABASE_URL": _database_url(connection),
            "CELERY_BROKER_URL": REDIS_URL,
            "HAMI_SIM_VAR_DIR": str(tmp_path / "var"),
            "KUBE_SOURCE": api.source,
            "DECISION_RETENTION_DAYS": "7",
        }
        worker = subprocess.Popen(
            [
                sys.executable, "-m", "celery", "-A", "hami_sim", "worker", "--pool", "solo", "-Q", queue,
                "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING", "-n", f"{queue}@%h",
            ],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        sender = Celery("h5-test-sender", broker=REDIS_URL)
        runs = {}
        try:
            sender.send_task("decisions.tasks.sync_autoscaler_events", queue=queue)
            sender.send_task("decisions.tasks.prune_decisions", queue=queue)
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and worker.poll() is None:
                runs = {r.task: r for r in TaskRun.objects.exclude(outcome="running")}
                if {"sync_autoscaler_events", "prune_decisions"} <= set(runs):
                    break
                time.sleep(0.5)
        finally:
            worker.terminate()
            try:
                output = worker.communicate(timeout=20)[0].decode(errors="replace")
            except subprocess.TimeoutExpired:
                worker.kill()
                output = worker.communicate()[0].decode(errors="replace")
            sender.close()
    assert {"sync_autoscaler_events", "prune_decisions"} <= set(runs), f"worker output:\n{output[-3000:]}"
    sync = runs["sync_autoscaler_events"]
    assert sync.outcome == "success" and sync.counts["events"] == 5, sync.error
    assert CAEvent.objects.get(reason="TriggeredScaleUp", pod_name="trainer").groups == ["gpu-a10"]
    assert AutoscalerStatus.objects.count() == 1
    assert runs["prune_decisions"].counts["decisions"] == 1
    assert not Decision.objects.exists()
