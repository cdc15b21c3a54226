"""Aggregate capacity (``CA_AGGREGATE_CAPACITY``, deploy/capacity): the watcher advertises each HAMi
node's summed device memory and cores on ``status.capacity`` through the real kubernetes client and
the loopback API server, re-asserts them when kubelet drops them, and does nothing when the mode is off.

kubelet drops them on a start without its device-manager checkpoint: ``reconcileExtendedResource``
(``pkg/kubelet/kubelet_node_status.go``, kubernetes v1.32 to v1.35) sets every extended resource's
capacity to 0, patched ones included."""

from __future__ import annotations

import copy

import pytest

from tests.waiting import eventually

from .conftest import gpu_node
from .test_watch import watching

GPUMEM, GPUCORES = "nvidia.com/gpumem", "nvidia.com/gpucores"
ADVERTISED = {GPUMEM: str(4 * 23028), GPUCORES: "400"}  # 4 cards of 23028 MiB, 100 cores each


def plain_node(name: str) -> dict:
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": {}},
        "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }


def advertised(kube_api, name: str) -> dict:
    node = next(n for n in kube_api.nodes if n["metadata"]["name"] == name)
    capacity = node["status"].get("capacity") or {}
    return {k: capacity[k] for k in (GPUMEM, GPUCORES) if k in capacity}


@pytest.mark.parametrize(
    ("capacity", "want", "ops"),
    [
        # kubelet's capacity without the names: both added (JSON pointer escapes "/" as "~1")
        (
            {"cpu": "8"},
            ADVERTISED,
            [
                {"op": "add", "path": "/status/capacity/nvidia.com~1gpucores", "value": "400"},
                {"op": "add", "path": "/status/capacity/nvidia.com~1gpumem", "value": "92112"},
            ],
        ),
        # already advertised (another notation of the same quantity counts as the same): nothing
        ({GPUMEM: "92112", GPUCORES: "400"}, ADVERTISED, []),
        ({GPUMEM: "92112", GPUCORES: "4k"}, {GPUMEM: "92112", GPUCORES: "4000"}, []),
        # kubelet restarted without its checkpoint and set them to 0: written again
        (
            {GPUMEM: "0", GPUCORES: "400"},
            ADVERTISED,
            [{"op": "add", "path": "/status/capacity/nvidia.com~1gpumem", "value": "92112"}],
        ),
        # a node that lost its registered cards: the names it still advertises go
        (
            {"cpu": "8", GPUMEM: "92112"},
            {},
            [{"op": "remove", "path": "/status/capacity/nvidia.com~1gpumem"}],
        ),
        # not a HAMi node: nothing
        ({"cpu": "8"}, {}, []),
    ],
)
def test_capacity_patch(capacity, want, ops):
    from usage.capacity import capacity_patch

    node = {"metadata": {"name": "n1"}, "status": {"capacity": capacity}}
    assert capacity_patch(node, want, {GPUMEM, GPUCORES}) == ops


def test_the_aggregate_is_the_sum_of_healthy_registered_cards():
    from hami_sim.engine.simulate import Simulator
    from tests.factories import gpu, node
    from usage.capacity import aggregate_of

    sim = Simulator()
    assert aggregate_of(sim, gpu_node("n1")) == ADVERTISED
    sick = node("n2", [gpu("GPU-a", devmem=81559), gpu("GPU-b", index=1, devmem=81559, health=False)])
    assert aggregate_of(sim, sick) == {GPUMEM: "81559", GPUCORES: "100"}
    assert aggregate_of(sim, plain_node("cpu-1")) == {}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_watcher_advertises_and_reasserts_after_kubelet_drops_them(kube_api, source, settings):
    settings.CA_AGGREGATE_CAPACITY = True
    kube_api.add_node(gpu_node("n1"))
    kube_api.add_node(plain_node("cpu-1"))
    with watching(source, node_sync_seconds=0.1) as watcher:
        assert kube_api.wait_for_watches(2)
        assert advertised(kube_api, "n1") == ADVERTISED  # patched by the first relist
        assert advertised(kube_api, "cpu-1") == {}
        name, content_type, body = kube_api.patches[0]
        assert (name, content_type) == ("n1", "application/json-patch+json")
        # kubelet restarts without its device-manager checkpoint: the patched values drop to 0
        restarted = copy.deepcopy(next(n for n in kube_api.nodes if n["metadata"]["name"] == "n1"))
        restarted["status"]["capacity"].update({GPUMEM: "0", GPUCORES: "0"})
        kube_api.modify_node(restarted)
        assert eventually(lambda: advertised(kube_api, "n1") == ADVERTISED)
        assert eventually(lambda: watcher.counts.get("capacity_patches") == 2)
    assert [p[0] for p in kube_api.patches] == ["n1", "n1"]  # the node it patched itself is not patched again


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_watcher_patches_nothing_when_the_mode_is_off(kube_api, source, settings):
    settings.CA_AGGREGATE_CAPACITY = False
    kube_api.add_node(gpu_node("n1"))
    with watching(source, node_sync_seconds=0.1) as watcher:
        assert kube_api.wait_for_watches(2)
        kube_api.modify_node(gpu_node("n1"))
        assert eventually(lambda: watcher.counts["node_syncs"] >= 1)
    assert kube_api.patches == [] and not any(r.startswith("PATCH") for r in kube_api.requests)
    assert advertised(kube_api, "n1") == {}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_without_the_rbac_the_watcher_keeps_syncing_and_counts_the_error(kube_api, source, settings):
    from usage.store import get_store

    settings.CA_AGGREGATE_CAPACITY = True
    kube_api.patch_fail_status = 403
    kube_api.add_node(gpu_node("n1"))
    with watching(source) as watcher:
        assert kube_api.wait_for_watches(2)
        assert watcher.counts["errors"] >= 1
        get_store().refresh(force=True)
        assert get_store().get("n1") is not None  # usage still synced
    assert advertised(kube_api, "n1") == {}


def test_the_docs_say_the_watchers_node_sync_period():
    """docs/cluster-autoscaler.md: the watcher patches the values back "within its node sync period
    (2 s by default)" after kubelet zeroes them."""
    from dataclasses import fields

    from tests.docs.examples import REPO
    from usage.cluster import ClusterWatcher

    (period,) = [f.default for f in fields(ClusterWatcher) if f.name == "node_sync_seconds"]
    doc = " ".join((REPO / "docs" / "cluster-autoscaler.md").read_text().split())
    assert f"within its node sync period ({period:g} s by default)" in doc
