"""Fixtures for the profiles tests: node groups with profiles, an API client with a token."""

from __future__ import annotations

import pytest

A10 = {
    "type": "NVIDIA A10G",
    "devmem": 23028,
    "devcore": 100,
    "count": 10,
    "numa": 0,
    "mode": "hami-core",
    "mig_profiles": [],
}
H100 = {
    "type": "NVIDIA H100 80GB HBM3",
    "devmem": 81559,
    "devcore": 100,
    "count": 10,
    "numa": 0,
    "mode": "hami-core",
    "mig_profiles": [],
}


@pytest.fixture
def make_group(db):
    """``make_group("gpu-a10", rows=[{**A10, "quantity": 4}], source="profile-only", labels={...})``."""
    from profiles.models import DeviceProfile, NodeGroup
    from profiles.services import save_profile

    def make(
        name: str, rows: list[dict] | None = None, *, source: str = "annotation-first", labels=None, **fields
    ):
        group = NodeGroup.objects.create(
            name=name,
            match_labels=labels if labels is not None else {"eks.amazonaws.com/nodegroup": name},
            inventory_source=source,
            **fields,
        )
        if rows:
            profile = DeviceProfile(node_group=group, vendor="NVIDIA")
            save_profile(profile, rows=[{"quantity": 1, **row} for row in rows])
        return group

    return make


@pytest.fixture
def token_client(db):
    """A DRF client authenticated with an API token (what GitOps automation would use)."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from tests.roles import operators_group

    user = get_user_model().objects.create_user("ops", password="ops-password-123")
    user.groups.add(operators_group())  # writes need the role (migration-made)
    token = Token.objects.create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def kube_api():
    from tests.kubeapi import FakeKubeAPI

    with FakeKubeAPI() as api:
        yield api
