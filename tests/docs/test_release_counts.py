"""docs/device-rules.md's counts of HAMi's ported tests are what the suite holds: the cases of each
release, and how many of the older releases' cases v2.10.0's rules would answer otherwise (run with
``HAMI_SIM_TEST_RULES=2.10``, ``tests/vendors/harness.py``). A count that drifts from the tables (a
table folded, cases added) fails here instead of leaving the doc behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter

from tests.docs.examples import REPO

DOC = " ".join((REPO / "docs" / "device-rules.md").read_text().split())
TABLES = ["tests/vendors/hami_v2_8", "tests/vendors/hami_v2_9", "tests/vendors/hami_v2_10"]
SELECTION = "tests/vendors/test_selection_lists.py"
_RELEASE_OF_ID = re.compile(r"hami_v2_(8|9|10)/|test_selection_lists\.py::\w+\[2\.(8|9|10)/")


def _release(node_id: str) -> str:
    found = _RELEASE_OF_ID.search(node_id)
    assert found, f"no release in {node_id}"
    return "2." + (found.group(1) or found.group(2))


def _pytest(*args: str, rules: str = "") -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HAMI_SIM_TEST_RULES": rules}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", *args, *TABLES, SELECTION],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.stdout.splitlines()


def test_the_case_counts_are_the_tables():
    stated = re.search(r"(\d+) cases of v2\.9\.0, (\d+) of v2\.8\.3, (\d+) of v2\.10\.0", DOC)
    assert stated, "device-rules.md no longer states the case counts"
    held = Counter(_release(line) for line in _pytest("--collect-only") if "::" in line)
    assert (held["2.9"], held["2.8"], held["2.10"]) == tuple(int(n) for n in stated.groups())


def test_the_cases_v2_10_rules_decide_otherwise_are_counted():
    stated = re.search(r"(\d+) of the v2\.9\.0 cases and (\d+) of the v2\.8\.3 cases fail", DOC)
    assert stated, "device-rules.md no longer states how many older cases v2.10.0's rules fail"
    lines = _pytest("--tb=no", "-rf", rules="2.10")
    failed = Counter(_release(line) for line in lines if line.startswith("FAILED"))
    assert failed["2.10"] == 0  # v2.10.0's own cases under its own rules
    assert (failed["2.9"], failed["2.8"]) == tuple(int(n) for n in stated.groups())
