"""The device-profile admin page as an operator uses it in a 1400 px window: it fits, the rows come
before the help, a save says which drift findings it opened, a revert says what it reverted to."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from tests.factories.models import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DEMO = Path(__file__).resolve().parents[2] / "demo"


@pytest.fixture
def demo_admin(transactional_db):
    """The demo groups and cluster snapshot and a superuser (written before the browser starts)."""
    from profiles.models import DeviceProfile
    from profiles.tasks import sync_cluster_inventory
    from profiles.yamlio import import_profiles

    import_profiles((DEMO / "profiles.yaml").read_text())
    sync_cluster_inventory.apply(kwargs={"source": f"file://{DEMO / 'cluster-snapshot.json'}"}).get()
    UserFactory(username="root", password="pw-root-1", superuser=True)
    profile = DeviceProfile.objects.get(node_group__name="gpu-a10")
    profile.first_entry = profile.history.order_by("history_date").first()  # read before the browser
    return profile


def _login(page, base: str) -> None:
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw-root-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/")


def test_profile_page_fits_the_window_with_the_rows_first(demo_admin, offline_page, live_server):
    page, blocked = offline_page
    _login(page, live_server.url)
    page.goto(f"{live_server.url}{reverse('admin:profiles_deviceprofile_change', args=[demo_admin.pk])}")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1400, f"the page is {width} px wide in a 1400 px window"
    rows_top = page.locator("#devices-group").bounding_box()["y"]
    rules = page.locator("#vendor-rules")
    assert rows_top < rules.bounding_box()["y"], "the rows you came to edit come before the help"
    shown = rules.locator("pre").first
    assert shown.inner_text().startswith("NVIDIA:")
    assert "Ascend910B4:" not in shown.inner_text()
    assert not rules.locator("details pre").is_visible()  # the other vendors' rows stay folded
    assert blocked == []


def test_save_names_the_drift_it_opened_and_a_revert_says_what_it_restored(
    demo_admin, offline_page, live_server
):
    page, blocked = offline_page
    _login(page, live_server.url)
    change = f"{live_server.url}{reverse('admin:profiles_deviceprofile_change', args=[demo_admin.pk])}"
    page.goto(change)
    page.fill("#id_devices-0-devmem", "40000")  # the live A10G cards register 23028 MiB
    page.locator("input[type=submit][name=_continue]").click()
    page.wait_for_load_state("load")
    message = page.locator("ul.messagelist").inner_text()
    # row 0 is the two NUMA-0 cards of each of the two live nodes: four devmem mismatches
    assert "This edit opened 4 drift findings on gpu-a10" in message, message
    assert page.locator("ul.messagelist a[href*='driftfinding']").count() == 1

    first = demo_admin.first_entry
    url = reverse("admin:profiles_deviceprofile_simple_history", args=[demo_admin.pk, first.history_id])
    page.goto(f"{live_server.url}{url}")
    page.locator("input[type=submit][name=_save]").click()
    page.wait_for_load_state("load")
    page.goto(f"{live_server.url}{reverse('admin:profiles_deviceprofile_history', args=[demo_admin.pk])}")
    latest = page.locator("#change-history tbody tr").first.inner_text()
    assert f"reverted to version {first.version}" in latest
    assert "None" not in latest
    assert blocked == []


@pytest.fixture
def root(transactional_db):
    return UserFactory(username="root", password="pw-root-1", superuser=True)


def test_admin_names_read_as_english(root, offline_page, live_server):
    page, _ = offline_page
    _login(page, live_server.url)
    index = page.locator("#content-main").inner_text()
    assert "Autoscaler statuses" in index and "CA events" in index
    assert "statuss" not in index and "Ca events" not in index
