"""Profile history in a real Chromium: the admin's revert to every history entry (the oldest
"Created" one included) restores that entry's device rows, shown on the form before it is submitted."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.urls import reverse

from tests.factories.models import DeviceProfileFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.slow]

A10 = {"type": "NVIDIA A10G", "devmem": 23028, "devcore": 100, "count": 10, "numa": 0, "mode": "hami-core"}
VERSIONS = [  # the rows of each save: created, then two edits
    [{**A10, "quantity": 4}],
    [{**A10, "quantity": 2}],
    [{**A10, "quantity": 2, "devmem": 40000}, {**A10, "quantity": 2, "numa": 1}],
]


def _profile():
    from profiles.services import save_profile

    profile = DeviceProfileFactory(node_group__name="gpu-a10", rows=VERSIONS[0])
    for rows in VERSIONS[1:]:
        save_profile(profile, rows=rows)
    return profile


def _stored_rows(pk: int) -> list[tuple]:
    """The profile's rows as stored, read in a thread (Playwright's event loop owns this one)."""

    def read() -> list[tuple]:
        from django.db import connection

        from profiles.models import DeviceProfile

        try:
            rows = DeviceProfile.objects.get(pk=pk).rows_data()
            return [(r["quantity"], r["devmem"], r["numa"]) for r in rows]
        finally:
            connection.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(read).result()


@pytest.fixture
def edited(transactional_db):
    """A superuser and a profile saved three times (written before the browser's event loop starts)."""
    UserFactory(username="root", password="pw-root-1", superuser=True)
    profile = _profile()
    return profile, list(profile.history.order_by("history_date"))


def test_revert_to_every_entry_restores_its_rows(edited, offline_page, live_server):
    profile, entries = edited
    page, blocked = offline_page
    assert len(entries) == 3
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw-root-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    for entry in [entries[0], entries[2], entries[1]]:  # oldest first, then forth and back
        url = reverse("admin:profiles_deviceprofile_simple_history", args=[profile.pk, entry.history_id])
        page.goto(f"{live_server.url}{url}")
        want = [(r["quantity"], r["devmem"], r["numa"]) for r in entry.devices_snapshot]
        form_text = page.inner_text("#content")
        for quantity, devmem, _ in want:
            assert f"{quantity} x NVIDIA A10G {devmem} MiB" in form_text  # what it will restore
        page.locator("input[type=submit][name=_save]").click()
        page.wait_for_load_state("load")
        assert "changed successfully" in page.inner_text("body") or "reverted" in page.inner_text("body")
        assert _stored_rows(profile.pk) == want, entry.history_id
    assert blocked == []
