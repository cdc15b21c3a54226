"""A locked-out name stays locked in every spelling Django's login form reads as that name.

The admin login strips the username and applies NFKC before authenticating, so ``"viewer "``, a
tab, a leading space and fullwidth letters all log in as ``viewer``. Failures were counted under the
cleaned name and the lockout checked under the raw one: each spelling guessed five more times."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories.models import UserFactory

pytestmark = pytest.mark.django_db

SPELLINGS = ["viewer", "viewer ", "viewer\t", " viewer", "\u3000viewer", "ｖｉｅｗｅｒ", "VIEWER"]


def _login(username: str, password: str, address: str = "10.9.0.1") -> int:
    return (
        Client()
        .post("/admin/login/", {"username": username, "password": password}, REMOTE_ADDR=address)
        .status_code
    )


@pytest.mark.parametrize("guessed_as", SPELLINGS)
@pytest.mark.parametrize("tried_as", SPELLINGS[:-1])  # (Django's accounts are case-sensitive)
def test_a_lockout_holds_for_every_spelling_of_the_name(empty_cache, guessed_as, tried_as):
    UserFactory(username="viewer", password="viewer-pw-123", is_staff=True)
    assert _login(tried_as, "viewer-pw-123", "10.9.9.9") == 302  # the spelling logs in as viewer
    for _ in range(5):
        assert _login(guessed_as, "wrong") == 200
    assert _login(tried_as, "viewer-pw-123") == 429
    assert _login(tried_as, "viewer-pw-123", "10.9.0.2") == 302  # the lock is this address's
