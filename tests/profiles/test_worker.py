"""A real Celery worker (subprocess) on Redis syncs from the loopback Kubernetes API into the test DB."""

from __future__ import annotations

import pytest

from tests.celery_worker import celery_worker, require_worker_services
from tests.factories import gpu, node
from tests.factories.models import NodeGroupFactory

from .conftest import A10

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_worker_writes_the_inventory(db, kube_api, tmp_path):
    from django.db import connection

    from hami_sim.runtime.models import TaskRun
    from profiles.models import DriftFinding, NodeInventory

    require_worker_services(connection)

    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 2}])
    labels = {"eks.amazonaws.com/nodegroup": "gpu-a10"}
    kube_api.nodes = [
        node(
            "w1",
            [gpu("GPU-1", type="NVIDIA A10G"), gpu("GPU-2", index=1, type="NVIDIA A10G")],
            labels=dict(labels),
        ),
        node(
            "w2",
            [gpu("GPU-3", type="NVIDIA A10G"), gpu("GPU-4", index=1, type="NVIDIA A10G", health=False)],
            labels=dict(labels),
        ),
        node("w3", None, labels={"role": "cpu"}),
    ]
    kubeconfig = kube_api.write_kubeconfig(tmp_path / "kubeconfig")
    run = None

    def finished() -> bool:
        nonlocal run
        run = TaskRun.objects.filter(task="sync_cluster_inventory").exclude(outcome="running").first()
        return run is not None

    env = {"KUBE_SOURCE": f"kubeconfig:{kubeconfig}", "KUBE_PAGE_SIZE": "2"}
    with celery_worker(tmp_path, env) as worker:
        worker.send("profiles.tasks.sync_cluster_inventory")
        worker.wait_until(finished)
    output = worker.log
    assert run is not None, f"the worker recorded no run; its output:\n{output}"
    assert run.outcome == "success", run.error
    assert run.counts["nodes"] == 3 and run.counts["created"] == 3
    assert {
        i.name: (i.node_group.name if i.node_group else None, len(i.devices))
        for i in NodeInventory.objects.all()
    } == {
        "w1": ("gpu-a10", 2),
        "w2": ("gpu-a10", 2),
        "w3": (None, 0),
    }
    assert list(DriftFinding.objects.values_list("inventory__name", "kind")) == [("w2", "degradation")]
    assert any(r.startswith("/api/v1/nodes?") and "limit=2" in r for r in kube_api.requests)
