"""The usage tests' Kubernetes API double and GPU nodes as the API server lists them (HAMi-allocated
pods are ``tests.factories.hami_pod``, imported here for the tests that take them from here)."""

from __future__ import annotations

import pytest

from tests.factories import kube
from tests.factories.kube import hami_pod

__all__ = ["gpu_node", "hami_pod", "kube_api", "source"]


def gpu_node(name: str, cards: int = 4, devmem: int = 23028, mode: str = "hami-core") -> dict:
    """A node as the API server lists it: ``cards`` A10s of ``devmem`` MiB, with its kind and uid."""
    n = kube.gpu_node(name, cards, devmem=devmem, mode=mode)
    n["kind"], n["apiVersion"] = "Node", "v1"
    n["metadata"]["uid"] = f"uid-{name}"
    return n


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
