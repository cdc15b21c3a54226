"""Every Secret and ConfigMap a workload in ``deploy/`` mounts has a source: an overlay that creates it
(a generator, a manifest, a cert-manager Certificate's ``secretName``) or a step in the docs that
creates it (``kubectl create secret ...`` / ``kubectl create configmap ...``).

A pod mounting a Secret nobody creates stays in ContainerCreating with no error anywhere an operator
looks first; this renders every overlay with ``kubectl kustomize`` and fails on such a mount.
"""

from __future__ import annotations

import re
import shlex

import pytest

from tests.deploy.conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"}
Ref = tuple[str, str, str]  # (kind, namespace, name)


# -- what workloads mount ----------------------------------------------------------------------------------
def _pod_spec(obj: dict) -> dict:
    if obj["kind"] == "CronJob":
        return obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return obj["spec"]["template"]["spec"]


def mounted(obj: dict) -> set[Ref]:
    """The Secrets and ConfigMaps a workload needs to start (volumes, projected volumes, envFrom, env
    valueFrom), leaving out references marked ``optional: true``."""
    namespace = obj["metadata"].get("namespace", "default")
    spec = _pod_spec(obj)
    refs: list[tuple[str, dict, str]] = []  # (kind, reference, key holding the name)
    for volume in spec.get("volumes", []):
        if "secret" in volume:
            refs.append(("Secret", volume["secret"], "secretName"))
        if "configMap" in volume:
            refs.append(("ConfigMap", volume["configMap"], "name"))
        for source in volume.get("projected", {}).get("sources", []):
            if "secret" in source:
                refs.append(("Secret", source["secret"], "name"))
            if "configMap" in source:
                refs.append(("ConfigMap", source["configMap"], "name"))
    for container in spec.get("containers", []) + spec.get("initContainers", []):
        for env_from in container.get("envFrom", []):
            if "secretRef" in env_from:
                refs.append(("Secret", env_from["secretRef"], "name"))
            if "configMapRef" in env_from:
                refs.append(("ConfigMap", env_from["configMapRef"], "name"))
        for env in container.get("env", []):
            value_from = env.get("valueFrom", {})
            if "secretKeyRef" in value_from:
                refs.append(("Secret", value_from["secretKeyRef"], "name"))
            if "configMapKeyRef" in value_from:
                refs.append(("ConfigMap", value_from["configMapKeyRef"], "name"))
    return {(kind, namespace, ref[key]) for kind, ref, key in refs if not ref.get("optional")}


# -- what overlays and docs create -------------------------------------------------------------------------
def created_by_overlays(rendered: dict[str, list[dict]]) -> dict[Ref, str]:
    """{reference: overlay} for every Secret/ConfigMap an overlay renders or has cert-manager issue."""
    out: dict[Ref, str] = {}
    for name, objects in rendered.items():
        for obj in objects:
            namespace = obj["metadata"].get("namespace", "default")
            if obj["kind"] in ("Secret", "ConfigMap"):
                out[(obj["kind"], namespace, obj["metadata"]["name"])] = name
            if obj["kind"] == "Certificate" and obj["apiVersion"].startswith("cert-manager.io/"):
                out[("Secret", namespace, obj["spec"]["secretName"])] = name
    return out


_CREATE = re.compile(r"\bkubectl\b.*\bcreate\s+(secret|configmap)\b")


def _commands(text: str) -> list[str]:
    """Shell lines of the fenced code blocks, with backslash continuations joined."""
    lines: list[str] = []
    # every fence is paired with its own info string (yaml blocks included), so no prose between
    # two blocks is read as a command; only the shell ones count
    for language, block in re.findall(r"```([\w-]*)\n(.*?)```", text, re.S):
        if language not in ("", "sh", "bash", "shell", "console"):
            continue
        joined = re.sub(r"\\\n\s*", " ", block)
        lines.extend(line.strip().removeprefix("$ ") for line in joined.splitlines())
    return lines


def created_by_docs(texts: dict[str, str]) -> dict[Ref, str]:
    """{reference: document} for every ``kubectl [-n NS] create secret TYPE NAME`` and ``kubectl
    [-n NS] create configmap NAME`` in a fenced shell block (pipelines split at ``|``)."""
    out: dict[Ref, str] = {}
    for doc, text in texts.items():
        for line in _commands(text):
            for part in line.split("|"):
                if not _CREATE.search(part):
                    continue
                words = shlex.split(part.split("#", 1)[0])
                words = words[words.index("kubectl") + 1 :]
                namespace, positional, i = "default", [], 0
                while i < len(words):
                    word = words[i]
                    if word in ("-n", "--namespace"):
                        namespace, i = words[i + 1], i + 2
                        continue
                    if word.startswith("--namespace="):
                        namespace = word.split("=", 1)[1]
                    elif not word.startswith("-"):
                        positional.append(word)
                    i += 1
                # create secret TYPE NAME | create configmap NAME
                if positional[1] == "secret":
                    out[("Secret", namespace, positional[3])] = doc
                else:
                    out[("ConfigMap", namespace, positional[2])] = doc
    return out


def _doc_texts() -> dict[str, str]:
    return {str(path.relative_to(REPO)): path.read_text() for path in DOCS if path.exists()}


def unsourced(rendered: dict[str, list[dict]], doc_texts: dict[str, str]) -> dict[str, list[Ref]]:
    """{overlay: references a workload there mounts that nothing creates}."""
    sources = {**created_by_overlays(rendered), **created_by_docs(doc_texts)}
    out: dict[str, list[Ref]] = {}
    for name, objects in rendered.items():
        missing = sorted(
            ref for obj in objects if obj["kind"] in WORKLOADS for ref in mounted(obj) if ref not in sources
        )
        if missing:
            out[name] = missing
    return out


# -- the checks --------------------------------------------------------------------------------------------
def test_every_overlay_is_rendered(every_overlay):
    assert {"base", "production", "demo", "cert-manager", "cluster-autoscaler-example"} <= set(every_overlay)


def test_every_mounted_secret_and_configmap_has_a_source(every_overlay):
    assert unsourced(every_overlay, _doc_texts()) == {}


def test_the_docs_name_the_secrets_an_install_needs():
    """The steps create the Secrets by the names the manifests mount, in the namespaces they run in."""
    created = created_by_docs(_doc_texts())
    for ref in [
        ("Secret", "hami-sim", "hami-sim-secrets"),
        ("Secret", "hami-sim", "hami-sim-tls"),
        ("Secret", "hami-sim", "hami-sim-expander-tls"),
        ("Secret", "kube-system", "hami-sim-extender-client"),
        ("Secret", "kube-system", "hami-sim-expander-ca"),
    ]:
        assert ref in created, ref


def _deployment(namespace: str, volumes=(), env_from=(), env=()) -> dict:
    return {
        "kind": "Deployment",
        "metadata": {"name": "w", "namespace": namespace},
        "spec": {
            "template": {
                "spec": {
                    "volumes": list(volumes),
                    "containers": [{"name": "c", "envFrom": list(env_from), "env": list(env)}],
                }
            }
        },
    }


@pytest.mark.parametrize(
    ("workload", "docs", "missing"),
    [
        # a volume from a Secret nobody creates
        (
            _deployment("ns", volumes=[{"name": "v", "secret": {"secretName": "s"}}]),
            "",
            [("Secret", "ns", "s")],
        ),
        # ... created by a documented step in that namespace: fine
        (
            _deployment("ns", volumes=[{"name": "v", "secret": {"secretName": "s"}}]),
            "```sh\nkubectl -n ns create secret generic s \\\n  --from-literal=a=b\n```\n",
            [],
        ),
        # ... but a step in another namespace does not count
        (
            _deployment("ns", volumes=[{"name": "v", "secret": {"secretName": "s"}}]),
            "```sh\nkubectl create secret tls s --namespace=other --cert=c --key=k\n```\n",
            [("Secret", "ns", "s")],
        ),
        # envFrom and env valueFrom, ConfigMaps and Secrets; an optional reference is not needed
        (
            _deployment(
                "ns",
                env_from=[{"configMapRef": {"name": "cm"}}, {"secretRef": {"name": "opt", "optional": True}}],
                env=[{"name": "X", "valueFrom": {"secretKeyRef": {"name": "k", "key": "x"}}}],
            ),
            "```sh\nkubectl -n ns create configmap cm --from-file=a\n```\n",
            [("Secret", "ns", "k")],
        ),
        # a projected volume; a step mentioned only in prose (not a command) does not count
        (
            _deployment(
                "ns", volumes=[{"name": "v", "projected": {"sources": [{"configMap": {"name": "p"}}]}}]
            ),
            "Create the ConfigMap p with kubectl create configmap p.\n",
            [("ConfigMap", "ns", "p")],
        ),
    ],
)
def test_the_check_catches_a_mount_without_a_source(workload, docs, missing):
    assert unsourced({"overlay": [workload]}, {"doc.md": docs}) == ({"overlay": missing} if missing else {})


def test_a_cert_manager_certificate_is_a_source():
    certificate = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"secretName": "s"},
    }
    workload = _deployment("ns", volumes=[{"name": "v", "secret": {"secretName": "s"}}])
    assert unsourced({"a": [workload], "b": [certificate]}, {}) == {}


def test_the_demo_renders_only_its_one_pod(every_overlay):
    """deploy/demo: one Deployment (the demo pod, no token, no Secret), its Service, its settings and
    the NetworkPolicies that admit the dashboard; no cluster-wide role."""
    kinds = {
        (
            o["kind"],
            o["metadata"]["name"].rsplit("-", 1)[0] if o["kind"] == "ConfigMap" else o["metadata"]["name"],
        )
        for o in every_overlay["demo"]
    }
    assert kinds == {
        ("Namespace", "hami-sim"),
        ("ServiceAccount", "hami-sim-web"),
        ("ConfigMap", "hami-sim-config"),
        ("Service", "hami-sim-web"),
        ("Deployment", "hami-sim-web"),
        ("NetworkPolicy", "hami-sim-default-deny-ingress"),
        ("NetworkPolicy", "hami-sim-web-and-metrics-in-cluster"),
    }
    (web,) = [o for o in every_overlay["demo"] if o["kind"] == "Deployment"]
    spec = _pod_spec(web)
    assert spec["automountServiceAccountToken"] is False
    assert {kind for kind, _ns, _name in mounted(web)} == {"ConfigMap"}
    assert spec["containers"][0]["command"] == ["python", "-m", "hami_sim.server.demo"]
