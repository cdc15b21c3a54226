"""``HAMI_VERSION``: the HAMi release whose device rules every answer follows. Settings are read
once per process, so each case starts ``manage.py`` as an operator would."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.deploy.conftest import REPO

SHOW = "from hami_sim.runtime.simulator import get_simulator; print(get_simulator().rules.release)"


def _manage(*args: str, version: str | None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HAMI_", "DATABASE_URL"))}
    env = {**base, "PYTHONPATH": str(REPO), "DATABASE_URL": "sqlite:///:memory:"}
    if version is not None:
        env["HAMI_VERSION"] = version
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(("version", "release"), [(None, "2.10"), ("v2.9.0", "2.9"), ("2.8", "2.8")])
def test_the_configured_release_reaches_the_engine(version, release):
    result = _manage("shell", "-c", SHOW, version=version)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == release


@pytest.mark.parametrize("version", ["2.7", "v3.0.0", "newest"])
def test_an_unsupported_release_stops_start_up_naming_the_supported_ones(version):
    result = _manage("check", version=version)
    assert result.returncode != 0
    assert "ImproperlyConfigured: HAMI_VERSION: HAMi release" in result.stderr
    assert "2.8 (v2.8.3), 2.9 (v2.9.0), 2.10 (v2.10.0)" in result.stderr
