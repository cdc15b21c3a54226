"""``sync_autoscaler_events`` over the real kubernetes client against a loopback API server; pruning.

The API server double is ``tests/kubeapi.py`` (real paths, JSON, paging and bearer-token auth),
reached through a kubeconfig, exactly as a deployment with ``KUBE_SOURCE=kubeconfig:<path>`` would.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from decisions.models import AutoscalerStatus, CAEvent, Decision
from decisions.tasks import prune_decisions, sync_autoscaler_events
from hami_sim.runtime.models import TaskRun
from tests.factories.models import CAEventFactory, DecisionFactory
from tests.kubeapi import FakeKubeAPI

pytestmark = [pytest.mark.django_db]


def _ago(seconds: int) -> str:
    return (timezone.now() - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_event(
    uid, reason, message, *, pod, pod_uid, namespace="default", count=1, component="cluster-autoscaler"
):
    return {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {"name": f"{pod}.{uid}", "namespace": namespace, "uid": uid},
        "involvedObject": {
            "kind": "Pod",
            "namespace": namespace,
            "name": pod,
            "uid": pod_uid,
            "apiVersion": "v1",
        },
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": _ago(300),
        "lastTimestamp": _ago(60),
        "count": count,
        "type": "Normal" if reason == "TriggeredScaleUp" else "Warning",
    }


class EventsAPIServer(FakeKubeAPI):
    """The shared double, loaded with pod events and (optionally) CA's status ConfigMap."""

    def __init__(self, events, status, tmp_path):
        super().__init__()
        self.events = {"default": list(events)}
        if status is not None:
            self.configmaps[("kube-system", "cluster-autoscaler-status")] = {
                "metadata": {"name": "cluster-autoscaler-status", "namespace": "kube-system"},
                "data": {"status": status},
            }
        self.tmp_path = tmp_path

    def __enter__(self):
        super().__enter__()
        self.source = f"kubeconfig:{self.write_kubeconfig(self.tmp_path / 'kubeconfig')}"
        return self


STATUS = "autoscalerStatus: Running\nnodeGroups:\n- name: gpu-a10\n  health:\n    status: Healthy\n"


def _events():
    return [
        pod_event(
            "e1",
            "TriggeredScaleUp",
            "pod triggered scale-up: [{gpu-a10 0->1 (max: 10)}]",
            pod="trainer",
            pod_uid="uid-trainer",
        ),
        pod_event(
            "e2",
            "FailedScheduling",
            "0/3 nodes are available: 3 2/2 CardInsufficientMemory.",
            pod="trainer",
            pod_uid="uid-trainer",
            component="default-scheduler",
        ),
        pod_event(
            "e3",
            "NotTriggerScaleUp",
            "pod didn't trigger scale-up: 2 2/2 CardInsufficientMemory",
            pod="giant",
            pod_uid="uid-giant",
            count=7,
        ),
        pod_event(
            "e5",
            "TriggeredScaleUp",
            "pod triggered scale-up: [{gpu-t4 1->2 (max: 4)}]",
            pod="w1",
            pod_uid="u-w1",
        ),
        pod_event(
            "e6",
            "TriggeredScaleUp",
            "pod triggered scale-up: [{gpu-t4 1->2 (max: 4)}]",
            pod="w2",
            pod_uid="u-w2",
        ),
        pod_event("e4", "Scheduled", "Successfully assigned default/x to n1", pod="x", pod_uid="uid-x"),
    ]


def test_sync_reads_events_and_status_and_joins_by_pod_uid(settings, tmp_path, monkeypatch):
    monkeypatch.setattr("decisions.tasks._PAGE", 2)  # three TriggeredScaleUp events: two pages
    DecisionFactory(pod_uid="uid-trainer")
    with EventsAPIServer(_events(), STATUS, tmp_path) as api:
        settings.KUBE_SOURCE = api.source
        counts = sync_autoscaler_events.apply().get()
        # filtered by reason on the server, paginated with limit/continue
        assert any("TriggeredScaleUp" in path and "continue=" in path for path in api.requests)
    assert counts["events"] == 5 and counts["new"] == 5 and counts["joined"] == 1
    assert counts["status"] == "changed"
    trig = CAEvent.objects.get(reason="TriggeredScaleUp", pod_name="trainer")
    assert trig.groups == ["gpu-a10"]
    assert trig.parsed["scaleUps"] == [{"group": "gpu-a10", "from": 0, "to": 1, "max": 10}]
    assert trig.message.startswith("pod triggered scale-up")
    assert trig.pod_uid == "uid-trainer"
    assert CAEvent.objects.get(reason="NotTriggerScaleUp").count == 7
    assert not CAEvent.objects.filter(pod_name="x").exists()
    status = AutoscalerStatus.objects.get()
    assert status.node_groups[0]["name"] == "gpu-a10"
    run = TaskRun.objects.get(task="sync_autoscaler_events")
    assert run.outcome == "success" and run.counts["events"] == 5


def test_sync_is_idempotent(settings, tmp_path):
    with EventsAPIServer(_events(), STATUS, tmp_path) as api:
        settings.KUBE_SOURCE = api.source
        sync_autoscaler_events.apply().get()
        counts = sync_autoscaler_events.apply().get()
    assert counts["new"] == 0 and counts["status"] == "unchanged"
    assert CAEvent.objects.count() == 5 and AutoscalerStatus.objects.count() == 1


def test_rejected_credentials_keep_what_we_had_and_record_the_failure(settings, tmp_path):
    with EventsAPIServer(_events(), STATUS, tmp_path) as api:
        settings.KUBE_SOURCE = api.source
        sync_autoscaler_events.apply().get()
        api.token = "rotated"  # our credentials no longer work: 401 from the API server
        result = sync_autoscaler_events.apply()
    assert result.failed()
    assert CAEvent.objects.count() == 5
    failures = TaskRun.objects.filter(task="sync_autoscaler_events", outcome="failure")
    assert failures.exists() and "401" in failures.first().error


def test_missing_status_configmap_and_no_source(settings, tmp_path):
    with EventsAPIServer(_events(), None, tmp_path) as api:
        settings.KUBE_SOURCE = api.source
        assert sync_autoscaler_events.apply().get()["status"] == "absent"
    settings.KUBE_SOURCE = ""
    runs = TaskRun.objects.count()
    assert "no Kubernetes source" in sync_autoscaler_events.apply().get()["skipped"]
    settings.KUBE_SOURCE = "file:///snapshot.json"  # the demo's: nodes only, no events
    assert "has no events" in sync_autoscaler_events.apply().get()["skipped"]
    assert TaskRun.objects.count() == runs  # nothing to do: no run buries the task-runs page


def test_prune_drops_old_rows_only(settings, tmp_path):
    settings.DECISION_RETENTION_DAYS = 7
    old = timezone.now() - timedelta(days=8)
    DecisionFactory(pod_uid="old", first_seen=old)
    DecisionFactory(pod_uid="new")
    CAEventFactory(reason="FailedScheduling", last_seen=old)
    counts = prune_decisions.apply().get()
    assert counts["decisions"] == 1 and counts["events"] == 1
    assert list(Decision.objects.values_list("pod_uid", flat=True)) == ["new"]
