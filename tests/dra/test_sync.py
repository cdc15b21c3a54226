"""DRA objects synced with the real kubernetes client from the loopback API: list, watch, bad objects."""

from __future__ import annotations

import pytest

from tests.dra.objects import HAMI_CLASS, dra_pod, node_slice
from tests.usage.test_watch import watching
from tests.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


def _stored() -> dict[str, list[str]]:
    from usage.models import DraObject

    out: dict[str, list[str]] = {}
    for kind, name in DraObject.objects.values_list("kind", "name"):
        out.setdefault(kind, []).append(name)
    return out


def test_a_sync_lists_every_dra_kind_page_by_page(kube_api, source):
    from usage.dra import dra_state, sync_dra

    for node in ("gpu-1", "gpu-2", "gpu-3"):
        kube_api.dra["resourceslices"].append(node_slice(node))
    kube_api.dra["deviceclasses"].append(HAMI_CLASS)
    _pod, claims = dra_pod("train", 8000)
    kube_api.dra["resourceclaims"].extend(claims)
    counts = sync_dra(source)
    assert {r: c["count"] for r, c in counts.items()} == {
        "resourceslices": 3,
        "resourceclaims": 1,
        "resourceclaimtemplates": 0,
        "deviceclasses": 1,
    }
    assert sum("/apis/resource.k8s.io/v1/resourceslices" in r for r in kube_api.requests) == 2  # pages of 2
    state = dra_state()
    assert state.nodes() == ("gpu-1", "gpu-2", "gpu-3")
    assert list(state.claims) == [("ml", "ml-train-main")]
    assert not state.skipped


def test_a_cluster_without_dra_keeps_what_was_stored_and_says_why(kube_api, source):
    from usage.dra import sync_dra

    kube_api.dra["resourceslices"].append(node_slice("gpu-1"))
    sync_dra(source)
    kube_api.dra_fail_status = 404
    counts = sync_dra(source)
    assert "404" in counts["resourceslices"]["error"]
    assert _stored() == {"ResourceSlice": ["gpu-1-hami-core-gpu.project-hami.io"]}


def test_an_object_with_a_nul_is_stored_without_it_and_an_unsimulated_claim_is_named(kube_api, source):
    from usage.dra import dra_state, sync_dra

    bad = node_slice("gpu-1")
    bad["spec"]["devices"][0]["attributes"]["productName"] = {"string": "A10\x00evil"}
    kube_api.dra["resourceslices"].append(bad)
    constrained = {
        "metadata": {"name": "pair", "namespace": "ml"},
        "spec": {"devices": {"requests": [], "constraints": [{"matchAttribute": "x/numa"}]}},
    }
    kube_api.dra["resourceclaims"].append(constrained)
    sync_dra(source)  # PostgreSQL refuses a NUL in text: the sync would fail outright
    state = dra_state()
    (device,) = [d for s in state.slices for d in s.devices if d.name == "gpu-0"]
    assert device.attributes["hami-core-gpu.project-hami.io/productName"] == "A10\ufffdevil"
    assert state.skipped == (
        "ResourceClaim ml/pair: claim pair: constraints (matchAttribute, distinctAttribute) are not simulated",
    )


@pytest.mark.slow
def test_the_watcher_keeps_dra_objects_in_step(kube_api, source):
    kube_api.dra["resourceslices"].append(node_slice("gpu-1"))
    with watching(source):
        assert kube_api.wait_for_watches(6)  # nodes, pods and the four DRA kinds
        assert eventually(lambda: _stored().get("ResourceSlice") == ["gpu-1-hami-core-gpu.project-hami.io"])
        kube_api.add_dra("resourceslices", node_slice("gpu-2"))
        kube_api.add_dra("deviceclasses", HAMI_CLASS)
        assert eventually(lambda: len(_stored().get("ResourceSlice", [])) == 2 and "DeviceClass" in _stored())
        kube_api.delete_dra("resourceslices", "", "gpu-1-hami-core-gpu.project-hami.io")
        assert eventually(lambda: _stored().get("ResourceSlice") == ["gpu-2-hami-core-gpu.project-hami.io"])


@pytest.mark.slow
def test_a_cluster_without_dra_does_not_hold_up_the_node_and_pod_watch(kube_api, source):
    from tests.usage.conftest import gpu_node
    from usage.models import UsageState

    kube_api.dra_fail_status = 404
    kube_api.add_node(gpu_node("n1"))
    with watching(source):
        assert kube_api.wait_for_watches(2)
        kube_api.add_node(gpu_node("n2"))
        assert eventually(lambda: UsageState.objects.filter(pk=1, confirmed_at__isnull=False).exists())
