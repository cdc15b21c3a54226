"""Three doc claims about what other projects' source does, restated here as data read at the named
tags and checked against hami-sim's code and the docs' sentences:

- ``GPU_TEMPLATES``: what aws and azure put in a cold group's template without hami-sim's tags
  (kubernetes/autoscaler, paths under ``cluster-autoscaler/``), docs/cluster-autoscaler.md.
- ``LEFT_OUT``: why aggregate capacity leaves vendors other than NVIDIA out (Project-HAMi/HAMi tag
  v2.10.0), the "names" bullet of docs/cluster-autoscaler.md's ``deploy/capacity`` section.
- ``CLUSTERAPI_SLICE``: the template ResourceSlice CA's clusterapi provider builds, docs/dra.md.
- ``TEMPLATE_POOL``: why CA's allocator takes nothing from that slice's pool (kubernetes/autoscaler
  and kubernetes/dynamic-resource-allocation), docs/dra.md.
- ``DRA_NOT_TRIGGERED``: what CA's pod event says when no node group's template can take a pod's
  claims (kubernetes/autoscaler, Kubernetes' scheduler plugin and its allocator), docs/dra.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from decisions.events import parse_not_trigger_scale_up
from hami_sim.engine.blindspot import aggregate_names
from hami_sim.engine.dra.explain import judge
from hami_sim.engine.dra.hamidra import clusterapi_slice
from hami_sim.engine.dra.objects import ALL, EXACT_COUNT, Claim, DeviceClass, DeviceRequest, parse_slice
from hami_sim.engine.dra.pools import gather_pools
from hami_sim.engine.vendors import cambricon, default_vendors, iluvatar, mthreads
from profiles import ca_template_tags
from tests.docs.examples import REPO

FLAT = " ".join((REPO / "docs" / "cluster-autoscaler.md").read_text().split())
DRA = " ".join((REPO / "docs" / "dra.md").read_text().split())
_EVERY = ("cluster-autoscaler-1.32.1", "cluster-autoscaler-1.34.5", "cluster-autoscaler-1.36.1")


@dataclass(frozen=True)
class GpuTemplate:
    """One provider's template from the instance type: the GPU resource it sets to the physical
    count, and the resource tag prefix whose tags then overwrite any capacity (tags ``_EVERY``)."""

    provider: str
    file: str
    gpu_resource: str  # utils/gpu/gpu.go ResourceNvidiaGPU
    resource_tag: str
    read_at: tuple[str, ...] = _EVERY


GPU_TEMPLATES = (
    # buildNodeFromTemplate: Capacity[gpu.ResourceNvidiaGPU] = InstanceType.GPU, then every
    # extractAllocatableResourcesFromAsg entry written over Capacity
    GpuTemplate(
        "aws",
        "cloudprovider/aws/aws_manager.go",
        "nvidia.com/gpu",
        "k8s.io/cluster-autoscaler/node-template/resources/",
    ),
    # buildNodeFromTemplate: Capacity[gpu.ResourceNvidiaGPU] = gpuCount (NP-series: an FPGA resource
    # instead), then extractAllocatableResourcesFromScaleSet (nodeResourcesTagName in azure_util.go;
    # "_" and "~2" read back as "/") written over Capacity
    GpuTemplate(
        "azure",
        "cloudprovider/azure/azure_template.go",
        "nvidia.com/gpu",
        "k8s.io_cluster-autoscaler_node-template_resources_",
    ),
)


def _ca_resource_name(provider: GpuTemplate, tag: str) -> str:
    """The resource name CA reads back from a resource tag (azure: ``_`` and ``~2`` as ``/``)."""
    name = tag.removeprefix(provider.resource_tag)
    return name.replace("_", "/").replace("~2", "/") if provider.provider == "azure" else name


@pytest.mark.parametrize("provider", GPU_TEMPLATES, ids=lambda p: p.provider)
def test_the_rendered_gpu_tag_replaces_the_instance_types_count(provider):
    """hami-sim's tag for the GPU resource is one CA reads back as the very resource the instance
    type set, so it replaces the physical count."""
    render = {"aws": ca_template_tags._aws, "azure": ca_template_tags._azure}[provider.provider]
    capacity = {"cpu": "32", "memory": "128Gi", "pods": "110", provider.gpu_resource: "80"}
    tags = render(capacity, {}, [], capacity)["tags"]
    gpu = {_ca_resource_name(provider, k): v for k, v in tags.items() if k.startswith(provider.resource_tag)}
    assert gpu[provider.gpu_resource] == "80"


def test_the_doc_says_what_aws_and_azure_set_without_tags():
    names = " and ".join(f"**{p.provider}**" for p in GPU_TEMPLATES)
    gpu = {p.gpu_resource for p in GPU_TEMPLATES}
    files = ", ".join(f"`{p.file.rsplit('/', 1)[-1]}`" for p in GPU_TEMPLATES)
    (resource,) = gpu
    assert (
        f"{names} build the template from the instance type and set `{resource}` to its physical GPU"
        f" count ({files}); a resource tag replaces that value."
    ) in FLAT


@dataclass(frozen=True)
class LeftOut:
    """One vendor aggregate capacity leaves out, and why, read in HAMi v2.10.0 ``pkg/device/<dir>``."""

    name: str  # as the doc writes it
    common_word: str  # hami-sim's vendor (Iluvatar: one per chip; the first Helm chip here)
    source: str
    advertises: tuple[str, ...] = ()  # memory/cores names read from the node's status.capacity
    memory_unit: int = 1  # MiB per unit of the pod's memory resource (MemoryFactor)
    rounds_to: str = ""  # what the request's memory is rounded up to


LEFT_OUT = (
    # GetNodeDevices reads Status.Capacity[MLUResourceCores], [MLUResourceMemory]; MemoryFactor = 256
    LeftOut(
        "Cambricon",
        "MLU",
        "cambricon/device.go",
        ("cambricon.com/mlu.smlu.vcore", "cambricon.com/mlu.smlu.vmemory"),
        256,
    ),
    # GetNodeDevices reads Status.Capacity[MthreadsResourceCores], [MthreadsResourceMemory]; 512
    LeftOut(
        "Moore Threads",
        "Mthreads",
        "mthreads/device.go",
        ("mthreads.com/sgpu-core", "mthreads.com/sgpu-memory"),
        512,
    ),
    # GetNodeDevices reads Status.Capacity[resourceCountName], [resourceCoreName]; no memory
    LeftOut("AWS Neuron", "AWSNeuron", "awsneuron/device.go", ("aws.amazon.com/neuroncore",)),
    # const MemoryFactor = 256
    LeftOut("Iluvatar", "MR-V100", "iluvatar/device.go", memory_unit=256),
    # MutateAdmission: trimMemory rounds the -memory request up to the first vNPU template
    LeftOut("Ascend", "Ascend910B3", "ascend/device.go", rounds_to="vNPU templates"),
    # MutateAdmission keeps gcu-memory/gcu-core; Fit converts them to a DRS profile
    LeftOut("Enflame", "Enflame", "enflame/device.go", rounds_to="DRS profiles"),
)
_UNITS = {"MLU": cambricon.MEMORY_UNIT, "Mthreads": mthreads.MEMORY_UNIT, "MR-V100": iluvatar.MEMORY_UNIT}


def test_aggregate_capacity_sums_nvidia_only():
    assert set(aggregate_names(default_vendors())) == {"NVIDIA"}


@pytest.mark.parametrize("vendor", LEFT_OUT, ids=lambda v: v.name)
def test_hami_sims_vendor_data_is_hamis(vendor):
    """The advertised names are ones hami-sim's backend reads from ``status.capacity`` and asks
    pods for; the memory unit is the backend's."""
    by_word = {v.common_word: v for v in default_vendors()}
    backend = by_word[vendor.common_word]
    assert not backend.sums_capacity
    if vendor.advertises:
        assert set(vendor.advertises) <= set(backend.node_reads().capacity) & backend.resource_names()
    if vendor.memory_unit > 1:
        assert _UNITS[vendor.common_word] == vendor.memory_unit
    if vendor.name == "Ascend":
        assert backend.config.templates  # the Helm chart's vNPU templates


def test_the_doc_names_the_left_out_vendors_and_why():
    advertise = [v.name for v in LEFT_OUT if v.advertises]
    units = [v for v in LEFT_OUT if v.memory_unit > 1]
    rounds = [v for v in LEFT_OUT if v.rounds_to]
    assert (
        f"{advertise[0]}'s, {advertise[1]}' and {advertise[2]}'s device plugins advertise their own"
        " memory or cores names"
    ) in FLAT
    sizes = " or ".join(str(u) for u in sorted({v.memory_unit for v in units}))
    assert f"{units[0].name}, {units[1].name} and {units[2].name} count memory in {sizes} MiB units" in FLAT
    assert (
        f"{rounds[0].name} and {rounds[1].name} round it up to their own {rounds[0].rounds_to} and"
        f" {rounds[1].rounds_to}"
    ) in FLAT


#: cloudprovider/clusterapi at cluster-autoscaler-1.36.1: clusterapi_utils.go ``draDriverKey`` and
#: ``GpuDeviceType``; clusterapi_unstructured.go ``InstanceResourceSlices`` (one slice named
#: ``<node>-<driver>``, pool ``<node>``, devices ``gpu-<i>`` with only the ``type`` attribute, no
#: capacity, no ``ResourceSliceCount``; nothing without the driver or with a zero ``gpu-count``)
CLUSTERAPI_SLICE = {
    "driver_key": "capacity.cluster-autoscaler.kubernetes.io/dra-driver",
    "count_key": "capacity.cluster-autoscaler.kubernetes.io/gpu-count",
    "device_type": "gpu",
}


def test_the_engines_clusterapi_slice_is_cas_and_the_doc_says_so():
    built = clusterapi_slice("n", "d.example.com", 2)
    assert built is not None and built["metadata"]["name"] == "n-d.example.com"
    spec = built["spec"]
    assert spec["pool"]["name"] == "n" and spec["pool"]["resourceSliceCount"] == 0
    assert spec["devices"] == [
        {"name": f"gpu-{i}", "attributes": {"type": {"string": CLUSTERAPI_SLICE["device_type"]}}}
        for i in range(2)
    ]
    assert clusterapi_slice("n", "", 2) is None and clusterapi_slice("n", "d", 0) is None
    assert f"`{CLUSTERAPI_SLICE['driver_key']}` and `.../gpu-count`" in DRA
    assert (
        f"devices `gpu-0`, `gpu-1`, ... with one attribute, `type: {CLUSTERAPI_SLICE['device_type']}`,"
        " no capacity at all, and a pool that declares no slice count"
    ) in DRA
    assert "CA 1.36.1's clusterapi provider builds one slice per template node" in DRA


#: Why nothing in a clusterapi template pool is allocatable. At cluster-autoscaler-1.36.1, paths under
#: ``cluster-autoscaler/``, the provider's slice reaches the allocator with its count untouched:
#: simulator/node_info_utils.go ``SanitizedTemplateNodeInfoFromNodeGroup`` (the template) and
#: ``SanitizedNodeInfo`` (each node the estimator adds, estimator/binpacking_estimator.go) both go
#: through ``createSanitizedNodeInfo`` to simulator/dynamicresources/utils/sanitize.go
#: ``SanitizedNodeResourceSlices``: a deep copy with a new UID, slice name, pool name
#: (``<pool>-<suffix>``) and node name; simulator/clustersnapshot/predicate/predicate_snapshot.go
#: ``AddNodeInfo`` stores it through simulator/dynamicresources/snapshot/snapshot.go
#: ``AddNodeResourceSlices``, and snapshot_slice_lister.go ``ListWithDeviceTaintRules`` hands it to the
#: scheduler's plugin as stored. Nothing outside the providers writes ``Spec.Pool.ResourceSliceCount``.
#: k8s.io/dynamic-resource-allocation v0.36.2 (CA 1.36.1's go.mod pin), structured/internal/stable/
#: pools_stable.go ``GatherPools`` (and the incubating and experimental copies): a pool is complete
#: only when its slices of the pool's generation number its ``ResourceSliceCount``, else
#: ``IsIncomplete``; allocator_stable.go ``allocateOne`` skips an incomplete pool (an ``ExactCount``
#: request: no result, no error) and ``validateDeviceRequest`` fails an ``All`` request ("asks for all
#: devices, but resource pool %s is currently being updated").
TEMPLATE_POOL = {
    "declared_slices": 0,
    "allocator": "k8s.io/dynamic-resource-allocation v0.36.2",
    "files": ("sanitize.go", "pools_stable.go"),
}

ANY_DEVICE = DeviceClass("any")  # no selector: a claim that asks for nothing a device lacks
POOL_CASES = [
    # (request mode, what hami-sim's allocator says, as CA's allocator does)
    (EXACT_COUNT, "reason", "its pool is incomplete"),
    (ALL, "error", "asks for all devices, but resource pool d.example.com/n is currently being updated"),
]


@pytest.mark.parametrize(("mode", "where", "said"), POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_no_claim_fits_a_clusterapi_template_pool(mode, where, said):
    """One slice in a pool that declares none: incomplete, so even a claim any device serves fails."""
    built = clusterapi_slice("n", "d.example.com", 2)
    assert built is not None
    slices = [parse_slice(built)]  # the provider's one slice per template node
    assert built["spec"]["pool"]["resourceSliceCount"] == TEMPLATE_POOL["declared_slices"] != len(slices)
    node = {"metadata": {"name": "n"}}
    assert [p.incomplete for p in gather_pools(slices, node)] == [True]
    claim = Claim("c", (DeviceRequest("r", ANY_DEVICE.name, mode=mode),))
    verdict = judge(node, [claim], {ANY_DEVICE.name: ANY_DEVICE}, slices)
    assert not verdict.fits
    if where == "error":
        assert said in verdict.error
    else:
        assert verdict.reasons and all(r.reason.startswith(said) for r in verdict.reasons)


def test_the_doc_says_nothing_in_a_clusterapi_template_pool_is_allocatable():
    sanitize, pools = TEMPLATE_POOL["files"]
    assert (
        "Nothing on the way to the allocator sets that count: CA copies the slice into each node it"
        f" simulates with only its names changed (`{sanitize}`)."
    ) in DRA
    assert (
        f"The allocator ({TEMPLATE_POOL['allocator']}, the version CA 1.36.1 builds with) counts a pool"
        f" complete only when the slices it sees are as many as the pool declares (`{pools}`): one slice"
        " against none declared leaves the pool incomplete, and the allocator takes no device from an"
        " incomplete pool (a request for all devices fails outright)."
    ) in DRA
    assert "So nothing in such a group's template is allocatable, whatever a claim asks" in DRA
    assert "A HAMi-DRA claim would in addition not fit those devices" in DRA


#: Why CA adds no node for a pod, as its pod event says it. Paths under ``cluster-autoscaler/`` at
#: cluster-autoscaler-1.35.2 and cluster-autoscaler-1.36.1 (the same in both):
#: processors/status/eventing_scale_up_processor.go writes ``NotTriggerScaleUp`` "pod didn't trigger
#: scale-up: %s" of ``ReasonsMessage``, which counts each reason over the rejected and skipped node
#: groups that exist ("%d %s", joined by ", "); a rejected group's reasons are its failing
#: predicate's status reasons (core/scaleup/orchestrator/orchestrator.go ``SchedulablePodGroups``,
#: simulator/clustersnapshot/predicate/plugin_runner.go ``RunFiltersOnNode``,
#: simulator/clustersnapshot/scheduling_error.go ``Reasons``). go.mod pins k8s.io/kubernetes v1.35.6
#: and v1.36.2, k8s.io/dynamic-resource-allocation v0.35.6 and v0.36.2. Kubernetes'
#: pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go ``Filter`` (the 1.35 line on,
#: the one handling ``ErrFailedAllocationOnNode``) gives the single reason "cannot allocate all
#: claims" when the allocator returns fewer results than claims and no error; the allocator
#: (structured/internal/stable/allocator_stable.go at v0.35.6 and v0.36.2) returns no result and no
#: error when no device fits and no pool is invalid (an incomplete pool is skipped, not invalid).
DRA_NOT_TRIGGERED = {
    "event": "NotTriggerScaleUp",
    "prefix": "pod didn't trigger scale-up: ",
    "dra_reason": "cannot allocate all claims",
    "read_at": ("cluster-autoscaler-1.35.2", "cluster-autoscaler-1.36.1"),
}


def test_the_doc_quotes_cas_event_for_claims_no_template_takes():
    """The doc quotes the event as CA writes it for one group the plugin rejects, hami-sim's event
    parser reads that reason back, and the doc no longer says CA is silent."""
    fact = DRA_NOT_TRIGGERED
    message = f"{fact['prefix']}1 {fact['dra_reason']}"
    assert parse_not_trigger_scale_up(message)["reasons"] == [{"count": 1, "reason": fact["dra_reason"]}]
    releases = " and ".join(tag.removeprefix("cluster-autoscaler-") for tag in fact["read_at"])
    assert (
        f"CA does say why, in the pod's `{fact['event']}` event (`eventing_scale_up_processor.go`,"
        f" CA {releases}): the event counts the scheduler's reasons over the node groups that could"
        " not take the pod"
    ) in DRA
    assert (
        "the scheduler's DynamicResources plugin has one reason for claims no template device can take,"
        f" `{fact['dra_reason']}`"
    ) in DRA
    assert f"With one such group the event reads `{message}`" in DRA
    assert "not the pool, device, selector or capacity that rules the group out" in DRA
    assert "says nothing about why" not in DRA
