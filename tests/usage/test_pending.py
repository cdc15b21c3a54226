"""Pending HAMi pods and what CA reads of live nodes, kept by the relist and the watch through the real
kubernetes client against the loopback API server (FailedScheduling messages from the events).

CA considers a pending pod only once its ``PodScheduled`` condition is ``False`` with the reason
``Unschedulable`` (``cluster-autoscaler/utils/kubernetes/listers.go``, tags cluster-autoscaler-1.32.1
and cluster-autoscaler-1.36.1): the rows' ``unschedulable`` flag."""

from __future__ import annotations

import pytest

from tests.factories import hami_pod
from tests.waiting import eventually

from .conftest import gpu_node
from .test_watch import watching

pytestmark = [pytest.mark.django_db]

MESSAGE = "0/1 nodes are available: 1 node(s) CardInsufficientMemory. preemption: not eligible"


def waiting(
    name: str, mem: int = 80000, *, namespace: str = "ml", unschedulable: bool = True, **extra
) -> dict:
    """A pending pod asking one card with ``mem`` MiB (CA considers it once PodScheduled=False)."""
    pod = {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "creationTimestamp": "2025-01-01T00:00:00Z",
        },
        "spec": {
            "containers": [
                {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": str(mem)}}}
            ]
        },
        "status": {"phase": "Pending"},
    }
    if unschedulable:
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    pod.update(extra)
    return pod


def bound(name: str, node: str, *, gpus: int = 1, cpu: str = "2") -> dict:
    pod = hami_pod(name, node, [(f"GPU-{node}-0", 1000, 10)])
    pod["spec"]["containers"][0]["resources"] = {
        "limits": {"nvidia.com/gpu": str(gpus)},
        "requests": {"cpu": cpu},
    }
    return pod


def failed_event(pod: str) -> dict:
    return {
        "kind": "Event",
        "metadata": {"name": f"{pod}.1", "namespace": "ml", "creationTimestamp": "2025-01-01T00:01:00Z"},
        "involvedObject": {"kind": "Pod", "namespace": "ml", "name": pod, "uid": f"uid-{pod}"},
        "reason": "FailedScheduling",
        "message": MESSAGE,
        "lastTimestamp": "2025-01-01T00:01:00Z",
    }


def cluster(kube_api) -> None:
    n1 = gpu_node("n1")
    n1["status"]["allocatable"]["nvidia.com/gpu"] = "40"
    n1["spec"]["taints"] = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    kube_api.nodes = [n1]
    kube_api.pods = [
        bound("a", "n1", gpus=2),
        bound("b", "n1", cpu="500m"),
        hami_pod("done", "n1", [("GPU-n1-3", 1000, 10)], phase="Succeeded"),  # finished: not counted
        waiting("wait-1"),
        waiting("wait-2", unschedulable=False),  # not tried yet
        {
            "kind": "Pod",
            "metadata": {"name": "web", "namespace": "ml", "uid": "w"},
            "spec": {"containers": [{"name": "c"}]},
        },
        waiting(
            "going",
            metadata={
                "name": "going",
                "namespace": "ml",
                "uid": "uid-going",
                "deletionTimestamp": "2025-01-01T00:00:00Z",
            },
        ),
    ]
    kube_api.events = {"ml": [failed_event("wait-1")]}


def test_relist_keeps_pending_hami_pods_reasons_and_node_sums(kube_api, source):
    from usage.cluster import sync_cluster
    from usage.models import NodeFacts, PendingPod

    cluster(kube_api)
    counts = sync_cluster(source)
    assert counts["pending"] == 2 and counts["reasons"] == 1
    rows = {p.name: p for p in PendingPod.objects.all()}
    assert sorted(rows) == ["wait-1", "wait-2"]  # not the plain pod, not the one being deleted
    assert rows["wait-1"].reasons == MESSAGE and rows["wait-1"].unschedulable
    assert rows["wait-2"].reasons == "" and not rows["wait-2"].unschedulable
    assert rows["wait-1"].pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpumem"] == "80000"
    assert rows["wait-1"].created_at.year == 2025
    facts = NodeFacts.objects.get(name="n1")
    assert facts.node["status"]["allocatable"]["nvidia.com/gpu"] == "40"
    assert facts.node["spec"]["taints"][0]["key"] == "nvidia.com/gpu"
    assert facts.requested == {
        "cpu": 2500,
        "memory": 0,
        "ephemeral": 0,
        "pods": 2,
        "scalars": {"nvidia.com/gpu": 3},
    }
    assert any("fieldSelector=reason%3DFailedScheduling" in r for r in kube_api.requests)

    kube_api.pods = [p for p in kube_api.pods if p["metadata"]["name"] != "wait-1"]  # it was scheduled
    counts = sync_cluster(source)
    assert list(PendingPod.objects.values_list("name", flat=True)) == ["wait-2"]


def test_a_snapshot_carries_pending_pods_and_events(tmp_path):
    import orjson

    from usage.cluster import sync_cluster
    from usage.models import PendingPod

    n1 = gpu_node("n1")
    items = [n1, waiting("wait-1"), {**failed_event("wait-1"), "apiVersion": "v1"}]
    path = tmp_path / "cluster.json"
    path.write_bytes(orjson.dumps({"kind": "List", "items": items}))
    sync_cluster(f"file://{path}")
    assert PendingPod.objects.get().reasons == MESSAGE


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_watch_keeps_pending_pods_and_node_sums(kube_api, source):
    from usage.models import NodeFacts, PendingPod

    kube_api.add_node(gpu_node("n1"))
    kube_api.add_pod(bound("a", "n1"))
    with watching(source):
        assert kube_api.wait_for_watches(2)
        kube_api.add_pod(waiting("wait-1"))
        assert eventually(lambda: PendingPod.objects.filter(name="wait-1").exists())
        scheduled = bound("wait-1", "n1", gpus=1)
        scheduled["metadata"]["uid"] = "uid-wait-1"
        kube_api.modify_pod(scheduled)  # HAMi bound it
        assert eventually(lambda: not PendingPod.objects.exists())
        assert eventually(lambda: NodeFacts.objects.get(name="n1").requested.get("pods") == 2)
        kube_api.delete_pod("ml", "a")
        assert eventually(
            lambda: NodeFacts.objects.get(name="n1").requested.get("scalars") == {"nvidia.com/gpu": 1}
        )
