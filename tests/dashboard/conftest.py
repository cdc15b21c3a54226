"""Demo data for the dashboard tests: the demo node groups, the demo cluster snapshot, the demo pods."""

from __future__ import annotations

from pathlib import Path

import pytest

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
def staff(django_user_model):
    return django_user_model.objects.create_user(
        "oncall", "oncall@example.invalid", "pw-oncall", is_staff=True
    )


@pytest.fixture
def operator(django_user_model):
    """A logged-in on-call engineer in the ``operators`` role: may create and fork sessions."""
    from tests.roles import operators_group

    user = django_user_model.objects.create_user(
        "operator", "operator@example.invalid", "pw-operator", is_staff=True
    )
    user.groups.add(operators_group())
    return user
