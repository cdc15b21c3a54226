"""``deploy/capacity`` (aggregate capacity, off by default) as a platform engineer applies it: the
watcher gets CA_AGGREGATE_CAPACITY and ``patch`` on ``nodes/status`` (nowhere else), and CA's
component swaps in the generated profile that counts the advertised names."""

from __future__ import annotations

import shutil
import subprocess

import kubernetes_validate
import pytest
import yaml
from django.conf import settings

from hami_sim.runtime.simulator import build_vendors
from simulations.caconfig import CAPACITY_PATH, UPSTREAM_PATH, aggregate_resources, ignored_resources
from tests.deploy.conftest import DEPLOY, REPO
from tests.deploy.kube_scheduler import scheduler_config_errors

K8S_VERSION = "1.32.0"
OVERLAYS = ["capacity", "capacity/cluster-autoscaler-example", "production", "base"]


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[dict]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    out = {}
    for name in OVERLAYS:
        result = subprocess.run(
            [kubectl, "kustomize", str(DEPLOY / name)], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, f"kubectl kustomize deploy/{name}: {result.stderr}"
        out[name] = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    return out


def _of(rendered, overlay: str, kind: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in rendered[overlay] if o["kind"] == kind}


def _writes(rendered, overlay: str) -> dict[str, set[tuple[str, str]]]:
    """ServiceAccount -> the (resource, verb) pairs other than reads its cluster roles grant."""
    roles = _of(rendered, overlay, "ClusterRole")
    out: dict[str, set[tuple[str, str]]] = {}
    for binding in _of(rendered, overlay, "ClusterRoleBinding").values():
        role = roles.get(binding["roleRef"]["name"], {"rules": []})
        pairs = {
            (r, v)
            for rule in role["rules"]
            for r in rule.get("resources", [])
            for v in rule["verbs"]
            if v not in ("get", "list", "watch")
        }
        for subject in binding["subjects"]:
            out.setdefault(subject["name"], set()).update(pairs)
    return {k: v for k, v in out.items() if v}


@pytest.mark.parametrize("overlay", ["capacity", "capacity/cluster-autoscaler-example"])
def test_the_overlay_renders_valid_kubernetes(rendered, overlay):
    for obj in rendered[overlay]:
        if obj["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # the CRDs are checked with base in test_manifests.py
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


@pytest.mark.parametrize(
    ("overlay", "writes"),
    [
        # the watcher may patch node status (the status subresource only), nothing else may write
        ("capacity", {"hami-sim-watcher": {("nodes/status", "patch")}}),
        # without the overlay nothing in hami-sim writes to the cluster
        ("production", {}),
        ("base", {}),
    ],
)
def test_only_the_capacity_overlay_lets_the_watcher_patch_node_status(rendered, overlay, writes):
    assert _writes(rendered, overlay) == writes


def test_the_watcher_and_the_web_run_in_aggregate_mode(rendered):
    config = next(iter(_of(rendered, "capacity", "ConfigMap").values()))
    assert config["data"]["CA_AGGREGATE_CAPACITY"] == "true"
    assert config["data"]["LOG_LEVEL"] == "INFO"  # production's values are kept (a merge)
    deployments = _of(rendered, "capacity", "Deployment")
    for name in ("hami-sim-watcher", "hami-sim-web"):
        container = deployments[name]["spec"]["template"]["spec"]["containers"][0]
        assert {"configMapRef": {"name": config["metadata"]["name"]}} in container["envFrom"]
    watcher = deployments["hami-sim-watcher"]["spec"]["template"]["spec"]
    assert watcher["serviceAccountName"] == "hami-sim-watcher" and watcher["automountServiceAccountToken"]
    production = next(iter(_of(rendered, "production", "ConfigMap").values()))
    assert "CA_AGGREGATE_CAPACITY" not in production["data"]  # off by default


def test_cas_component_counts_the_advertised_names(rendered):
    """The ConfigMap CA mounts is the generated aggregate profile: memory and cores of NVIDIA are
    counted, every other HAMi name but the counts is still ignored, and CA 1.32+ loads it."""
    maps = _of(rendered, "capacity/cluster-autoscaler-example", "ConfigMap")
    (cm,) = maps.values()
    text = cm["data"]["scheduler-config.yaml"]
    assert text == (REPO / CAPACITY_PATH).read_text() != (REPO / UPSTREAM_PATH).read_text()
    config = yaml.safe_load(text)
    assert scheduler_config_errors(config) == []
    (profile,) = config["profiles"]
    (fit,) = [p["args"] for p in profile["pluginConfig"] if p["name"] == "NodeResourcesFit"]
    vendors = build_vendors(settings.HAMI)
    assert aggregate_resources(vendors) == ["nvidia.com/gpucores", "nvidia.com/gpumem"]
    assert fit["ignoredResources"] == ignored_resources(vendors, aggregate=True)
    assert set(fit["ignoredResources"]) == set(ignored_resources(vendors)) - set(aggregate_resources(vendors))
    assert "nvidia.com/gpumem-percentage" in fit["ignoredResources"]
    deployment = _of(rendered, "capacity/cluster-autoscaler-example", "Deployment")["cluster-autoscaler"]
    volume = next(
        v
        for v in deployment["spec"]["template"]["spec"]["volumes"]
        if v["name"] == "hami-sim-scheduler-config"
    )
    assert volume["configMap"]["name"] == cm["metadata"]["name"]  # the hashed name of the replacement
