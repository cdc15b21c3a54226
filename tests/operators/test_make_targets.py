"""The Makefile as a newcomer meets it: every declared target does something, the docs name real ones."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = (ROOT / "Makefile").read_text()
PHONY = re.search(r"^\.PHONY:(.*)$", MAKEFILE, re.M).group(1).split()
SCREENSHOTS = "DEMO_PORT=8001 make screenshots"


def dry_run(target: str) -> str:
    """``make -n target`` with the venv stamps taken as up to date: only the target's own recipe."""
    run = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed", "-o", ".venv/.runtime-installed", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return run.stdout


@pytest.mark.parametrize("target", PHONY)
def test_every_declared_target_has_a_recipe(target):
    """A recipe of its own, or (``install``) a file prerequisite that has one."""
    rule = re.search(rf"^{re.escape(target)}:(.*)\n(\t)?", MAKEFILE, re.M)
    assert rule, f"{target} is declared .PHONY but has no rule"
    prerequisites = [p for p in rule.group(1).split() if p not in PHONY]
    assert rule.group(2) or prerequisites, f"{target} has no recipe"
    assert "Nothing to be done" not in dry_run(target) or prerequisites


def test_screenshots_need_only_what_browser_deps_installs():
    recipe = dry_run("screenshots")
    assert "pip install" in recipe and "playwright==" in recipe  # the demo's venv lacks the test tools
    assert "scripts/screenshots.py" in recipe


def _tracked(path: str) -> list[str]:
    run = subprocess.run(["git", "ls-files", path], cwd=ROOT, capture_output=True, text=True, check=True)
    return run.stdout.split()


def test_screenshots_leave_the_tracked_images_alone():
    """`make screenshots` writes where git tracks nothing and ignores everything; only when asked
    (SCREENSHOTS_DIR=docs/img) does it replace the README's images."""
    recipe = dry_run("screenshots")
    out = re.search(r'scripts/screenshots\.py --out "([^"]+)"', recipe).group(1)
    assert out == "var/screenshots"
    assert _tracked(out) == []
    ignored = subprocess.run(["git", "check-ignore", "-q", f"{out}/overview.png"], cwd=ROOT)
    assert ignored.returncode == 0
    assert _tracked("docs/img")  # the images the README shows stay what was committed
    asked = subprocess.run(
        [
            "make",
            "-n",
            "-o",
            ".venv/.installed",
            "-o",
            ".venv/.runtime-installed",
            "screenshots",
            "SCREENSHOTS_DIR=docs/img",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert '--out "docs/img"' in asked
    script = (ROOT / "scripts" / "screenshots.py").read_text()  # run alone, it writes there too
    assert 'default=ROOT / "var" / "screenshots"' in script


@pytest.mark.parametrize("doc", ["README.md", "docs/dashboard.md"])
def test_docs_name_the_same_screenshot_command(doc):
    text = (ROOT / doc).read_text()
    assert SCREENSHOTS in text
    assert "produced by the browser test" not in text  # one tool for the same pictures
