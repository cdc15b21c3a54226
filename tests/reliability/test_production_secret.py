"""No process started with production settings runs on the built-in demo secret key.

``deploy/`` gives every container ``HAMI_SIM_HTTPS=true``; the web and extender listeners already
refused the demo key, but the worker, beat, watcher, expander and migrations started silently with
it (anyone knowing the demo key can forge what it signs). Each now exits before doing anything and
says why; ``check --deploy`` reports it as an error. The demo and the tests set neither a production
listener nor ``HAMI_SIM_HTTPS`` and keep the demo key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

#: each production process as deploy/ starts it
PROCESSES = {
    "worker": [sys.executable, "-m", "celery", "-A", "hami_sim.project", "worker", "--pool=solo"],
    "beat": [sys.executable, "-m", "celery", "-A", "hami_sim.project", "beat"],
    "watcher": [sys.executable, "manage.py", "watch_cluster"],
    "expander": [sys.executable, "manage.py", "run_expander"],
    "migrations": [sys.executable, "manage.py", "migrate", "--noinput"],
    "check --deploy": [sys.executable, "manage.py", "check", "--deploy"],
}


def _run(argv: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SECRET_KEY", "HAMI_SIM_", "ALLOWED_HOSTS", "DATABASE_URL", "CELERY_"))
    }
    return subprocess.run(
        argv,
        cwd=ROOT,
        env={
            **base,
            "PYTHONPATH": str(ROOT),
            "HAMI_SIM_HTTPS": "true",
            "ALLOWED_HOSTS": "hami-sim.example.com",
            "HAMI_SIM_VAR_DIR": str(tmp_path),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "KUBE_SOURCE": "in-cluster",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=90,
    )


@pytest.mark.parametrize("process", list(PROCESSES))
def test_a_production_process_refuses_the_demo_key(process, tmp_path):
    result = _run(PROCESSES[process], tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-2000:]
    assert "needs SECRET_KEY or SECRET_KEY_FILE, not the demo key" in out, out[-2000:]


def test_a_real_key_passes_and_the_demo_keeps_its_key(tmp_path):
    key = tmp_path / "secret-key"
    key.write_text("k" * 64 + "\n")
    with_key = _run([sys.executable, "manage.py", "check"], tmp_path, SECRET_KEY_FILE=str(key))
    assert with_key.returncode == 0, with_key.stderr[-2000:]
    demo = _run([sys.executable, "manage.py", "check"], tmp_path, HAMI_SIM_HTTPS="false")
    assert demo.returncode == 0, demo.stderr[-2000:]
