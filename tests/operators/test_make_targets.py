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


@pytest.mark.parametrize("doc", ["README.md", "docs/dashboard.md"])
def test_docs_name_the_same_screenshot_command(doc):
    text = (ROOT / doc).read_text()
    assert SCREENSHOTS in text
    assert "produced by the browser test" not in text  # one tool for the same pictures
