"""Issue 16 (hardening): every probe of the corpus answered with its clear 4xx, through Django's client.

The same probes run against gunicorn in ``test_gunicorn_corpus.py``; item-specific behaviour that
needs more than one request (throttles, caps, retention, start-up refusals) has its own tests below
and in the other ``test_harden_*.py`` files.
"""

from __future__ import annotations

import pytest

from .corpus import HARDENING, Probe, row_counts

pytestmark = [pytest.mark.api, pytest.mark.django_db]


@pytest.fixture
def clients(client, django_user_model, make_probe_world):
    """A Django test client per ``Probe.auth``."""
    from django.test import Client

    viewer, operator = make_probe_world
    by_auth = {"anon": client}
    for name, user in (("viewer", viewer), ("operator", operator)):
        logged_in = Client()
        logged_in.force_login(user)
        by_auth[name] = logged_in
    return by_auth


def send(client, probe: Probe):
    if isinstance(probe.body, dict):  # an HTML form
        return client.generic(
            probe.method,
            probe.path,
            _urlencode(probe.body),
            content_type="application/x-www-form-urlencoded",
        )
    return client.generic(probe.method, probe.path, probe.body, content_type=probe.content_type)


def _urlencode(form: dict) -> str:
    from urllib.parse import urlencode

    return urlencode(form, doseq=True)


@pytest.mark.parametrize("probe", HARDENING, ids=lambda p: f"item{p.item}-{p.id}")
def test_probe_gets_its_clear_refusal_and_changes_nothing(clients, probe):
    before = row_counts()
    response = send(clients[probe.auth], probe)
    assert response.status_code in probe.statuses, response.content[:500]
    assert probe.expect.lower() in response.content.decode(errors="replace").lower()
    if response.status_code >= 400:
        assert row_counts() == before
