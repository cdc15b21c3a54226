"""Drift findings: each kind opens when the problem appears and resolves when it goes away."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import gpu, node
from tests.factories.models import NodeGroupFactory, TaskRunFactory

from .conftest import A10

pytestmark = [pytest.mark.django_db]
LABELS = {"eks.amazonaws.com/nodegroup": "gpu-a10"}


def a10_node(name="n1") -> dict:
    return _with({}, name)


def open_findings(name="n1") -> set[tuple[str, str, str]]:
    from profiles.models import DriftFinding

    return {
        (f.kind, f.field, f.device.split(" ")[0])
        for f in DriftFinding.objects.filter(inventory__name=name, resolved_at__isnull=True)
    }


@pytest.fixture
def a10_group(db):
    return NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])


def test_first_registration_matching_the_profile_has_no_findings(a10_group):
    from profiles.models import NodeInventory
    from profiles.sync import sync_nodes

    counts = sync_nodes([a10_node()])
    inv = NodeInventory.objects.get(name="n1")
    assert inv.registered_at is not None and inv.drift_checked_at is not None  # checked at once
    assert counts["findings_opened"] == 0 and open_findings() == set()


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({1: {"health": False}}, {("degradation", "health", "1")}),
        ({0: {"devmem": 16000}}, {("mismatch", "devmem", "0")}),
        ({0: {"devmem": 22800}}, set()),  # within the 2% tolerance (NVML reports vary a little)
        ({2: {"count": 4}}, {("mismatch", "count", "2")}),
        ({3: {"type": "NVIDIA A10"}}, {("mismatch", "type", "3")}),
        ({0: {"devcore": 50}}, {("mismatch", "devcore", "0")}),
        ({0: {"mode": "mps"}}, {("mismatch", "mode", "0")}),
        ({1: {"numa": 1}}, {("mismatch", "numa", "1")}),
        ({0: {"id": "GPU-other-uuid"}}, set()),  # UUIDs are ignored
        (
            {
                0: {
                    "mode": "mig",
                    "migProfiles": [{"name": "1g.6gb", "memoryMB": 5888, "core": 25, "sliceCount": 1}],
                }
            },
            {("mismatch", "mode", "0"), ("mismatch", "mig_profiles", "0")},
        ),
    ],
)
def test_each_difference_is_a_finding_and_resolves_when_fixed(a10_group, overrides, expected):
    from profiles.sync import sync_nodes

    sync_nodes([_with(overrides)])
    assert open_findings() == expected
    sync_nodes([a10_node()])
    assert open_findings() == set()


def _with(overrides: dict, name: str = "n1") -> dict:
    """Four A10G devices as the profile promises, with per-index field overrides."""
    devices = []
    for i in range(4):
        dev = gpu(f"GPU-{name}-{i}", index=i, type="NVIDIA A10G", devmem=23028, numa=0)
        dev.update(overrides.get(i, {}))
        devices.append(dev)
    return node(name, devices, labels=LABELS)


def test_missing_device_is_a_device_count_mismatch(a10_group):
    from profiles.models import DriftFinding
    from profiles.sync import sync_nodes

    three = node("n1", [gpu(f"GPU-{i}", index=i, type="NVIDIA A10G") for i in range(3)], labels=LABELS)
    sync_nodes([three])
    finding = DriftFinding.objects.get(inventory__name="n1", resolved_at__isnull=True)
    assert (finding.kind, finding.field, finding.expected, finding.actual, finding.severity) == (
        "mismatch",
        "device count",
        "4",
        "3",
        "critical",
    )


def test_malformed_and_unregistered(a10_group, settings):
    from profiles.drift import check_inventories
    from profiles.models import NodeInventory
    from profiles.sync import sync_nodes

    bad = node("n1", annotations={"hami.io/node-nvidia-register": "[{"}, labels=LABELS)
    bare = node("n2", annotations={}, labels=LABELS)
    sync_nodes([bad, bare])
    assert open_findings("n1") == {("malformed", "annotation", "")}
    assert NodeInventory.objects.get(name="n1").parse_error.startswith(
        "malformed hami.io/node-nvidia-register: "
    )
    assert open_findings("n2") == set()  # still within the grace period
    NodeInventory.objects.filter(name="n2").update(first_seen=timezone.now() - timedelta(seconds=700))
    check_inventories()
    assert open_findings("n2") == {("unregistered", "annotation", "")}
    sync_nodes([a10_node("n1"), a10_node("n2")])
    assert open_findings("n1") == open_findings("n2") == set()


def test_gone_nodes_resolve_and_nodes_without_group_or_profile_are_not_judged(db):
    from profiles.models import DriftFinding
    from profiles.sync import sync_nodes

    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    NodeGroupFactory(name="gpu-l4")
    sick = _with({0: {"health": False}})
    other = node(
        "l4-1",
        [gpu("GPU-l4", type="NVIDIA L4", health=False)],
        labels={"eks.amazonaws.com/nodegroup": "gpu-l4"},
    )
    stray = node("stray", [gpu("GPU-s", health=False)])
    sync_nodes([sick, other, stray])
    assert DriftFinding.objects.filter(resolved_at__isnull=True).count() == 1
    sync_nodes([other, stray])  # n1 vanished
    assert DriftFinding.objects.filter(resolved_at__isnull=True).count() == 0


def test_drift_gauge_by_group_and_kind(client, a10_group):
    from profiles.sync import sync_nodes

    sync_nodes([_with({0: {"health": False}, 1: {"health": False}, 2: {"devmem": 1000}})])
    text = client.get("/metrics").content.decode()
    assert 'hami_sim_drift_findings{kind="degradation",node_group="gpu-a10"} 2.0' in text
    assert 'hami_sim_drift_findings{kind="mismatch",node_group="gpu-a10"} 1.0' in text


def test_check_drift_task_records_its_run(a10_group):
    from hami_sim.runtime.models import TaskRun
    from profiles.sync import sync_nodes
    from profiles.tasks import check_drift

    sync_nodes([_with({0: {"health": False}})])
    result = check_drift.apply(kwargs={"node_group_id": a10_group.pk}).get()
    assert result["checked"] == 1 and result["open"] == 1 and result["opened"] == 0  # idempotent
    run = TaskRun.objects.get(task="check_drift")
    assert run.outcome == "success" and run.counts["open"] == 1 and run.finished_at is not None


def test_runs_abandoned_by_a_killed_worker_are_closed_by_the_next_run():
    from hami_sim.runtime.taskruns import record_run

    lost = TaskRunFactory(task="check_drift", started_at=timezone.now() - timedelta(hours=2))
    recent = TaskRunFactory(task="check_drift", started_at=timezone.now() - timedelta(seconds=5))
    with record_run("check_drift", "t-2") as counts:
        counts["checked"] = 0
    lost.refresh_from_db()
    recent.refresh_from_db()
    assert lost.outcome == "failure" and lost.error.startswith("abandoned")
    assert recent.outcome == "running"  # may still be working
