"""CA's ``--scheduler-config-file`` files in ``deploy/`` (docs/cluster-autoscaler.md): generated
from the enabled vendors by ``make ca-config``, stale files fail here, and both pass kube-scheduler's
rules as CA 1.32.1 loads them (``tests/deploy/kube_scheduler.py``)."""

from __future__ import annotations

import copy

import pytest
import yaml
from django.conf import settings
from django.core.management import CommandError, call_command

from hami_sim.runtime.simulator import build_vendors, get_simulator
from simulations.caconfig import (
    EXTENDER_PATH,
    UPSTREAM_PATH,
    device_count_resources,
    ignored_resources,
    rendered_files,
)
from tests.deploy.conftest import REPO
from tests.deploy.kube_scheduler import scheduler_config_errors

NVIDIA_NON_COUNT = {
    "nvidia.com/gpumem",
    "nvidia.com/gpumem-percentage",
    "nvidia.com/gpucores",
    "nvidia.com/priority",
}


def _committed(path) -> dict:
    return yaml.safe_load((REPO / path).read_text())


def _fit_args(config: dict) -> dict:
    (profile,) = config["profiles"]
    (entry,) = [p for p in profile["pluginConfig"] if p["name"] == "NodeResourcesFit"]
    return entry["args"]


def test_committed_files_are_what_make_ca_config_writes():
    """A platform engineer regenerates with one command; a stale committed file fails here."""
    for path, text in rendered_files(build_vendors(settings.HAMI)).items():
        assert (REPO / path).read_text() == text, f"{path} is stale: run `make ca-config`"
    call_command("ca_config", "--check", root=str(REPO))


def test_upstream_profile_ignores_every_hami_resource_but_the_device_counts():
    vendors = build_vendors(settings.HAMI)
    ignored = _fit_args(_committed(UPSTREAM_PATH))["ignoredResources"]
    every = set().union(*(v.resource_names() for v in vendors))
    counts = set(device_count_resources(vendors))
    assert set(ignored) == every - counts
    assert set(ignored) >= NVIDIA_NON_COUNT
    assert {"nvidia.com/gpu", "huawei.com/Ascend910B3", "hygon.com/dcunum"} <= counts
    assert not counts & set(ignored)  # CA still counts the devices a template advertises
    assert {"huawei.com/Ascend910B3-memory", "hygon.com/dcumem", "metax-tech.com/vmemory"} <= set(ignored)


def test_extender_config_manages_every_hami_resource():
    """``ignoredByScheduler: true`` on every name, as HAMi's own chart lists them
    (``charts/hami/templates/_helpers.tpl``, HAMi v2.10.0): kube-scheduler's ``buildExtenders``
    (``pkg/scheduler/scheduler.go``, kubernetes v1.32 to v1.35) adds each such name to
    ``NodeResourcesFit``'s ignored resources, so advertised totals never change its decisions."""
    (ext,) = _committed(EXTENDER_PATH)["extenders"]
    managed = {r["name"] for r in ext["managedResources"]}
    assert managed == set().union(*(v.resource_names() for v in build_vendors(settings.HAMI)))
    assert all(r["ignoredByScheduler"] for r in ext["managedResources"])


def test_renamed_resources_reach_the_files_and_stale_ones_fail_the_check(tmp_path):
    """Custom names in the HAMI settings go into the profile; --check names the stale files."""
    hami = copy.deepcopy(settings.HAMI)
    hami["NVIDIA"]["resourceMemoryName"] = "example.com/vram"
    hami.setdefault("VENDORS", {})["hygon"] = {"resourceMemoryName": "example.com/dcu-vram"}
    get_simulator.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(settings, "HAMI", hami)
            ignored = ignored_resources(build_vendors(hami))
            assert {"example.com/vram", "example.com/dcu-vram"} <= set(ignored)
            assert "nvidia.com/gpumem" not in ignored and "hygon.com/dcumem" not in ignored
            for path in (UPSTREAM_PATH, EXTENDER_PATH):  # yesterday's files
                (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / path).write_text((REPO / path).read_text())
            with pytest.raises(
                CommandError, match="stale: .*cluster-autoscaler/scheduler-config.yaml.*make ca-config"
            ):
                call_command("ca_config", "--check", root=str(tmp_path))
            call_command("ca_config", root=str(tmp_path))
            call_command("ca_config", "--check", root=str(tmp_path))
            written = yaml.safe_load((tmp_path / UPSTREAM_PATH).read_text())
            assert _fit_args(written)["ignoredResources"] == ignored
    finally:
        get_simulator.cache_clear()


@pytest.mark.parametrize("path", [UPSTREAM_PATH, EXTENDER_PATH], ids=str)
def test_committed_files_pass_kube_schedulers_rules_with_one_profile_for_ca(path):
    assert scheduler_config_errors(_committed(path)) == []


# -- the rules themselves: each broken file is refused for the reason kube-scheduler or CA gives -------
def _good() -> dict:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "ignoredResources": ["nvidia.com/gpumem"],
                            "scoringStrategy": {
                                "type": "MostAllocated",
                                "resources": [
                                    {"name": "cpu", "weight": 1},
                                    {"name": "nvidia.com/gpu", "weight": 0},
                                ],
                            },
                        },
                    }
                ],
            }
        ],
    }


def _broken(change):
    config = _good()
    change(config)
    return config


def _fit(config):
    return config["profiles"][0]["pluginConfig"][0]["args"]


RULES = [
    ("beta api version", lambda c: c.update(apiVersion="kubescheduler.config.k8s.io/v1beta3"), "apiVersion"),
    ("wrong kind", lambda c: c.update(kind="Policy"), "kind must be"),
    (
        "two profiles for CA",
        lambda c: c["profiles"].append({"schedulerName": "gpu-scheduler"}),
        "one scheduler profile only",
    ),
    ("unknown top field", lambda c: c.update(extender=[]), "unknown field 'extender'"),
    (
        "typo in plugin name",
        lambda c: c["profiles"][0]["pluginConfig"][0].update(name="NodeResourceFit"),
        "in-tree",
    ),
    ("removed plugin", lambda c: c["profiles"][0]["pluginConfig"][0].update(name="EBSLimits"), "was invalid"),
    (
        "plugin configured twice",
        lambda c: c["profiles"][0]["pluginConfig"].append({"name": "NodeResourcesFit", "args": {}}),
        "Duplicate",
    ),
    (
        "ignoredResources a string",
        lambda c: _fit(c).update(ignoredResources="nvidia.com/gpumem"),
        "list of strings",
    ),
    ("ignoredResources holds a number", lambda c: _fit(c).update(ignoredResources=[5]), "list of strings"),
    (
        "resource name with two slashes",
        lambda c: _fit(c).update(ignoredResources=["a/b/c"]),
        "qualified name",
    ),
    (
        "resource group with a slash",
        lambda c: _fit(c).update(ignoredResourceGroups=["nvidia.com/x"]),
        "can't contain",
    ),
    (
        "unknown args field",
        lambda c: _fit(c).update(ignoredResource=["x"]),
        "unknown field 'ignoredResource'",
    ),
    ("unknown strategy type", lambda c: _fit(c)["scoringStrategy"].update(type="BinPack"), "not supported"),
    (
        "weight above 100",
        lambda c: _fit(c)["scoringStrategy"]["resources"].append({"name": "memory", "weight": 101}),
        "not in (0, 100]",
    ),
    (
        "shape without its type",
        lambda c: _fit(c)["scoringStrategy"].update(requestedToCapacityRatio={"shape": []}),
        "must be nil",
    ),
    (
        "ratio type without a shape",
        lambda c: _fit(c)["scoringStrategy"].update(type="RequestedToCapacityRatio"),
        "must be specified",
    ),
    (
        "shape out of order",
        lambda c: _fit(c)["scoringStrategy"].update(
            type="RequestedToCapacityRatio",
            requestedToCapacityRatio={
                "shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 11}]
            },
        ),
        "increasing order",
    ),
    (
        "prioritizing extender without weight",
        lambda c: c.update(extenders=[{"urlPrefix": "https://x", "prioritizeVerb": "p", "weight": 0}]),
        "positive weight",
    ),
    (
        "managed resource that is not extended",
        lambda c: c.update(extenders=[{"urlPrefix": "https://x", "managedResources": [{"name": "cpu"}]}]),
        "invalid extended resource name",
    ),
]


def test_a_good_file_passes():
    assert scheduler_config_errors(_good()) == []
    ratio = _broken(
        lambda c: _fit(c)["scoringStrategy"].update(
            type="RequestedToCapacityRatio",
            requestedToCapacityRatio={
                "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
            },
        )
    )
    assert scheduler_config_errors(ratio) == []
    no_strategy = _broken(lambda c: _fit(c).pop("scoringStrategy"))  # v1 defaulting fills it in
    assert scheduler_config_errors(no_strategy) == []


@pytest.mark.parametrize(("change", "message"), [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_kube_scheduler_rules_refuse(change, message):
    errors = scheduler_config_errors(_broken(change))
    assert any(message in e for e in errors), errors


def test_kube_scheduler_alone_accepts_several_profiles_ca_does_not():
    two = _broken(lambda c: c["profiles"].append({"schedulerName": "gpu-scheduler"}))
    assert scheduler_config_errors(two, profiles_expected=None) == []
    same_name = _broken(lambda c: c["profiles"].append({"schedulerName": "default-scheduler"}))
    assert any(
        "duplicate schedulerName" in e for e in scheduler_config_errors(same_name, profiles_expected=None)
    )
