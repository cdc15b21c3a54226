"""``expire_sessions`` through a real Celery worker (subprocess) on Redis, against the test database."""

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


def test_worker_deletes_expired_sessions(api, tmp_path):
    from celery import Celery
    from django.db import connection

    from profiles.models import TaskRun
    from simulations.models import SessionPlacement, SimulationSession
    from tests.factories import pod

    from .conftest import a10_node

    if connection.vendor != "postgresql":
        pytest.skip("the worker needs a database it can share with the test (PostgreSQL)")
    if not _redis_up():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but Redis is not reachable on 127.0.0.1:6379")
        pytest.skip("Redis is not running on 127.0.0.1:6379")

    live = api.create(name="live")["id"]
    old = api.create(name="old")["id"]
    status, _ = api.place(old, pod("a", uid="a"), a10_node())
    assert status == 201
    SimulationSession.objects.filter(pk=old).update(expires_at=timezone.now() - timedelta(seconds=5))

    queue = f"h3-test-{uuid.uuid4().hex[:8]}"  # a private queue: no other test run's worker takes it
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "hami_sim.settings",
        "DATABASE_URL": _database_url(connection),
        "CELERY_BROKER_URL": REDIS_URL,
        "HAMI_SIM_VAR_DIR": str(tmp_path / "var"),
    }
    worker = subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "hami_sim", "worker", "--pool", "solo", "-Q", queue,
            "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING", "-n", f"{queue}@%h",
        ],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    sender = Celery("h3-test-sender", broker=REDIS_URL)
    run = None
    try:
        sender.send_task("simulations.tasks.expire_sessions", queue=queue)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            run = TaskRun.objects.filter(task="expire_sessions").exclude(outcome="running").first()
            if run is not None or worker.poll() is not None:
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
    assert run is not None, f"the worker recorded no run; its output:\n{output[-3000:]}"
    assert run.outcome == "success" and run.counts == {"deleted": 1}, run.error
    assert [str(pk) for pk in SimulationSession.objects.values_list("pk", flat=True)] == [live]
    assert not SessionPlacement.objects.exists()
    status, _ = api.call("get", f"/api/v1/sessions/{old}")
    assert status == 404
