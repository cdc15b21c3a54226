"""The Helm values for the cluster-autoscaler chart (``deploy/cluster-autoscaler/helm-values.yaml`` for
upstream CA with the gRPC expander, ``deploy/cluster-autoscaler-extender/helm-values.yaml`` for a CA
built with the extender patch) use only keys the chart has, and give CA what the Components give it.

The chart's keys are restated from ``charts/cluster-autoscaler/values.yaml`` and
``templates/deployment.yaml`` of kubernetes/autoscaler at the tag ``cluster-autoscaler-chart-9.59.0``
(chart version 9.59.0, appVersion 1.35.0): only the keys these files rely on, with what the
template does with each. A chart release that renames one of them needs this table re-read.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import PurePosixPath

import pytest
import yaml

from tests.deploy.conftest import DEPLOY, REPO
from tests.deploy.test_ca_examples import CA_136_FLAGS

CHART_VERSION = "9.59.0"
# values.yaml key -> the type its default has in the chart
CHART_KEYS = {
    "nameOverride": str,  # cluster-autoscaler.name: the container name and app.kubernetes.io/name
    "extraArgs": dict,  # each key K (up to its first "_") with value V becomes --K=V on the command
    "extraVolumeSecrets": dict,  # each entry: a Secret volume named by its key, mounted read-only
    "extraVolumes": list,  # appended to the pod's volumes as given
    "extraVolumeMounts": list,  # appended to the container's volumeMounts as given
}
# what templates/deployment.yaml reads of one extraVolumeSecrets entry (mountPath is required)
VOLUME_SECRET_KEYS = {"name", "mountPath", "items"}
# the chart's own extraArgs defaults, which Helm merges with ours (klog's flags)
CHART_DEFAULT_ARGS = {"logtostderr": True, "stderrthreshold": "info", "v": 4}
RELEASE = "cluster-autoscaler"  # the release name the documented `helm upgrade --install` uses

VALUES = {
    "upstream": DEPLOY / "cluster-autoscaler" / "helm-values.yaml",
    "extender": DEPLOY / "cluster-autoscaler-extender" / "helm-values.yaml",
}
COMPONENT = {"upstream": DEPLOY / "cluster-autoscaler", "extender": DEPLOY / "cluster-autoscaler-extender"}


def _values(which: str) -> dict:
    return yaml.safe_load(VALUES[which].read_text())


def chart_flags(values: dict) -> list[str]:
    """The flags the chart's template appends for ``extraArgs`` (Go templates range over a map in
    key order), after Helm merged the chart's defaults with ``values``."""
    merged = {**CHART_DEFAULT_ARGS, **values.get("extraArgs", {})}
    return [f"--{key.split('_', 1)[0]}={value}" for key, value in sorted(merged.items())]


def chart_mounts(values: dict) -> dict[str, tuple[str, str]]:
    """mountPath -> (volume kind, source name) for the volumes these values add to CA's pod."""
    mounts = {}
    for key, entry in values.get("extraVolumeSecrets", {}).items():
        mounts[entry["mountPath"]] = ("secret", entry.get("name", key))
    volumes = {v["name"]: v for v in values.get("extraVolumes", [])}
    for mount in values.get("extraVolumeMounts", []):
        volume = volumes[mount["name"]]
        kind = "configMap" if "configMap" in volume else "secret"
        source = volume[kind]["name" if kind == "configMap" else "secretName"]
        mounts[mount["mountPath"]] = (kind, source)
    return mounts


def _component_flags(which: str) -> list[str]:
    patch = yaml.safe_load((COMPONENT[which] / "flags-patch.yaml").read_text())
    return [op["value"] for op in patch]


@pytest.mark.parametrize("which", sorted(VALUES))
def test_the_values_use_only_keys_of_the_pinned_chart(which):
    values = _values(which)
    assert set(values) <= set(CHART_KEYS), set(values) - set(CHART_KEYS)
    for key, value in values.items():
        assert isinstance(value, CHART_KEYS[key]), key
    for name, entry in values.get("extraVolumeSecrets", {}).items():
        assert set(entry) <= VOLUME_SECRET_KEYS and "mountPath" in entry, name
    assert f"chart {CHART_VERSION}" in VALUES[which].read_text()


@pytest.mark.parametrize("which", sorted(VALUES))
def test_the_chart_gives_ca_the_components_flags(which):
    flags = chart_flags(_values(which))
    assert set(_component_flags(which)) <= set(flags)
    names = {flag[2:].split("=", 1)[0] for flag in flags}
    assert names <= CA_136_FLAGS | {"logtostderr"}, names - CA_136_FLAGS
    assert len([f for f in flags if f.startswith("--expander=")]) <= 1


def test_upstream_values_wire_the_grpc_expander():
    values = _values("upstream")
    flags = dict(flag[2:].split("=", 1) for flag in chart_flags(values))
    assert flags["expander"] == "grpc,least-waste"
    assert flags["grpc-expander-url"] == "hami-sim-expander.hami-sim.svc:8443"
    mounts = chart_mounts(values)
    cert = PurePosixPath(flags["grpc-expander-cert"])
    assert mounts[str(cert.parent)] == ("secret", "hami-sim-expander-ca") and cert.name == "ca.crt"
    config = PurePosixPath(flags["scheduler-config-file"])
    assert mounts[str(config.parent)] == ("configMap", "hami-sim-scheduler-config")


@pytest.mark.parametrize("which", sorted(VALUES))
def test_the_documented_configmap_holds_the_file_ca_reads(which):
    """The `kubectl create configmap --from-file` step makes the key the file's name, which is the
    file the scheduler-config-file flag names, and the same profile the Component generates."""
    flags = dict(flag[2:].split("=", 1) for flag in chart_flags(_values(which)))
    wanted = PurePosixPath(flags["scheduler-config-file"]).name
    step = f"--from-file=deploy/{COMPONENT[which].name}/{wanted}"
    assert step in VALUES[which].read_text()
    doc = "cluster-autoscaler.md" if which == "upstream" else "production.md"
    assert step in (REPO / "docs" / doc).read_text()
    assert (COMPONENT[which] / wanted).exists()


@pytest.fixture(scope="module")
def base_policies() -> dict[str, dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    result = subprocess.run(
        [kubectl, "kustomize", str(DEPLOY / "base")], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d and d["kind"] == "NetworkPolicy"]
    return {d["metadata"]["name"]: d for d in docs}


@pytest.mark.parametrize(
    "which,policy",
    [
        ("upstream", "hami-sim-expander-from-cluster-autoscaler"),
        ("extender", "hami-sim-extender-from-cluster-autoscaler"),
    ],
)
def test_the_charts_pods_carry_the_label_the_network_policy_admits(base_policies, which, policy):
    """The chart labels its pods app.kubernetes.io/name=<nameOverride>; the release runs in kube-system."""
    values = _values(which)
    chart_labels = {"app.kubernetes.io/name": values["nameOverride"], "app.kubernetes.io/instance": RELEASE}
    peers = [peer for rule in base_policies[policy]["spec"]["ingress"] for peer in rule["from"]]
    assert any(
        peer["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "kube-system"}
        and peer["podSelector"]["matchLabels"].items() <= chart_labels.items()
        for peer in peers
    ), peers
    assert (
        f"helm upgrade --install {RELEASE} autoscaler/cluster-autoscaler -n kube-system"
        in VALUES[which].read_text()
    )
