"""Demo data for the dashboard tests: the demo node groups, the demo cluster snapshot, the demo pods."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories.models import UserFactory

DEMO = Path(__file__).resolve().parents[2] / "demo"


def load_demo() -> dict:
    from decisions.demo import seed
    from profiles.tasks import sync_cluster_inventory
    from profiles.yamlio import import_profiles

    import_profiles((DEMO / "profiles.yaml").read_text())
    sync_cluster_inventory.apply(kwargs={"source": f"file://{DEMO / 'cluster-snapshot.json'}"}).get()
    return seed()


@pytest.fixture
def demo_data(db):
    return load_demo()


@pytest.fixture
def staff(db):
    return UserFactory(username="oncall", password="pw-oncall", is_staff=True)


@pytest.fixture
def operator(db):
    """A logged-in on-call engineer in the ``operators`` role: may create and fork sessions."""
    return UserFactory(username="operator", password="pw-operator", is_staff=True, roles=["operators"])
