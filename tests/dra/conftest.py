from __future__ import annotations

import pytest


@pytest.fixture
def kube_api():
    from tests.kubeapi import FakeKubeAPI

    with FakeKubeAPI() as api:
        yield api


@pytest.fixture
def source(kube_api, tmp_path, settings):
    settings.KUBE_PAGE_SIZE = 2
    settings.KUBE_REQUEST_TIMEOUT = 2.0
    settings.DRA_SYNC = True
    return f"kubeconfig:{kube_api.write_kubeconfig(tmp_path / 'kubeconfig')}"
