"""Every ``curl`` example in ``README.md`` and ``docs/*.md`` runs against ``make demo`` and prints what
the doc shows.

The demo is started as a reader starts it (``python -m hami_sim.server.demo``: the same loaders, web server,
worker and expander) on free ports in a temporary directory; each example runs in ``bash`` with the
real ``curl`` and ``jq``, with only the demo's address rewritten to the test's port. The conventions
a doc follows are in ``tests/docs/examples.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.docs.examples import (
    ANY,
    DEMO_ADDRESS,
    REPO,
    Example,
    examples,
    mismatch,
    parse_example,
    parse_shown,
)

ALL = examples()
#: blocks that say "not runnable here": keep this list short (each needs a cluster)
MAX_NOT_RUNNABLE = 3
STEP_END = "\x1estep-end"
CURL = shutil.which("curl") or "curl"


# -- the conventions, as a table ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("shown", "actual", "ok"),
    [
        ('{"a": 1}', {"a": 1}, True),
        ('{"a": 1}', {"a": 1, "b": 2}, False),  # an object shown without ... shows every key
        ('{"a": 1, ...}', {"a": 1, "b": 2}, True),
        ('{"a": ...}', {"a": [1, {"x": None}]}, True),
        ('{"a": "..."}', {"a": "anything"}, True),
        ('{"id": "2f1c..."}', {"id": "2f1c9a"}, True),
        ('{"id": "2f1c..."}', {"id": "9a2f1c"}, False),
        ("[1, ...]", [1, 2, 3], True),
        ("[1, ...]", [2, 1], False),
        ("[1, ..., 3]", [1, 2, 3], True),
        ("[1, 2]", [1, 2, 3], False),
        ('{"waste": 0.479}', {"waste": 0.47947}, True),
        ('{"waste": 0.479}', {"waste": 0.5}, False),
        ('{"n": 1}', {"n": True}, False),  # JSON types, not Python's bool-is-int
        ('{"Nodes": null, "Error": ""}', {"Nodes": None, "Error": ""}, True),
    ],
)
def test_shown_json_is_a_pattern(shown, actual, ok):
    assert (mismatch(parse_shown(shown), actual) is None) is ok


def test_a_block_splits_into_commands_and_their_shown_output(tmp_path):
    body = """# not runnable here: needs kubectl
SID=$(curl -s -X POST localhost:8000/api/v1/sessions -H 'Content-Type: application/json' \\
        -d '{"name": "a#b"}' | jq -r .id)
curl -s -X POST localhost:8000/x -d '{
  "multi": "line"}'
# on the demo data (prose first):
# -> 201 {"revision": 1,
#         ...}
curl -s localhost:8000/readyz   # {"status": "ready"}
curl -s localhost:8000/y     # a remark, not output"""
    example = parse_example(tmp_path / "x.md", 10, body)
    assert example.not_runnable == "needs kubectl"
    assert [s.line for s in example.steps] == [12, 14, 19, 20]
    assert [s.status for s in example.steps] == [None, 201, None, None]
    assert parse_shown(example.steps[1].shown) == parse_shown('{"revision": 1, ...}')
    assert example.steps[2].shown == '{"status": "ready"}'
    assert example.steps[3].shown is None
    assert parse_shown("...") is ANY


def test_every_doc_has_its_examples_found():
    found = {e.path.relative_to(REPO).as_posix() for e in ALL}
    assert {"README.md", "docs/sessions.md", "docs/profiles.md"} <= found
    runnable = [e for e in ALL if not e.not_runnable]
    assert sum(1 for e in runnable for s in e.steps if s.shown) >= 5, "examples show what they print"


def test_not_runnable_examples_are_few_and_say_why():
    skipped = [(e.name, e.not_runnable) for e in ALL if e.not_runnable]
    assert len(skipped) <= MAX_NOT_RUNNABLE, skipped
    assert all(len(why) > 10 for _, why in skipped), skipped


# -- the demo and the runs ------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """``python -m hami_sim.server.demo`` on free ports, its data in a temporary directory: (url, environment).

    ``DOCS_DEMO_URL=http://127.0.0.1:8000`` uses a demo already running instead (with the environment
    it was started with, e.g. the same ``DATABASE_URL``), which is quicker while editing a doc."""
    if os.environ.get("DOCS_DEMO_URL"):
        yield os.environ["DOCS_DEMO_URL"].rstrip("/"), dict(os.environ)
        return
    var = tmp_path_factory.mktemp("demo")
    port, expander = _free_port(), _free_port()
    # a reader's shell, not the test run's (which may point DATABASE_URL, the broker or the cache elsewhere)
    env = {
        **{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")},
        "HAMI_SIM_VAR_DIR": str(var),
        "DATABASE_URL": f"sqlite:///{var}/db.sqlite3",
        "STATIC_ROOT": str(REPO / "var" / "static"),  # collected once by tests/conftest.py
        "DEMO_PORT": str(port),
        "DEMO_EXPANDER_PORT": str(expander),
        "PYTHONPATH": str(REPO),
        "PYTHONUNBUFFERED": "1",
    }
    log = (var / "demo.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "hami_sim.server.demo"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while "hami-sim demo is up" not in (var / "demo.log").read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"make demo did not come up:\n{(var / 'demo.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}", env
    finally:
        _stop(process, (var / "demo.log").read_text())
        log.close()


def _stop(process: subprocess.Popen, log: str) -> None:
    """SIGTERM the demo (it stops its own children); only when it had to be killed, its children too."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=40)
            return
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for pid in re.findall(r"started .* \(pid (\d+)\)", log):  # each in its own session
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(int(pid), signal.SIGTERM)


def _script(example: Example, url: str, status_file: Path) -> str:
    """The example as one bash script: each command followed by a marker with its exit code."""
    lines = ["set -o pipefail"]
    for step in example.steps:
        lines.append(DEMO_ADDRESS.sub(url, step.command))
        lines.append(f"printf '\\n{STEP_END} %s\\n' \"$?\"")
        lines.append(f"echo >> {status_file}")  # one status line per step, even without curl
    return "\n".join(lines) + "\n"


def _curl_shim(directory: Path, status_file: Path) -> Path:
    """``curl`` that also appends each call's HTTP status to ``status_file`` (the output is untouched)."""
    shim = directory / "curl"
    shim.write_text(
        "#!/bin/bash\n"
        f"exec {CURL} -w '%{{stderr}}%{{http_code}} ' \"$@\" 2>>{status_file}\n"
    )  # fmt: skip
    shim.chmod(0o755)
    return directory


@pytest.mark.slow
@pytest.mark.parametrize("example", ALL, ids=[e.name for e in ALL])
def test_example_runs_against_the_demo_and_prints_what_it_shows(example, demo, tmp_path):
    if example.not_runnable:
        pytest.skip(f"not runnable here: {example.not_runnable}")
    url, env = demo
    status_file = tmp_path / "statuses"
    status_file.write_text("")
    bin_dir = _curl_shim(tmp_path, status_file)
    run = subprocess.run(
        ["bash", "-c", _script(example, url, status_file)],
        cwd=REPO,
        env={**env, "PATH": f"{bin_dir}:{env['PATH']}"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    segments = run.stdout.split(STEP_END)
    assert len(segments) == len(example.steps) + 1, (
        f"{example.name} stopped early:\n{run.stdout}\n{run.stderr}"
    )
    printed, exits = [segments[0]], []
    for segment in segments[1:]:
        code, _, text = segment.partition("\n")
        exits.append(code.strip())
        printed.append(text)
    statuses = status_file.read_text().split("\n")
    for index, step in enumerate(example.steps):
        where = f"{example.name}, the command at line {step.line}"
        assert exits[index] == "0", f"{where}: exit status {exits[index]}\n{run.stderr}"
        codes = [int(c) for c in statuses[index].split()]
        if step.status is not None:
            assert codes and codes[-1] == step.status, (
                f"{where}: HTTP {codes}, shown {step.status}\n{printed[index]}"
            )
        else:
            assert all(c < 400 for c in codes), f"{where}: HTTP {codes}\n{printed[index]}"
        if step.shown:
            try:
                answer = json.loads(printed[index])
            except ValueError:
                pytest.fail(f"{where}: not JSON: {printed[index][:500]!r}")
            why = mismatch(parse_shown(step.shown), answer)
            assert why is None, f"{where}: {why}\nshown:\n{step.shown}\nprinted:\n{printed[index][:2000]}"
