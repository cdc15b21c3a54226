"""``expire_sessions`` through a real Celery worker (subprocess) on Redis, against the test database."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.celery_worker import celery_worker, require_worker_services

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_worker_deletes_expired_sessions(api, tmp_path):
    from django.db import connection

    from hami_sim.runtime.models import TaskRun
    from simulations.models import SessionPlacement, SimulationSession
    from tests.factories import pod

    from .conftest import a10_node

    require_worker_services(connection)

    live = api.create(name="live")["id"]
    old = api.create(name="old")["id"]
    status, _ = api.place(old, pod("a", uid="a"), a10_node())
    assert status == 201
    SimulationSession.objects.filter(pk=old).update(expires_at=timezone.now() - timedelta(seconds=5))

    run = None

    def finished() -> bool:
        nonlocal run
        run = TaskRun.objects.filter(task="expire_sessions").exclude(outcome="running").first()
        return run is not None

    with celery_worker(tmp_path) as worker:
        worker.send("simulations.tasks.expire_sessions")
        worker.wait_until(finished)
    output = worker.log
    assert run is not None, f"the worker recorded no run; its output:\n{output}"
    assert run.outcome == "success" and run.counts == {"deleted": 1}, run.error
    assert [str(pk) for pk in SimulationSession.objects.values_list("pk", flat=True)] == [live]
    assert not SessionPlacement.objects.exists()
    status, _ = api.call("get", f"/api/v1/sessions/{old}")
    assert status == 404
