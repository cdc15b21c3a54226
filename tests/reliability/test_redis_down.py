"""Redis (the shared cache) stopped for real: what does not need it keeps answering.

Reported: with Redis gone, CA's session create over mTLS, REST reads, token session creates and
the admin login answered 500 while ``/readyz`` said ready (every one of them counts something in
the cache). The test starts its own ``redis-server`` on a free port (never the machine's), points
the cache at it as ``CACHE_URL=redis://...`` does, kills it, and asks again: every answer as before,
throttles counting per process (a lock-out still locks), ``/readyz`` and ``/healthz`` naming the
degraded cache; with Redis back, the degradation clears."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis

from tests.factories.models import NodeGroupFactory, TokenFactory, UserFactory
from tests.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CA = {"hami_sim.client_identities": ("cluster-autoscaler",)}  # as the server sets it from CA's certificate


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_redis(port: int, directory) -> subprocess.Popen:
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=directory,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            if redis.Redis(port=port, socket_timeout=1).ping():
                return proc
        except redis.exceptions.ConnectionError:
            assert time.monotonic() < deadline and proc.poll() is None, "redis-server did not start"
            time.sleep(0.05)


@pytest.fixture
def own_redis(tmp_path, settings) -> Iterator[tuple[int, list[subprocess.Popen], object]]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    port = _free_port()
    procs = [_start_redis(port, tmp_path)]
    settings.CACHES = {
        "default": {
            "BACKEND": "hami_sim.project.cachefallback.FallbackRedisCache",  # what CACHE_URL=redis:// makes
            "LOCATION": f"redis://127.0.0.1:{port}/0",
        }
    }
    settings.REST_FRAMEWORK = {  # the throttles on, as deployed
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "600/min", "user": "6000/min"},
    }
    try:
        yield port, procs, tmp_path
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=10)


def _answers(client, token: str) -> dict[str, int]:
    """What each caller the report named gets."""
    auth = {"HTTP_AUTHORIZATION": f"Token {token}"}
    return {
        "CA's session create (mTLS)": client.post(
            "/api/v1/sessions", b"{}", content_type="application/json", **CA
        ).status_code,
        "REST read": client.get("/api/v1/node-groups/", **auth).status_code,
        "token session create": client.post(
            "/api/v1/sessions", b"{}", content_type="application/json", **auth
        ).status_code,
        "admin login": client.post(
            "/admin/login/", {"username": "admin", "password": "admin-pw-123"}, REMOTE_ADDR="10.3.0.1"
        ).status_code,
    }


WORKING = {
    "CA's session create (mTLS)": 201,
    "REST read": 200,
    "token session create": 201,
    "admin login": 302,
}


def test_without_redis_everything_that_does_not_need_it_answers(own_redis, client):
    port, procs, directory = own_redis
    NodeGroupFactory(name="gpu-a10")
    UserFactory(username="admin", password="admin-pw-123", superuser=True)
    token = TokenFactory(user=UserFactory(username="reader")).key
    assert _answers(client, token) == WORKING
    assert "degraded" not in client.get("/readyz").json()

    procs[0].kill()  # Redis is gone
    procs[0].wait(timeout=10)
    assert _answers(client, token) == WORKING

    ready, health = client.get("/readyz"), client.get("/healthz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    assert ready.json()["degraded"]["cache"].startswith("degraded since")
    assert health.status_code == 200 and "ConnectionError" in health.json()["degraded"]["cache"]

    # the lock-out still counts, per process now
    wrong = [
        client.post(
            "/admin/login/", {"username": "admin", "password": "x"}, REMOTE_ADDR="10.3.0.9"
        ).status_code
        for _ in range(6)
    ]
    assert wrong == [200] * 5 + [429]

    procs.append(_start_redis(port, directory))  # Redis is back on its port
    # the cache tries Redis again a few seconds after a failure
    assert eventually(lambda: "degraded" not in client.get("/readyz").json()), "the degradation never cleared"
    assert _answers(client, token) == WORKING
