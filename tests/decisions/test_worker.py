"""The decisions tasks through a real Celery worker (subprocess) on Redis, against the test database,
reading events from the loopback Kubernetes API double with the real client."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.celery_worker import celery_worker, require_worker_services
from tests.decisions.test_tasks import STATUS, EventsAPIServer, _events
from tests.factories.models import DecisionFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_worker_syncs_events_and_prunes(tmp_path):
    from django.db import connection

    from decisions.models import AutoscalerStatus, CAEvent, Decision
    from hami_sim.runtime.models import TaskRun

    require_worker_services(connection)

    old = timezone.now() - timedelta(days=30)
    DecisionFactory(pod_name="gone", first_seen=old)
    runs: dict = {}

    def finished() -> bool:
        runs.update({r.task: r for r in TaskRun.objects.exclude(outcome="running")})
        return {"sync_autoscaler_events", "prune_decisions"} <= set(runs)

    with (
        EventsAPIServer(_events(), STATUS, tmp_path) as api,
        celery_worker(tmp_path, {"KUBE_SOURCE": api.source, "DECISION_RETENTION_DAYS": "7"}) as worker,
    ):
        worker.send("decisions.tasks.sync_autoscaler_events")
        worker.send("decisions.tasks.prune_decisions")
        worker.wait_until(finished)
    output = worker.log
    assert {"sync_autoscaler_events", "prune_decisions"} <= set(runs), f"worker output:\n{output}"
    sync = runs["sync_autoscaler_events"]
    assert sync.outcome == "success" and sync.counts["events"] == 5, sync.error
    assert CAEvent.objects.get(reason="TriggeredScaleUp", pod_name="trainer").groups == ["gpu-a10"]
    assert AutoscalerStatus.objects.count() == 1
    assert runs["prune_decisions"].counts["decisions"] == 1
    assert not Decision.objects.exists()
