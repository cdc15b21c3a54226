"""The README's screenshots, taken from a running demo with the machine's Chromium (Playwright).

    DEMO_PORT=8001 make demo                      # in one shell
    DEMO_PORT=8001 .venv/bin/python scripts/screenshots.py   # in another

Writes ``overview.png``, ``pod.png`` (the pod that triggered a scale-up) and ``node.png`` (per-card
usage: the node whose cards hold the most pods) to ``--out``: ``var/screenshots/`` unless told, which
git ignores, so taking screenshots never changes the tracked ``docs/img/*.png``; ``--out docs/img``
(``SCREENSHOTS_DIR=docs/img make screenshots``) refreshes those on purpose. Each is the top of its
page at 1280 px, so the files stay small.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1280, 1000
POD = "/pods/ml/llm-inference-7d9f-x2k4p/"


def _login(page, base: str, user: str, password: str) -> None:
    page.goto(f"{base}/admin/login/?next=/")
    page.fill("#id_username", user)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/")


def _busiest_node(page, base: str) -> str:
    """The node page whose cards list the most pods (the per-card usage view worth showing)."""
    page.goto(f"{base}/nodes/")
    names = page.eval_on_selector_all(
        "table.table td a[href^='/nodes/']", "els => els.map(e => e.getAttribute('href'))"
    )
    best, most = (names[0] if names else ""), (-1, -1)
    for href in dict.fromkeys(names):
        page.goto(f"{base}{href}")
        score = (page.locator("td.pods a").count(), page.locator("tr[id^=device-]").count())
        if score > most:
            best, most = href, score
    return best


def _shot(page, url: str, path: Path, wait: str, height: int = HEIGHT) -> None:
    page.goto(url)
    page.wait_for_selector(wait)
    page.wait_for_timeout(500)  # Plotly's transitions
    full = page.evaluate("document.documentElement.scrollHeight")
    clip = {"x": 0, "y": 0, "width": WIDTH, "height": min(height, full)}
    page.screenshot(path=str(path), full_page=True, clip=clip)
    print(f"{path}: {path.stat().st_size // 1024} KiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=f"http://127.0.0.1:{os.environ.get('DEMO_PORT', '8000')}")
    parser.add_argument("--user", default=os.environ.get("DEMO_ADMIN_USER", "admin"))
    parser.add_argument("--password", default=os.environ.get("DEMO_ADMIN_PASSWORD", "hami-sim-demo"))
    parser.add_argument("--out", type=Path, default=ROOT / "var" / "screenshots")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}).new_page()
        _login(page, args.url, args.user, args.password)
        _shot(page, f"{args.url}/", args.out / "overview.png", "#fig-group-usage-div svg.main-svg", 1250)
        _shot(page, f"{args.url}{POD}", args.out / "pod.png", "#fig-grid-div svg.main-svg", 1150)
        node = _busiest_node(page, args.url)
        if not re.match(r"^/nodes/[^/]+/$", node):
            print("no node page found", file=sys.stderr)
            return 1
        _shot(page, f"{args.url}{node}", args.out / "node.png", "#fig-capacity-div svg.main-svg", 900)
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
