"""``HAMI_VENDORS_JSON``: vendor resource-name overrides from the environment (docs/vendors.md).

Settings are read once per process, so each case starts ``manage.py`` as an operator would.
"""

from __future__ import annotations

import os
import subprocess
import sys

import orjson

from tests.deploy.conftest import REPO

# which resource name each configured Hygon / Cambricon backend counts, as the running engine has it
SHOW = (
    "from hami_sim.runtime.simulator import get_simulator; import json; "
    "print(json.dumps({v.common_word: v.config.resource_count_name for v in get_simulator().vendors.values() "
    "if v.common_word in ('DCU', 'MLU')}))"
)


def _manage(*args: str, vendors_json: str | None, **variables: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HAMI_", "DATABASE_URL"))}
    env = {**base, "PYTHONPATH": str(REPO), "DATABASE_URL": "sqlite:///:memory:", **variables}
    if vendors_json is not None:
        env["HAMI_VENDORS_JSON"] = vendors_json
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_vendor_overrides_from_the_environment_reach_the_engine():
    result = _manage(
        "shell", "-c", SHOW, vendors_json='{"hygon": {"resourceCountName": "hygon.com/dcu-renamed"}}'
    )
    assert result.returncode == 0, result.stderr
    assert orjson.loads(result.stdout.strip().splitlines()[-1]) == {
        "DCU": "hygon.com/dcu-renamed",
        "MLU": "cambricon.com/vmlu",
    }
    assert (
        _manage("check", vendors_json='{"hygon": {"resourceCountName": "hygon.com/dcu-renamed"}}').returncode
        == 0
    )


def test_without_the_variable_the_helm_defaults_apply():
    result = _manage("shell", "-c", SHOW, vendors_json=None)
    assert result.returncode == 0, result.stderr
    assert orjson.loads(result.stdout.strip().splitlines()[-1])["DCU"] == "hygon.com/dcunum"


def test_invalid_json_stops_start_up_with_a_clear_error():
    result = _manage("check", vendors_json='{"hygon": {resourceCountName: 1}')
    assert result.returncode != 0
    assert "ImproperlyConfigured: HAMI_VENDORS_JSON is not valid JSON" in result.stderr


def test_json_that_is_not_an_object_stops_start_up():
    result = _manage("check", vendors_json='["hygon"]')
    assert result.returncode != 0
    assert "ImproperlyConfigured: HAMI_VENDORS_JSON must be a JSON object" in result.stderr


def test_an_unknown_vendor_or_field_stops_start_up():
    result = _manage("check", vendors_json='{"hygn": {"resourceCountName": "x"}}')
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "unknown vendors ['hygn']" in result.stderr
    result = _manage("check", vendors_json='{"hygon": {"resourceCuontName": "x"}}')
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "resourceCuontName" in result.stderr


# NVIDIA's knownMigGeometries (read under HAMI_VERSION 2.9 and 2.8), as the running engine has them
SHOW_MIG = (
    "from hami_sim.runtime.simulator import get_simulator; import json; "
    "nv = get_simulator().vendors['NVIDIA']; "
    "known = nv.config.known_mig_geometries; "
    "print(json.dumps(None if known is None else [[e.models, [[t.name for t in g] for g in e.geometries]] "
    "for e in known]))"
)
A100 = '[{"models": ["A100-SXM4-40GB"], "allowedGeometries": [[{"name": "3g.20gb", "memory": 20480, "core": 42, "count": 2}]]}]'


def test_known_mig_geometries_from_the_environment_reach_the_engine():
    result = _manage("shell", "-c", SHOW_MIG, vendors_json=None, HAMI_NVIDIA_KNOWN_MIG_GEOMETRIES=A100)
    assert result.returncode == 0, result.stderr
    assert orjson.loads(result.stdout.strip().splitlines()[-1]) == [[["A100-SXM4-40GB"], [["3g.20gb"]]]]
    # unset: not configured (the release's chart default applies); "[]": configured, no geometry
    unset = _manage("shell", "-c", SHOW_MIG, vendors_json=None)
    assert unset.returncode == 0 and orjson.loads(unset.stdout.strip().splitlines()[-1]) is None
    empty = _manage("shell", "-c", SHOW_MIG, vendors_json=None, HAMI_NVIDIA_KNOWN_MIG_GEOMETRIES="[]")
    assert empty.returncode == 0 and orjson.loads(empty.stdout.strip().splitlines()[-1]) == []


def test_known_mig_geometries_of_another_shape_stop_start_up():
    result = _manage("check", vendors_json=None, HAMI_NVIDIA_KNOWN_MIG_GEOMETRIES='{"models": ["A100"]}')
    assert result.returncode != 0
    assert "ImproperlyConfigured: HAMI_NVIDIA_KNOWN_MIG_GEOMETRIES must be a JSON list" in result.stderr
    wrong = '[{"models": ["A100"], "allowedGeometries": [[{"name": "1g", "memory": "5gb"}]]}]'
    result = _manage("check", vendors_json=None, HAMI_NVIDIA_KNOWN_MIG_GEOMETRIES=wrong)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "must be integers" in result.stderr
