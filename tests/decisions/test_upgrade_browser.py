"""The upgrade page in a real headless Chromium: the overview says the cluster runs HAMi v2.9.0 while
hami-sim follows 2.10, its link opens the upgrade page for 2.9, and the pod whose init container is
larger than its main container (one A10G card per node) is listed with the rule that changes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dashboard.test_browser import ARTIFACTS, CHROMIUM
from tests.dashboard.test_operator_browser import _browser
from tests.decisions.test_upgrade import pending
from tests.factories import hami_workload
from tests.factories.models import NodeGroupFactory, UserFactory
from tests.profiles.conftest import A10

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DESKTOP = {"width": 1400, "height": 1000}


@pytest.fixture
def v2_9_cluster(live_server, transactional_db, settings, tmp_path):
    """A cluster whose HAMi scheduler runs v2.9.0, with the init-heavy pod pending, synced through
    the API double; hami-sim follows 2.10."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")
    from hami_sim.runtime.simulator import get_simulator
    from profiles.tasks import sync_cluster_inventory
    from tests.kubeapi import FakeKubeAPI

    settings.HAMI_VERSION = "2.10"
    get_simulator.cache_clear()
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 1}])
    UserFactory(username="oncall", password="pw-oncall-1", is_staff=True)
    with FakeKubeAPI() as api:
        api.workloads = [hami_workload("Deployment", "projecthami/hami:v2.9.0")]
        api.pods = [pending("train", main=10000, init=20000), pending("small", main=1000)]
        source = f"kubeconfig:{api.write_kubeconfig(tmp_path / 'kubeconfig')}"
        sync_cluster_inventory.apply(kwargs={"source": source}).get()
    return live_server


def test_the_finding_leads_to_the_pod_an_upgrade_changes(v2_9_cluster):
    with _browser(v2_9_cluster, DESKTOP) as page:
        finding = page.locator("#hami-release-finding")
        assert "The cluster runs HAMi v2.9.0" in finding.inner_text()
        finding.locator("#hami-release-upgrade").click()
        page.wait_for_url("**/upgrade/?release=2.9")
        summary = page.locator("#upgrade-summary").inner_text()
        assert (
            "2 pod(s) judged under HAMi 2.10 and HAMi 2.9" in summary
            and "1 would be answered otherwise" in summary
        )
        rows = page.locator("#upgrade-changes tr.change")
        assert rows.count() == 1
        row = rows.first
        assert row.get_attribute("data-pod") == "ml/train"
        assert (
            row.locator(".sentence")
            .inner_text()
            .startswith(
                "v2.10: each init container is fitted alone: fits on a new gpu-a10 node under 2.10, not under 2.9"
            )
        )
        assert "#1773" in row.locator(".sentence").inner_text()
        page.screenshot(path=str(ARTIFACTS / "upgrade.png"), full_page=True)

        # the form asks about another release: under 2.8 the init container takes no card
        page.select_option("#id_release", "2.8")
        page.click("#upgrade-form button[type=submit]")
        page.wait_for_url("**/upgrade/?release=2.8")
        row = page.locator("#upgrade-changes tr.change").first
        assert "devices" in row.inner_text()

        # the pod's link opens its page, which says which releases judge it
        row.locator("a", has_text="ml/train").click()
        page.wait_for_selector("#judged-by")
        assert (
            page.locator("#judged-by").inner_text()
            == "judged by HAMi 2.10 rules and Cluster Autoscaler 1.36.1"
        )


def test_a_release_hami_sim_does_not_follow_is_said_on_the_page(v2_9_cluster):
    with _browser(v2_9_cluster, DESKTOP) as page:
        page.goto(f"{v2_9_cluster.url}/upgrade/?release=2.7")
        assert "HAMi release '2.7' is not supported" in page.locator("#upgrade-error").inner_text()
        assert page.locator("#upgrade-changes").count() == 0
