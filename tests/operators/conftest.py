"""A headless Chromium (Debian's /usr/bin/chromium via Playwright) that may only reach the live server.

Every request to another host is aborted and recorded, so a page that needs a CDN shows up as a
failed test rather than a page that happens to work on a connected laptop.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

import pytest

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


@pytest.fixture
def offline_page(live_server, transactional_db):
    """(page, blocked): a page whose requests outside ``live_server`` are aborted into ``blocked``."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    own = urlparse(live_server.url).netloc
    blocked: list[str] = []

    def guard(route):
        if urlparse(route.request.url).netloc == own:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.route("**/*", guard)
        page = context.new_page()
        page.set_default_timeout(30000)
        yield page, blocked
        context.close()
        browser.close()
