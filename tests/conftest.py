"""Shared fixtures. Node and pod builders live in ``tests/factories.py``."""

import pytest


@pytest.fixture(autouse=True)
def _fresh_simulator():
    """Each test sees a simulator built from its own settings, with empty memo caches."""
    from profiles.inventory import reset as reset_profile_catalog
    from simulations.engine import get_simulator

    get_simulator.cache_clear()
    reset_profile_catalog()  # node-group profiles are cached per process; tests roll the database back
    yield
    get_simulator.cache_clear()
