"""A real ``celery worker`` subprocess on Redis, sharing the test's PostgreSQL database.

Used by the worker tests of each app: they send a task by name on a private queue and wait for the
``TaskRun`` rows the task leaves, exactly as the dashboard would see them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REDIS_URL = os.environ.get("HAMI_TEST_REDIS_URL", "redis://127.0.0.1:6379/5")

__all__ = ["REDIS_URL", "Worker", "database_url", "require_worker_services", "celery_worker"]


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


def database_url(connection) -> str:
    """The test database as a URL the worker process can open."""
    s = connection.settings_dict
    user = s.get("USER") or "postgres"
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


def require_worker_services(connection) -> None:
    """Skip where a worker cannot share the database or reach Redis; under CI=true Redis must be up."""
    if connection.vendor != "postgresql":
        pytest.skip("the worker needs a database it can share with the test (PostgreSQL)")
    if not _redis_up():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but Redis is not reachable on 127.0.0.1:6379")
        pytest.skip("Redis is not running on 127.0.0.1:6379")


@dataclass
class Worker:
    process: subprocess.Popen
    send: Callable[[str], None]
    output: list[str] = field(default_factory=list)

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 90) -> bool:
        """Poll ``predicate`` until it holds, the worker dies, or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            if self.process.poll() is not None:
                return predicate()
            time.sleep(0.5)
        return False

    @property
    def log(self) -> str:
        return "".join(self.output)[-3000:]


@contextmanager
def celery_worker(tmp_path: Path, env: dict[str, str] | None = None) -> Iterator[Worker]:
    """Start a solo-pool worker on a private queue with the test database; stop it on exit."""
    from celery import Celery
    from django.db import connection

    require_worker_services(connection)
    queue = f"test-{uuid.uuid4().hex[:8]}"  # a private queue: no other test run's worker takes it
    full_env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "hami_sim.project.settings",
        "DATABASE_URL": database_url(connection),
        "CELERY_BROKER_URL": REDIS_URL,
        "HAMI_SIM_VAR_DIR": str(tmp_path / "var"),
        **(env or {}),
    }
    process = subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "hami_sim.project", "worker", "--pool", "solo", "-Q", queue,
            "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING", "-n", f"{queue}@%h",
        ],
        cwd=ROOT, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    sender = Celery("test-sender", broker=REDIS_URL)
    worker = Worker(process, lambda task: sender.send_task(task, queue=queue))
    try:
        yield worker
    finally:
        process.terminate()
        try:
            out = process.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            process.kill()
            out = process.communicate()[0]
        worker.output.append(out.decode(errors="replace"))
        sender.close()
