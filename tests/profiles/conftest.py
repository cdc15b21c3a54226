"""Fixtures for the profiles tests: node groups with profiles, an API client with a token."""

from __future__ import annotations

import pytest

from tests.factories.models import A10G, NodeGroupFactory, TokenFactory
from tests.factories.models import H100 as H100_ROW

A10, H100 = A10G, H100_ROW  # the device rows these tests put in profiles


@pytest.fixture
def make_group(db):
    """``make_group("gpu-a10", rows=[{**A10, "quantity": 4}], source="profile-only", labels={...})``:
    ``NodeGroupFactory`` under the names these tests use."""

    def make(
        name: str, rows: list[dict] | None = None, *, source: str = "annotation-first", labels=None, **fields
    ):
        if labels is not None:
            fields["match_labels"] = labels
        return NodeGroupFactory(name=name, inventory_source=source, rows=rows or None, **fields)

    return make


@pytest.fixture
def token_client(db):
    """A DRF client authenticated with an operator's API token (what GitOps automation would use)."""
    from rest_framework.test import APIClient

    token = TokenFactory(user__username="ops")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def kube_api():
    from tests.kubeapi import FakeKubeAPI

    with FakeKubeAPI() as api:
        yield api
