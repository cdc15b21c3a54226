"""Two versions of a device profile compared on one page (fields and rows)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.factories.models import NodeGroupFactory

from .conftest import A10
from .test_history_revert import edited_profile  # noqa: F401  (fixture: created, then edited twice)

pytestmark = [pytest.mark.django_db]


def _compare(client, profile, a=None, b=None) -> str:
    url = reverse("dashboard:profile-compare", args=[profile.node_group.name, profile.pk])
    params = {k: v for k, v in (("a", a), ("b", b)) if v is not None}
    response = client.get(url, params)
    assert response.status_code == 200
    return response.content.decode()


def test_default_compares_the_two_newest_versions(admin_client, edited_profile):  # noqa: F811
    html = _compare(admin_client, edited_profile)
    # the last edit changed the card memory and the notes
    assert re.search(r"devmem: <b>23028</b>", html) and re.search(r"devmem: <b>40000</b>", html)
    assert "half the cards" in html and "bigger cards" in html
    assert 'class="row-changed"' in html


@pytest.mark.parametrize(
    ("older", "newer", "expect"),
    [
        (0, 1, ["quantity: <b>4</b>", "quantity: <b>2</b>"]),
        (0, 2, ["quantity: <b>4</b>", "devmem: <b>40000</b>"]),
        (2, 2, ["No difference between"]),
    ],
)
def test_any_two_versions(admin_client, edited_profile, older, newer, expect):  # noqa: F811
    entries = list(edited_profile.history.order_by("history_date"))
    html = _compare(admin_client, edited_profile, entries[older].history_id, entries[newer].history_id)
    for text in expect:
        assert text in html, text


def test_added_and_removed_rows(admin_client, db):
    from profiles.models import DeviceProfile
    from profiles.services import save_profile

    group = NodeGroupFactory(name="gpu-mixed", rows=[{**A10, "quantity": 4}])
    profile = DeviceProfile.objects.get(node_group=group)
    save_profile(profile, rows=[{**A10, "quantity": 4}, {**A10, "quantity": 2, "numa": 1}])
    html = _compare(admin_client, profile)
    assert 'class="row-added"' in html and 'class="row-same"' in html
    entries = list(profile.history.order_by("history_date"))
    html = _compare(admin_client, profile, entries[-1].history_id, entries[0].history_id)
    assert 'class="row-removed"' in html


def test_group_page_links_to_the_comparison_and_bad_ids_fall_back(admin_client, edited_profile):  # noqa: F811
    group = edited_profile.node_group
    page = admin_client.get(reverse("dashboard:node-group", args=[group.name])).content.decode()
    assert reverse("dashboard:profile-compare", args=[group.name, edited_profile.pk]) in page
    assert "devmem: <b>40000</b>" in _compare(admin_client, edited_profile, a="nope", b="999999")
    wrong_group = reverse("dashboard:profile-compare", args=["other", edited_profile.pk])
    assert admin_client.get(wrong_group).status_code == 404
