"""The node-group page's Copy buttons in a real headless Chromium: a click puts the provider's
ca-template rendering on the clipboard."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.dashboard.test_browser import ARTIFACTS, demo_live, page  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_copy_puts_the_ca_template_on_the_clipboard(page, live_server):  # noqa: F811
    base = live_server.url
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page.goto(f"{base}/admin/login/?next=/node-groups/gpu-a10/")
    page.fill("#id_username", "oncall")
    page.fill("#id_password", "pw-oncall-1")
    page.click("input[type=submit]")
    page.wait_for_selector("#ca-templates")
    for provider in ("aws", "azure", "clusterapi"):
        button = page.locator(f'button[data-copy="ca-template-{provider}"]')
        button.click()
        expect(button).to_have_text("Copied")  # a selector wait: the page's CSP forbids eval
        copied = page.evaluate("navigator.clipboard.readText()")
        assert json.loads(copied) == json.loads(page.inner_text(f"#ca-template-{provider}"))
        assert json.loads(copied)["provider"] == provider
    page.locator("#ca-templates").screenshot(path=str(ARTIFACTS / "node_group_ca_templates.png"))
