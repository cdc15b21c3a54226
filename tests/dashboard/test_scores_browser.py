"""Unbounded vendor node scores in a real headless Chromium: bars stay in their cells, the grid draws."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.dashboard.test_scores_and_registration import _sgpu_decision

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def test_score_bars_stay_inside_their_cells(live_server, transactional_db, settings):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    settings.DEMO_READ_ONLY = True  # read-only pages without a login
    decision = _sgpu_decision()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{live_server.url}{decision.get_absolute_url()}")
            page.wait_for_selector("#fig-grid-div svg.main-svg")
            bars = page.eval_on_selector_all(
                ".score-bar",
                """els => els.map(e => {
                    const outer = e.getBoundingClientRect(), inner = e.firstElementChild.getBoundingClientRect();
                    return {left: inner.left - outer.left, right: outer.right - inner.right, width: inner.width,
                            full: outer.width, text: e.closest('td').textContent.trim()};
                })""",
            )
        finally:
            browser.close()
    assert not errors
    assert [b["text"] for b in bars] == ["20,012.5", "-9,990.25", "12.5"]
    for bar in bars:
        assert bar["full"] > 0 and bar["left"] >= 0 and bar["right"] >= -0.5, bar
    widths = [round(b["width"] / b["full"], 2) for b in bars]
    assert widths[0] == 1.0 and widths[1] == 0.0 and 0.3 <= widths[2] <= 0.36
