"""The ways the docs tell an operator to add hami-sim to Cluster Autoscaler, taken as written.

Each CA kustomization snippet of the docs and of the Components' headers is copied into a fresh
directory beside an upstream-style CA Deployment (one that names its namespace, as upstream's
manifests do), rendered with ``kubectl kustomize``, and every object must land in the namespace CA
runs in: a ConfigMap anywhere else leaves CA's pod waiting in ContainerCreating.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.deploy.conftest import DEPLOY, REPO

CA_NAMESPACE = "kube-system"
# Where the docs and the Components' headers show an operator's CA kustomization.
SNIPPET_SOURCES = [
    "docs/production.md",
    "docs/cluster-autoscaler.md",
    "deploy/cluster-autoscaler/kustomization.yaml",
    "deploy/cluster-autoscaler-extender/kustomization.yaml",
]
_PLACEHOLDER = re.compile(r"<path[- ]to[- ]hami-sim>")


def _fenced_yaml(text: str) -> list[str]:
    """The ```yaml blocks of a Markdown page (indented ones of a list item included)."""
    blocks = re.findall(r"^( *)```yaml\n(.*?)^\1```", text, flags=re.S | re.M)
    return [re.sub(rf"^{indent}", "", body, flags=re.M) for indent, body in blocks]


def _header_snippets(text: str) -> list[str]:
    """The commented ``# your CA kustomization.yaml`` example of a Component's header."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "your CA kustomization.yaml" in line)
    body = []
    for line in lines[start:]:
        if not line.startswith("#   "):
            break
        body.append(line[4:])
    return ["\n".join(body) + "\n"]


def documented_snippets() -> list[tuple[str, str]]:
    """(source, text) of every CA kustomization the docs and headers show that uses a Component."""
    found = []
    for source in SNIPPET_SOURCES:
        text = (REPO / source).read_text()
        blocks = _header_snippets(text) if source.endswith(".yaml") else _fenced_yaml(text)
        found += [(source, b) for b in blocks if "components:" in b and _PLACEHOLDER.search(b)]
    return found


def _ca_deployment() -> dict:
    """deploy/cluster-autoscaler-example's CA Deployment, in kube-system as upstream's manifests put it."""
    deployment = yaml.safe_load(
        (DEPLOY / "cluster-autoscaler-example" / "cluster-autoscaler.yaml").read_text()
    )
    deployment["metadata"]["namespace"] = CA_NAMESPACE
    return deployment


def render_snippet(snippet: str, directory: Path) -> list[dict]:
    """Write the snippet as ``kustomization.yaml`` (the placeholder replaced by this checkout's path)
    beside the CA manifests it names, and render it."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    here = os.path.relpath(REPO, directory)
    text = _PLACEHOLDER.sub(here, snippet)
    for name in yaml.safe_load(text).get("resources", []):
        (directory / name).write_text(yaml.safe_dump(_ca_deployment()))
    (directory / "kustomization.yaml").write_text(text)
    result = subprocess.run(
        [kubectl, "kustomize", str(directory)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def test_every_component_is_shown_by_a_snippet():
    shown = " ".join(text for _, text in documented_snippets())
    for component in ("deploy/cluster-autoscaler]", "deploy/cluster-autoscaler-extender]"):
        assert component in shown, component
    assert {source for source, _ in documented_snippets()} == set(SNIPPET_SOURCES)


@pytest.mark.parametrize(
    "source,snippet",
    documented_snippets(),
    ids=[f"{s}#{i}" for i, (s, _) in enumerate(documented_snippets())],
)
def test_the_documented_ca_kustomization_puts_everything_in_cas_namespace(source, snippet, tmp_path):
    objects = render_snippet(snippet, tmp_path)
    assert {o["kind"] for o in objects} == {"Deployment", "ConfigMap"}
    assert {(o["kind"], o["metadata"].get("namespace")) for o in objects} == {
        ("Deployment", CA_NAMESPACE),
        ("ConfigMap", CA_NAMESPACE),
    }
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    (configmap,) = [o for o in objects if o["kind"] == "ConfigMap"]
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    # the mounted name is the generated one (with its hash), so CA reads this very ConfigMap
    assert volumes["hami-sim-scheduler-config"]["configMap"]["name"] == configmap["metadata"]["name"]


def test_without_the_namespace_line_the_component_still_uses_kube_system(tmp_path):
    """The Components put their ConfigMap in kube-system themselves, where upstream installs CA."""
    snippet = "resources: [ca.yaml]\ncomponents: [<path-to-hami-sim>/deploy/cluster-autoscaler]\n"
    objects = render_snippet(snippet, tmp_path)
    assert {o["metadata"].get("namespace") for o in objects} == {CA_NAMESPACE}
