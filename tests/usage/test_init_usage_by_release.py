"""The cluster sync counts a pod's init containers as the release ``HAMI_VERSION`` names does.

A pod whose init container held 4000 MiB of a GPU and whose main container holds 1000 MiB of the
same GPU: v2.10 counts the init containers at their peak (one slot, the larger memory) and drops
them once they all succeeded; v2.9's and v2.8's ``getNodesUsage`` adds every container's devices
up, the init container's too, one slot each, whatever the init container's state."""

from __future__ import annotations

import pytest

from tests.factories import hami_pod

from .conftest import gpu_node

pytestmark = [pytest.mark.django_db]

DONE = [{"name": "i0", "state": {"terminated": {"exitCode": 0}}}]


def _pod(init_done: bool) -> dict:
    pod = hami_pod("init-pod", "n1", "GPU-n1-0,NVIDIA,4000,0:;GPU-n1-0,NVIDIA,1000,10:;")
    pod["spec"]["initContainers"] = [{"name": "i0", "image": "busybox"}]
    if init_done:
        pod["status"]["initContainerStatuses"] = DONE
    return pod


@pytest.mark.parametrize(
    ("release", "init_done", "used", "usedmem", "usedcores"),
    [
        ("2.10", False, 1, 4000, 10),  # the peak: max(init, app)
        ("2.10", True, 1, 1000, 10),  # init succeeded: the app container alone
        ("2.9", False, 2, 5000, 10),  # every container adds up
        ("2.9", True, 2, 5000, 10),
        ("2.8", False, 2, 5000, 10),
    ],
)
def test_init_containers_in_live_usage(
    kube_api, source, settings, release, init_done, used, usedmem, usedcores
):
    from usage.cluster import sync_cluster
    from usage.store import get_store

    settings.HAMI_VERSION = release
    kube_api.nodes = [gpu_node("n1", cards=1)]
    kube_api.pods = [_pod(init_done)]
    sync_cluster(source)
    get_store().refresh(force=True)
    gpu = get_store().get("n1").devices["GPU-n1-0"]
    assert (gpu.used, gpu.usedmem, gpu.usedcores) == (used, usedmem, usedcores)
