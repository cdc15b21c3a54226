from __future__ import annotations

import pytest

from tests.usage.conftest import kube_api, source  # noqa: F401 (the loopback API double and its kubeconfig)


@pytest.fixture(autouse=True)
def _dra_sync(settings):
    """The DRA app tests run with DRA_SYNC on, as a cluster moving to DRA would."""
    settings.DRA_SYNC = True
