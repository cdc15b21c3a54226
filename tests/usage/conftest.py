"""Builders for the usage tests: GPU nodes and HAMi-allocated pods as the API server returns them."""

from __future__ import annotations

import pytest

from tests.factories import gpu, node

ALLOCATED = "hami.io/vgpu-devices-allocated"


def gpu_node(name: str, cards: int = 4, devmem: int = 23028, mode: str = "hami-core") -> dict:
    n = node(name, [gpu(f"GPU-{name}-{i}", index=i, devmem=devmem, mode=mode) for i in range(cards)])
    n["kind"], n["apiVersion"] = "Node", "v1"
    n["metadata"]["uid"] = f"uid-{name}"
    return n


def hami_pod(
    name: str,
    node_name: str | None,
    devices: list[tuple[str, int, int]] | str,
    *,
    namespace: str = "ml",
    phase: str = "Running",
    **annotations: str,
) -> dict:
    """A pod HAMi bound to ``node_name`` holding ``[(uuid, usedmem, usedcores)]`` in one container."""
    ann = dict(annotations)
    if node_name is not None:
        ann["hami.io/vgpu-node"] = node_name
    if isinstance(devices, str):
        ann[ALLOCATED] = devices
    elif devices:
        ann[ALLOCATED] = "".join(f"{u},NVIDIA,{m},{c}:" for u, m, c in devices) + ";"
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{namespace}-{name}",
            "annotations": ann,
        },
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "nodeName": node_name},
        "status": {"phase": phase},
    }


@pytest.fixture
def kube_api():
    from tests.kubeapi import FakeKubeAPI

    with FakeKubeAPI() as api:
        yield api


@pytest.fixture
def source(kube_api, tmp_path, settings):
    settings.KUBE_PAGE_SIZE = 2
    settings.KUBE_REQUEST_TIMEOUT = 2.0
    return f"kubeconfig:{kube_api.write_kubeconfig(tmp_path / 'kubeconfig')}"
