"""Shared fixtures. Node and pod builders live in ``tests/factories.py``."""

import pytest


@pytest.fixture(autouse=True)
def _fresh_simulator():
    """Each test sees a simulator built from its own settings, with empty memo caches."""
    from simulations.engine import get_simulator

    get_simulator.cache_clear()
    yield
    get_simulator.cache_clear()
