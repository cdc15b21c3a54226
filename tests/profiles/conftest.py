"""Fixtures for the profiles tests: the device rows they use, an API client with a token (node groups
come from ``tests.factories.models.NodeGroupFactory``)."""

from __future__ import annotations

import pytest

from tests.factories.models import A10G, TokenFactory
from tests.factories.models import H100 as H100_ROW

A10, H100 = A10G, H100_ROW  # the device rows these tests put in profiles


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
