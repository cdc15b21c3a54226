"""The demo's ``/metrics`` adds up every gunicorn worker instead of answering from whichever took the scrape."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from hami_sim.server.demo import Demo, web_argv, web_env

pytestmark = [pytest.mark.slow]
HEALTHZ = {"method": "GET", "status": "200", "view": "healthz"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthz_answers(text: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "django_http_responses_total_by_status_view_method_total" and all(
                sample.labels.get(k) == v for k, v in HEALTHZ.items()
            ):
                return sample.value
    return 0.0


def get(url: str) -> str:
    # a new connection each time, so the workers share the requests
    with urllib.request.urlopen(url, timeout=60) as response:  # a hang detector
        return response.read().decode()


@pytest.fixture
def demo_web(tmp_path, monkeypatch):
    monkeypatch.setenv("HAMI_SIM_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/demo.sqlite3")
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")
    demo = Demo(port=free_port())
    stale = tmp_path / f"metrics-{demo.port}"
    stale.mkdir()
    (stale / "counter_99999.db").write_bytes(b"left by a previous run")
    child = subprocess.Popen(web_argv(demo, workers=3), env=web_env(demo), start_new_session=True)
    url = f"http://127.0.0.1:{demo.port}"
    deadline = time.monotonic() + 120  # a bound for a busy machine, not a speed target
    while True:
        try:  # not /healthz: a probe that timed out on a busy machine may still have been counted
            get(f"{url}/metrics")
            break
        except OSError:
            if time.monotonic() > deadline or child.poll() is not None:
                child.kill()
                pytest.fail("the demo's web server did not come up")
            time.sleep(0.3)
    yield url
    child.terminate()
    child.wait(timeout=30)


def test_every_scrape_counts_every_workers_requests(demo_web):
    for _ in range(12):
        get(f"{demo_web}/healthz")
    seen = [healthz_answers(get(f"{demo_web}/metrics")) for _ in range(6)]
    assert seen == [12.0] * 6, "each scrape must sum all workers (was 7 -> 1 -> 7 per worker)"


def test_no_stale_samples_from_a_previous_run(demo_web, tmp_path):
    assert not any(p.name == "counter_99999.db" for p in tmp_path.rglob("*.db"))
    assert os.listdir(tmp_path)  # the run's own files are there
