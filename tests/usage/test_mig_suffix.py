"""The cluster sync under ``HAMI_VERSION`` 2.9: a MIG instance allocated by HAMi v2.9.0 is the GPU's
UUID with a ``[geometry-position]`` suffix in the pod's allocation annotation. The stored usage
counts it on the GPU and keeps the slot it takes; under 2.10 the same UUID names no device."""

from __future__ import annotations

import pytest

from hami_sim.engine.model import MigPlacement
from tests.factories import hami_pod

from .conftest import gpu_node

pytestmark = [pytest.mark.django_db]


def stored(name: str):
    from usage.store import get_store

    get_store().refresh(force=True)
    live = get_store().get(name)
    assert live is not None, f"no usage for {name}"
    return live.devices


@pytest.mark.parametrize("release", ["2.9", "2.8"])
def test_a_suffixed_allocation_counts_on_its_gpu_and_keeps_its_slot(kube_api, source, settings, release):
    from usage.cluster import sync_cluster
    from usage.models import UsageFinding

    settings.HAMI_VERSION = release
    kube_api.nodes = [gpu_node("m1", cards=1, devmem=40960, mode="mig")]
    kube_api.pods = [hami_pod("mig-a", "m1", [("GPU-m1-0[1-1]", 10240, 28)])]
    sync_cluster(source)
    gpu = stored("m1")["GPU-m1-0"]
    assert (gpu.used, gpu.usedmem, gpu.usedcores, gpu.pods) == (1, 10240, 28, ("ml/mig-a",))
    assert gpu.mig == (("[1-1]", MigPlacement(1, 1)),) and not gpu.unhealthy
    assert not UsageFinding.objects.filter(resolved_at=None).exists()


def test_under_v2_10_the_suffixed_uuid_is_an_unknown_device(kube_api, source, settings):
    from usage.cluster import sync_cluster
    from usage.models import UsageFinding

    settings.HAMI_VERSION = "2.10"
    kube_api.nodes = [gpu_node("m1", cards=1, devmem=40960, mode="mig")]
    kube_api.pods = [hami_pod("mig-a", "m1", [("GPU-m1-0[1-1]", 10240, 28)])]
    sync_cluster(source)
    assert stored("m1")["GPU-m1-0"].used == 0
    [finding] = UsageFinding.objects.filter(resolved_at=None)
    assert (finding.kind, finding.device) == ("unknown-device", "GPU-m1-0[1-1]")
