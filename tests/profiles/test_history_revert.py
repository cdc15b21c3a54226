"""Profile history tells the truth: one entry per save, each with its changes, and a revert to any
entry (the oldest "Created" one included) restores that entry's device rows."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.factories.models import NodeGroupFactory

from .conftest import A10
from .test_admin import profile_form

pytestmark = [pytest.mark.django_db]

EDITS = [  # (rows after the edit, notes)
    ([{**A10, "quantity": 2}], "half the cards"),
    ([{**A10, "quantity": 2, "devmem": 40000}], "bigger cards"),
]


def _history_page(admin_client, profile) -> str:
    return admin_client.get(
        reverse("admin:profiles_deviceprofile_history", args=[profile.pk])
    ).content.decode()


@pytest.fixture
def edited_profile(admin_client, db):
    """A profile created with 4 cards, then edited twice in the admin (three history entries)."""
    from profiles.models import DeviceProfile

    group = NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    profile = DeviceProfile.objects.get(node_group=group)
    for rows, notes in EDITS:
        response = admin_client.post(
            reverse("admin:profiles_deviceprofile_change", args=[profile.pk]),
            profile_form(group.pk, rows, initial=[profile.devices.get().pk], notes=notes),
        )
        assert response.status_code == 302
    return profile


def test_one_save_one_history_entry_with_its_changes(admin_client, edited_profile):
    entries = list(edited_profile.history.order_by("history_date"))
    assert [e.history_type for e in entries] == ["+", "~", "~"]
    assert [e.devices_snapshot[0]["quantity"] for e in entries] == [4, 2, 2]
    page = _history_page(admin_client, edited_profile)
    assert "4 x NVIDIA A10G 23028 MiB" in page and "2 x NVIDIA A10G 40000 MiB" in page
    # every change entry names what changed (rows, notes, version), none is blank
    cells = re.findall(r"<td>\s*(?:<ul[^>]*>(.*?)</ul>|)\s*</td>\s*</tr>", page, re.S)
    assert sum(1 for c in cells if "Version" in c) == 2


@pytest.mark.parametrize("index", [0, 1, 2])
def test_revert_to_each_entry_restores_its_rows(admin_client, edited_profile, index):
    from profiles.admin import rows_summary

    profile = edited_profile
    entry = list(profile.history.order_by("history_date"))[index]
    url = reverse("admin:profiles_deviceprofile_simple_history", args=[profile.pk, entry.history_id])
    form = admin_client.get(url).content.decode()
    assert rows_summary(entry.devices_snapshot) in form  # the rows it would restore, not the current ones
    assert (
        form.count(f"&quot;devmem&quot;:{entry.devices_snapshot[0]['devmem']}")
        == entry.devices_snapshot[0]["quantity"]
    )  # and the registration rendered from them
    before = profile.history.count()
    group = profile.node_group_id
    response = admin_client.post(
        url, {"node_group": str(group), "vendor": "NVIDIA", "pair_scores": "{}", "notes": entry.notes}
    )
    assert response.status_code == 302
    profile.refresh_from_db()
    assert profile.rows_data() == entry.devices_snapshot
    assert profile.history.count() == before + 1  # one revert, one entry
