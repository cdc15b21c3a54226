"""The dashboard in a real headless Chromium: the nav on a 390 px phone (no sideways scrolling, the current
section marked), empty tables that say why, and What-if run from its example pod."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.dashboard.conftest import load_demo
from tests.dashboard.test_browser import ARTIFACTS, CHROMIUM
from tests.factories.models import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE = {"width": 390, "height": 844}
PAGES = [  # (path, the nav item marked current)
    ("/", "Overview"),
    ("/decisions/", "Decisions"),
    ("/events/", "CA events"),
    ("/node-groups/", "Node groups"),
    ("/node-groups/gpu-a10/", "Node groups"),
    ("/nodes/", "Nodes"),
    ("/nodes/ip-10-0-1-12.ec2.internal/", "Nodes"),
    ("/drift/", "Drift"),
    ("/sessions/", "Sessions"),
    ("/what-if/", "What-if"),
    ("/task-runs/", "Task runs"),
]


@contextmanager
def _browser(live_server, viewport: dict):
    """A logged-in page (user oncall) in a fresh Chromium context of ``viewport``."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        page.set_default_timeout(30000)
        page.goto(f"{live_server.url}/admin/login/?next=/")
        page.fill("#id_username", "oncall")
        page.fill("#id_password", "pw-oncall-1")
        page.click("input[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        try:
            yield page
        finally:
            context.close()
            browser.close()


@pytest.fixture
def live_user(live_server, transactional_db):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")
    UserFactory(username="oncall", password="pw-oncall-1", is_staff=True)
    return live_server


def test_nav_fits_a_phone_and_marks_the_current_section(live_user):
    load_demo()
    with _browser(live_user, PHONE) as page:
        for path, current in PAGES:
            page.goto(f"{live_user.url}{path}")
            page.wait_for_load_state("load")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], (path, width)
            marked = page.locator("header nav a[aria-current=page]")
            assert marked.count() == 1 and marked.inner_text() == current, path
            box = marked.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], path
        # every nav link is on screen (wrapped, not cut off) and reachable
        for link in page.locator("header nav a").all():
            box = link.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        page.goto(f"{live_user.url}/nodes/ip-10-0-1-12.ec2.internal/")
        page.screenshot(path=str(ARTIFACTS / "phone_node.png"), full_page=True)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/decisions/", "No decisions yet"),
        ("/nodes/", "No nodes seen"),
        ("/drift/", "No drift findings"),
        ("/sessions/", "No simulation sessions"),
        ("/task-runs/", "No task runs recorded yet"),
    ],
)
def test_empty_tables_say_why(live_user, path, message):
    with _browser(live_user, {"width": 1400, "height": 900}) as page:
        page.goto(f"{live_user.url}{path}")
        cell = page.locator("table.table tbody tr td").first
        assert message in cell.inner_text()
        assert cell.is_visible()


def test_what_if_runs_its_example(live_user):
    load_demo()
    with _browser(live_user, {"width": 1400, "height": 1000}) as page:
        page.goto(f"{live_user.url}/what-if/")
        assert "inference-example" in page.input_value("#id_pod")
        ticked = page.eval_on_selector_all("input[name=groups]:checked", "els => els.map(e => e.value)")
        assert sorted(ticked) == ["gpu-a10", "gpu-h100", "gpu-l4"]
        page.fill("#id_pod", "")
        page.click("#load-example")  # the button brings the example back after an edit
        assert "nvidia.com/gpumem" in page.input_value("#id_pod")
        page.click("#what-if-form button[type=submit]")
        page.wait_for_selector("#estimate-answer")
        assert "CA would scale" in page.inner_text("#estimate-answer")
        assert page.locator("#estimate tr.option").count() == 3
        assert "(capacity − requests) / capacity" in page.inner_text("#waste-note")
        assert "HAMi prefers" in page.inner_text("#score-note")
        page.wait_for_selector("#fig-grid-div svg.main-svg")
        page.screenshot(path=str(ARTIFACTS / "what_if_example.png"), full_page=True)
