"""A full sync of Nodes and Pods into the usage store: through the real kubernetes client against the
loopback API server, from a ``kubectl get nodes,pods -A -o json`` snapshot, and by the periodic task."""

from __future__ import annotations

import gc

import orjson
import pytest
from django.core.management import call_command

from tests.factories import hami_pod

from .conftest import gpu_node

pytestmark = [pytest.mark.django_db]


def usage_of(name: str) -> dict:
    from usage.store import get_store

    get_store().refresh(force=True)
    live = get_store().get(name)
    assert live is not None, f"no usage for {name}"
    return {u: (d.used, d.usedmem, d.usedcores, d.pods) for u, d in live.devices.items()}


def cluster(kube_api) -> None:
    kube_api.nodes = [gpu_node("n1"), gpu_node("n2", cards=2)]
    kube_api.pods = [
        hami_pod("full-0", "n1", [("GPU-n1-0", 23000, 100)]),
        hami_pod("half", "n1", [("GPU-n1-1", 10000, 50), ("GPU-n1-2", 10000, 50)]),
        hami_pod("half-2", "n1", [("GPU-n1-1", 5000, 10)], phase="Pending"),
        hami_pod("done", "n1", [("GPU-n1-3", 23000, 100)], phase="Succeeded"),  # terminated: free again
        hami_pod("failed", "n1", [("GPU-n1-3", 23000, 100)], phase="Failed"),
        hami_pod("unscheduled", None, [("GPU-n1-3", 23000, 100)]),  # no hami.io/vgpu-node: not HAMi's
        hami_pod("bad", "n2", "GPU-n2-0,NVIDIA,lots,10:;"),
        hami_pod("ghost", "n2", [("GPU-gone-7", 1000, 10)]),
        {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "web", "namespace": "default", "uid": "w"}},
    ]


def test_sync_counts_what_hami_counts_and_records_findings(kube_api, source):
    from usage.cluster import sync_cluster
    from usage.models import PodAllocation, UsageFinding

    cluster(kube_api)
    counts = sync_cluster(source)
    assert counts["nodes"] == 2 and counts["pods"] == 5
    assert sum(r.startswith("/api/v1/pods") for r in kube_api.requests) == 5  # limit=2 pages
    assert usage_of("n1") == {
        "GPU-n1-0": (1, 23000, 100, ("ml/full-0",)),
        "GPU-n1-1": (2, 15000, 60, ("ml/half", "ml/half-2")),
        "GPU-n1-2": (1, 10000, 50, ("ml/half",)),
        "GPU-n1-3": (0, 0, 0, ()),
    }
    assert usage_of("n2") == {"GPU-n2-0": (0, 0, 0, ()), "GPU-n2-1": (0, 0, 0, ())}
    findings = {(f.kind, f.name, f.device): f.detail for f in UsageFinding.objects.filter(resolved_at=None)}
    assert findings == {
        (
            "malformed-annotation",
            "bad",
            "",
        ): 'invalid memory field: strconv.ParseInt: parsing "lots": invalid syntax',
        (
            "unknown-device",
            "ghost",
            "GPU-gone-7",
        ): "ml/ghost holds device GPU-gone-7, which node n2 does not register",
    }
    assert PodAllocation.objects.get(name="bad").devices == []

    # the pods go away and the bad annotation is fixed: findings resolve, the cards are free
    kube_api.pods = [hami_pod("bad", "n2", [("GPU-n2-0", 1000, 10)])]
    counts = sync_cluster(source)
    assert counts["pods_deleted"] == 4 and counts["findings_resolved"] == 2
    assert usage_of("n1")["GPU-n1-1"] == (0, 0, 0, ())
    assert usage_of("n2")["GPU-n2-0"] == (1, 1000, 10, ("ml/bad",))
    assert not UsageFinding.objects.filter(resolved_at=None).exists()


def test_a_failed_pod_read_changes_nothing_and_is_recorded(kube_api, source):
    from profiles.kube import SourceError
    from usage.cluster import relist_pods, sync_cluster
    from usage.models import UsageState

    cluster(kube_api)
    sync_cluster(source)
    before = usage_of("n1")
    kube_api.pods = []
    kube_api.fail_status = 500
    with pytest.raises(SourceError, match="Kubernetes API answered 500"):
        relist_pods(source)
    assert usage_of("n1") == before
    assert gc.isenabled()  # the collector a relist pauses is back on after a failed one too
    assert UsageState.objects.get().error == "Kubernetes API answered 500: " + kube_api.fail_message


def test_sync_cluster_command_reads_pods_beside_nodes_from_a_snapshot(kube_api, tmp_path):
    from profiles.models import NodeInventory

    cluster(kube_api)
    snapshot = tmp_path / "cluster.json"  # what `kubectl get nodes,pods -A -o json` writes
    snapshot.write_bytes(
        orjson.dumps({"apiVersion": "v1", "kind": "List", "items": kube_api.nodes + kube_api.pods})
    )
    call_command("sync_cluster", source=f"file://{snapshot}")
    assert sorted(NodeInventory.objects.values_list("name", flat=True)) == ["n1", "n2"]  # pods are no nodes
    assert usage_of("n1")["GPU-n1-0"] == (1, 23000, 100, ("ml/full-0",))


def test_the_periodic_relist_syncs_pods_too(kube_api, source):
    from profiles.tasks import sync_cluster_inventory

    cluster(kube_api)
    counts = sync_cluster_inventory.apply(kwargs={"source": source}).get()
    assert counts["nodes"] == 2 and counts["pods"] == 5
    assert usage_of("n1")["GPU-n1-2"] == (1, 10000, 50, ("ml/half",))

    kube_api.fail_status = 500  # a failed read: the task fails as before, usage is kept
    with pytest.raises(Exception, match="500"):
        sync_cluster_inventory.apply(kwargs={"source": source}).get()
    assert usage_of("n1")["GPU-n1-2"] == (1, 10000, 50, ("ml/half",))


def test_usage_age_and_nodes_without_usage_are_exported(client, kube_api, source):
    import re

    from profiles.sync import sync_nodes
    from usage.cluster import sync_cluster

    cluster(kube_api)
    sync_cluster(source)
    sync_nodes([*kube_api.nodes, gpu_node("n3")])  # a node whose pods were never read
    text = client.get("/metrics").content.decode()
    ages = dict(re.findall(r'hami_sim_node_usage_age_seconds\{node="([^"]+)"\} ([0-9.e+-]+)', text))
    assert set(ages) == {"n1", "n2"} and all(float(a) < 600 for a in ages.values())
    assert re.search(r"^hami_sim_usage_confirmed_age_seconds [0-9.e+-]+$", text, re.M)
    assert "hami_sim_live_nodes_without_usage 1.0" in text


def test_a_relist_skips_pods_whose_resource_version_is_unchanged(kube_api, source):
    from usage.cluster import sync_cluster
    from usage.models import PodAllocation

    kube_api.add_node(gpu_node("n1"))
    for i in range(3):
        kube_api.add_pod(hami_pod(f"p{i}", "n1", [(f"GPU-n1-{i}", 1000, 10)]))
    first = sync_cluster(source)
    assert first["pods_created"] == 3 and first["pods_unchanged"] == 0
    again = sync_cluster(source)
    assert again["pods_unchanged"] == 3 and again["pods_created"] == again["pods_updated"] == 0
    # a status update: new resourceVersion, same allocation; then a real change
    kube_api.modify_pod(
        {
            **hami_pod("p0", "n1", [("GPU-n1-0", 1000, 10)]),
            "status": {"phase": "Running", "podIP": "10.0.0.9"},
        }
    )
    kube_api.modify_pod(hami_pod("p1", "n1", [("GPU-n1-1", 5000, 10)]))
    counts = sync_cluster(source)
    assert counts["pods_unchanged"] == 1 and counts["pods_updated"] == 1
    assert (
        PodAllocation.objects.get(name="p0").resource_version
        == kube_api.pods[0]["metadata"]["resourceVersion"]
    )
    assert usage_of("n1")["GPU-n1-1"] == (1, 5000, 10, ("ml/p1",))
    assert sync_cluster(source)["pods_unchanged"] == 3
