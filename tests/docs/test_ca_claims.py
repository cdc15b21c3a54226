"""docs/cluster-autoscaler.md says what Cluster Autoscaler's source does; each such fact is restated
here as data read at the named tags of kubernetes/autoscaler (``cluster-autoscaler-<release>``, paths
under ``cluster-autoscaler/``) and checked against what hami-sim's code and the doc say, so neither can
drift from CA nor from each other.

- ``SOURCES``: every source file the doc (or docs/dra.md) names, the tags it was read at and the tests that encode what
  it does (each of those tests names the file or its ``_test.go``). A doc sentence that cites a new file fails here until a
  test encodes it.
- ``PROVIDERS``: the tag and annotation names each provider's template code reads, and the GPU label
  it looks for: the renderer (``profiles/ca_template_tags.py``) writes those names and the doc's table and
  GPU-label sentence say them.
- the gRPC client's constants and what it does with an empty answer, release by release
  (``hami_sim.engine.ca_releases``): the doc says the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
import yaml

from hami_sim.engine.ca_releases import CHANGES, CAVersionError, parse_ca_version, releases
from profiles import ca_template_tags
from tests.docs.examples import REPO
from tests.expander import ca_clients

DOC = (REPO / "docs" / "cluster-autoscaler.md").read_text()
FLAT = " ".join(DOC.split())  # the doc's prose with its line breaks undone
CITING = (DOC, (REPO / "docs" / "dra.md").read_text())  # the docs whose cited files SOURCES must hold


@dataclass(frozen=True)
class Source:
    """One file the doc cites: where it lives, the releases it was read at, the tests encoding it."""

    path: str
    read_at: tuple[str, ...]
    tests: tuple[str, ...]


_EVERY = ("cluster-autoscaler-1.32.1", "cluster-autoscaler-1.34.5", "cluster-autoscaler-1.36.1")
_KUBE = ("kubernetes v1.32", "kubernetes v1.35")
SOURCES = (
    Source(
        "expander/grpcplugin/grpc_client.go",
        _EVERY,
        ("tests/expander/ca_clients.py", "tests/expander/test_ca_answer.py"),
    ),
    Source(
        "estimator/binpacking_estimator.go",
        _EVERY,
        ("tests/estimate/test_ca_versions.py", "tests/estimate/test_api_snapshot.py"),
    ),
    Source(
        "processors/binpacking/time_limiter.go",
        ("cluster-autoscaler-1.34.5", "cluster-autoscaler-1.35.0"),
        ("tests/estimate/test_ca_binpacking.py",),
    ),
    Source(
        "core/scaleup/orchestrator/orchestrator.go",
        ("cluster-autoscaler-1.35.2", "cluster-autoscaler-1.36.0", "cluster-autoscaler-1.36.1"),
        ("tests/docs/test_ca_claims.py", "tests/dashboard/test_demo_scale_up.py"),
    ),
    Source(
        "core/podlistprocessor/filter_out_schedulable.go",
        _EVERY,
        ("tests/estimate/test_ca_upcoming.py", "tests/blindspot/test_views.py"),
    ),
    Source(
        "cloudprovider/aws/aws_manager.go",
        _EVERY,
        ("tests/profiles/test_ca_template.py", "tests/docs/test_ca_source_facts.py"),
    ),
    Source(
        "cloudprovider/azure/azure_template.go",
        _EVERY,
        ("tests/profiles/test_ca_template.py", "tests/docs/test_ca_source_facts.py"),
    ),
    Source(
        "processors/status/eventing_scale_up_processor.go",
        ("cluster-autoscaler-1.35.2", "cluster-autoscaler-1.36.1"),
        ("tests/docs/test_ca_source_facts.py", "tests/decisions/test_events.py"),
    ),
    Source(
        "cloudprovider/clusterapi/clusterapi_unstructured.go",
        _EVERY,
        ("tests/profiles/test_ca_template.py", "tests/profiles/test_ca_template_capacity.py"),
    ),
    Source(
        "simulator/dynamicresources/utils/sanitize.go",
        ("cluster-autoscaler-1.36.1",),
        ("tests/docs/test_ca_source_facts.py",),
    ),
    # k8s.io/dynamic-resource-allocation (kubernetes/dynamic-resource-allocation), the allocator CA runs
    Source(
        "structured/internal/stable/pools_stable.go",
        ("dynamic-resource-allocation v0.36.2",),
        ("tests/docs/test_ca_source_facts.py", "tests/dra/test_hamidra.py"),
    ),
    # Kubernetes' own source (kubernetes/kubernetes), for the aggregate-capacity mode
    Source("pkg/scheduler/scheduler.go", _KUBE, ("tests/deploy/test_ca_config.py",)),
    Source("pkg/kubelet/lifecycle/predicate.go", _KUBE, ("tests/blindspot/test_views.py",)),
    Source("pkg/kubelet/kubelet_node_status.go", _KUBE, ("tests/usage/test_capacity.py",)),
)


def test_every_source_file_the_doc_cites_has_a_test_that_encodes_it():
    cited = {name for doc in CITING for name in re.findall(r"`([\w/]+\.go)`", doc)}
    known = {s.path: s for s in SOURCES}
    by_name = {s.path.rsplit("/", 1)[-1]: s for s in SOURCES}
    for name in sorted(cited):
        source = known.get(name) or by_name.get(name.rsplit("/", 1)[-1])
        assert source is not None, f"the doc cites {name}: add it to SOURCES with the tests encoding it"
        assert source.read_at, source
        for test in source.tests:
            text = (REPO / test).read_text()
            stem = source.path.rsplit("/", 1)[-1].removesuffix(".go")
            # a restated CA test table (<file>_test.go) encodes the file too
            assert f"{stem}.go" in text or f"{stem}_test.go" in text, f"{test} does not cite {source.path}"


@dataclass(frozen=True)
class Provider:
    """What one provider's template code reads (tags ``_EVERY``)."""

    name: str
    prefix: str  # the renderer's constant
    resources: str
    label: str
    taint: str
    gpu_label: str  # GPULabel, in <provider>_cloud_provider.go (clusterapi: clusterapi_provider.go)


PROVIDERS = (
    # aws_manager.go: extractAllocatableResourcesFromAsg, extractLabelsFromAsg, extractTaintsFromAsg
    Provider(
        "aws",
        ca_template_tags.AWS,
        "k8s.io/cluster-autoscaler/node-template/resources/",
        "k8s.io/cluster-autoscaler/node-template/label/",
        "k8s.io/cluster-autoscaler/node-template/taint/",
        "k8s.amazonaws.com/accelerator",
    ),
    # azure_util.go nodeResourcesTagName, nodeLabelTagName, nodeTaintTagName; GPULabel is
    # AKSLabelKeyPrefixValue + "accelerator", set by azure_template.go on NVIDIA VM sizes
    Provider(
        "azure",
        ca_template_tags.AZURE,
        "k8s.io_cluster-autoscaler_node-template_resources_",
        "k8s.io_cluster-autoscaler_node-template_label_",
        "k8s.io_cluster-autoscaler_node-template_taint_",
        "kubernetes.azure.com/accelerator",
    ),
    # clusterapi_utils.go cpuKey, memoryKey, maxPodsKey, gpuTypeKey, gpuCountKey, labelsKey, taintsKey
    Provider(
        "clusterapi",
        ca_template_tags.CAPI,
        "capacity.cluster-autoscaler.kubernetes.io/gpu-count",
        "capacity.cluster-autoscaler.kubernetes.io/labels",
        "capacity.cluster-autoscaler.kubernetes.io/taints",
        "cluster-api/accelerator",
    ),
)
#: clusterapi_utils.go: the annotation keys CA reads for a template's capacity, labels and taints at
#: every tag of ``_EVERY`` (1.33 adds ``dra-driver`` and 1.35 ``csi-driver``, which the ca-template
#: answer does not write; docs/dra.md covers the first). With no infrastructure template CA uses the
#: annotations alone, maxPods defaulting to 110 (clusterapi_unstructured.go ``InstanceCapacity``).
CLUSTERAPI_KEYS = {
    "capacity.cluster-autoscaler.kubernetes.io/" + k
    for k in ("cpu", "memory", "ephemeral-disk", "gpu-type", "gpu-count", "maxPods", "labels", "taints")
}
GCE_GPU_LABEL = "cloud.google.com/gke-accelerator"  # gce_cloud_provider.go GPULabel


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
def test_the_renderer_writes_the_names_ca_reads(provider):
    """Every tag or annotation ``profiles.ca_template_tags`` renders is one CA's template code reads."""
    render = {
        "aws": ca_template_tags._aws,
        "azure": ca_template_tags._azure,
        "clusterapi": ca_template_tags._clusterapi,
    }
    capacity = {"cpu": "32", "memory": "128Gi", "pods": "110", "nvidia.com/gpu": "80"}
    taint = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
    body = render[provider.name](capacity, {"node.kubernetes.io/instance-type": "p5"}, [taint], capacity)
    written = set(body.get("tags") or body["annotations"])
    if provider.name == "clusterapi":
        assert written <= CLUSTERAPI_KEYS and {provider.label, provider.taint, provider.resources} <= written
    else:
        for key in written:
            assert key.startswith((provider.resources, provider.label, provider.taint)), key
        for prefix in (provider.resources, provider.label, provider.taint):
            assert any(key.startswith(prefix) for key in written), prefix


def _template_rows() -> dict[str, str]:
    section = DOC.split("## Upstream CA: template capacity for scale-from-zero", 1)[1]
    rows = {}
    for line in section.split("\n\n", 2)[2].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = " | ".join(cells[2:])  # the resources and labels, taints cells
    return rows


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
def test_the_docs_template_table_names_what_ca_reads(provider):
    """The row's names, with its ``...`` written out as the provider's prefix, are the ones CA reads."""
    row = _template_rows()[provider.name].replace("`...", "`" + provider.prefix[:-1])
    names = set(re.findall(r"`([\w./~<>-]+)`", row))
    if provider.name == "clusterapi":
        keys = {n if n.startswith(provider.prefix) else provider.prefix + n for n in names if "=" not in n}
        keys = {k for k in keys if "<" not in k and ":" not in k}
        assert keys <= CLUSTERAPI_KEYS, keys - CLUSTERAPI_KEYS
        assert {provider.resources, provider.label, provider.taint, provider.prefix + "gpu-type"} <= keys
    else:
        for key in (provider.resources + "<name>", provider.label + "<key>", provider.taint + "<key>"):
            assert key in names, (key, names)


def test_the_docs_gpu_labels_are_the_ones_ca_looks_for():
    """A node with its provider's GPU label and no GPU allocatable counts as not ready
    (``processors/customresources/gpu_processor.go`` ``FilterOutNodesWithUnreadyResources``, tags
    ``_EVERY``); azure's template code sets the label itself on NVIDIA VM sizes (``azure_template.go``
    ``isNvidiaEnabledSKU``)."""
    sentence = FLAT.split("The label CA looks for:", 1)[1][:250]
    said = dict(re.findall(r"(aws|azure|clusterapi|gce) `([\w./-]+)`", sentence))
    want = {p.name: p.gpu_label for p in PROVIDERS} | {"gce": GCE_GPU_LABEL}
    assert said == want


def test_the_doc_says_cas_grpc_call_as_ca_clients_restates_it():
    """grpc_client.go: the method, the 5 s deadline (gRPCTimeout), the cert file as the only root."""
    assert ca_clients.METHOD == "/grpcplugin.Expander/BestOptions" and ca_clients.CA_TIMEOUT == 5.0
    assert "`grpcplugin.Expander/BestOptions`" in DOC
    assert f"CA's {ca_clients.CA_TIMEOUT:g} s deadline" in FLAT
    assert f"after CA's {ca_clients.CA_TIMEOUT:g} s timeout CA keeps every option" in FLAT
    assert 'credentials.NewClientTLSFromFile(--grpc-expander-cert, "")' in DOC
    # createGRPCClient: an empty --grpc-expander-cert is fatal ("insecure connections not allowed")
    assert "Upstream CA refuses plaintext: it requires `--grpc-expander-cert`" in FLAT


def test_the_doc_says_how_each_release_reports_an_empty_answer():
    """orchestrator.go: 1.36.0 and later log "Expander filtered out all options" and mark the pods
    with ExpansionOptionsFilteredOutReason (rejectedreasons.go); 1.32 to 1.35 return no event and the
    only line is grpc_client.go's klog.V(4) "GRPC returned nil bestOptions"."""
    (change,) = [c for c in CHANGES if c.attribute == "empty_answer_reported"]
    reporting = [r for r in releases() if r.empty_answer_reported]
    assert [r.minor for r in reporting] == [r.minor for r in releases() if r.minor >= change.since[1]]
    silent = [r.minor for r in releases() if not r.empty_answer_reported]
    assert f"CA 1.{silent[0]} to 1.{silent[-1]} say so only in the gRPC client's `--v=4` line" in FLAT
    assert f'CA 1.{reporting[0].minor} logs "Expander filtered out all options"' in FLAT
    assert '"expansion options filtered out and no longer considered"' in FLAT


#: README.md, the same sentence at every tag of ``_EVERY``
README_ADVICE = (
    "We recommend using Cluster Autoscaler with the Kubernetes control plane (previously referred to "
    "as master) version for which it was meant."
)


def test_the_version_advice_is_the_readmes_recommendation_not_a_rule():
    assert "recommends the CA minor made for the cluster's Kubernetes minor" in FLAT
    assert "without requiring it" in FLAT and "must run" not in FLAT
    with pytest.raises(CAVersionError, match="recommends"):
        parse_ca_version("1.31")
    assert "must run" not in (REPO / "hami_sim/engine/ca_releases.py").read_text()


#: ``core/scaledown/eligibility/eligibility.go`` ``ScaleDownDisabledKey`` (tags ``_EVERY``)
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"


def test_the_scale_down_advice_names_cas_annotation():
    advice = f"`{SCALE_DOWN_DISABLED}=true`"
    assert advice in DOC
    node_page = (REPO / "usage/templates/usage/node.html").read_text()
    assert f"<code>{SCALE_DOWN_DISABLED}=true</code>" in node_page


def _flags(component: str) -> list[str]:
    patch = yaml.safe_load((REPO / "deploy" / component / "flags-patch.yaml").read_text())
    return [op["value"] for op in patch]


def test_the_docs_flag_list_is_what_the_component_appends():
    """Step 5's "appends exactly these flags" block, and the extender Component sets no expander flag
    ("What works with which CA": added by hand there)."""
    block = DOC.split("appends exactly these flags to CA's `command`:", 1)[1].split("```", 2)[1]
    assert block.split() == _flags("cluster-autoscaler")
    extender = _flags("cluster-autoscaler-extender")
    assert extender and not [f for f in extender if f.startswith(("--expander", "--grpc-expander"))]
    assert "`deploy/cluster-autoscaler-extender` does not set them" in FLAT


def test_the_docs_fail_open_list_is_the_expanders():
    """Every code an option can be kept "not judged" for is named in the doc's fail-open paragraph,
    and that paragraph names no other."""
    from hami_sim.engine.hami_expander import UNJUDGED_REASONS

    paragraph = FLAT.split("an option hami-sim cannot judge is **kept** (fail open)", 1)[1]
    paragraph = paragraph.split("Each is kept beside the judged winners", 1)[0]
    named = set(re.findall(r"`([a-z]+(?:-[a-z]+)+)`", paragraph))
    assert named == set(UNJUDGED_REASONS)


#: kubernetes/autoscaler tag cluster-autoscaler-chart-9.59.0: Chart.yaml ``version``, values.yaml
#: ``image.tag``, and _helpers.tpl's default name (``printf "%s-%s" .Values.cloudProvider .Chart.Name``)
CHART = {"version": "9.59.0", "image": "v1.35.0", "default_name": "<cloudProvider>-cluster-autoscaler"}


def test_the_docs_chart_facts_are_the_pinned_charts():
    from tests.deploy.test_helm_values import CHART_VERSION

    assert CHART["version"] == CHART_VERSION
    assert f"(read at chart version {CHART['version']})" in FLAT
    assert f"Chart {CHART['version']} runs CA `{CHART['image']}` unless `image.tag` says otherwise" in FLAT
    assert f"the chart's default name is `{CHART['default_name']}`" in FLAT
