"""``/api/docs/`` renders Swagger UI from our own pinned static files, with every other host blocked."""

from __future__ import annotations

import pytest

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
