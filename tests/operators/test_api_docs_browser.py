"""``/api/docs/`` renders Swagger UI from our own pinned static files, with every other host blocked."""

from __future__ import annotations

import pytest

from tests.factories.models import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_swagger_ui_renders_offline(offline_page, live_server):
    page, blocked = offline_page
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/api/docs/")
    # Swagger UI draws one block per operation once it has fetched and parsed /api/schema/.
    page.wait_for_selector(".opblock", timeout=30000)
    assert "hami-sim API" in page.inner_text(".info .title")
    assert page.locator(".opblock").count() > 10
    assert blocked == []
    assert errors == []


@pytest.fixture
def demo_operator(transactional_db):
    """The demo node groups and a superuser (written before the browser's event loop starts)."""
    from pathlib import Path

    from profiles.yamlio import import_profiles

    demo = Path(__file__).resolve().parents[2] / "demo" / "profiles.yaml"
    import_profiles(demo.read_text())
    UserFactory(username="root", password="pw-root-1", superuser=True)


@pytest.mark.parametrize(
    ("operation", "status"),
    [("#operations-v1-v1_estimate_create", "200"), ("#operations-v1-v1_node_groups_create", "201")],
    ids=["estimate", "create-node-group"],
)
def test_try_it_out_succeeds_on_the_first_click(demo_operator, offline_page, live_server, operation, status):
    """The body Swagger UI fills in is one the API accepts, on the demo data."""
    page, blocked = offline_page
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw-root-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    page.goto(f"{live_server.url}/api/docs/")
    block = page.locator(operation)
    block.locator(".opblock-summary").click()
    block.locator("button.try-out__btn").click()
    block.locator("button.execute").click()
    code = block.locator(".live-responses-table .response .response-col_status").first
    code.wait_for(timeout=30000)
    assert code.inner_text().strip() == status, block.locator(".live-responses-table").inner_text()
    assert blocked == []
