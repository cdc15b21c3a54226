"""Live usage of MIG GPUs under v2.8.3/v2.9.0 (``HAMI_VERSION`` 2.8 or 2.9): an allocated MIG
instance is the GPU's UUID with a ``[geometry-position]`` suffix in the pod's allocation annotation
(``pkg/scheduler/scheduler.go`` getNodesUsage at those tags). The suffix names the GPU (the text
before ``[``) and the slot it takes; the next Fit on that GPU follows the geometry the suffix names."""

from __future__ import annotations

import pytest

from hami_sim.engine.allocations import apply_usage, node_usage, pod_allocation
from hami_sim.engine.hami_releases import rules_for
from hami_sim.engine.model import MigPlacement
from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.vendors import allocated_annotations, default_vendors
from hami_sim.engine.vendors.nvidia import NvidiaConfig
from hami_sim.engine.vendors.nvidia_mig_templates import MigGeometries, MigTemplate, allocated_uuid
from tests.factories import gpu, node, pod

SUPPORT_DEVICES = allocated_annotations()
NV = "hami.io/vgpu-devices-allocated"
MIG_ALLOCATIONS = "hami.io/vgpu-mig-allocations"
V2_9 = rules_for("2.9")


def held(allocation: str, name: str = "p", **annotations: str):
    meta = {
        "name": name,
        "namespace": "ml",
        "annotations": {"hami.io/vgpu-node": "n", NV: allocation, **annotations},
    }
    return pod_allocation({"metadata": meta, "status": {"phase": "Running"}}, SUPPORT_DEVICES)


@pytest.mark.parametrize(
    ("release", "mode", "allocation", "counted", "marks", "unhealthy", "unknown"),
    [
        # the suffix names the GPU and slot 1 of geometry 1
        (
            "2.9",
            "mig",
            "g0[1-1],NVIDIA,10240,50:;",
            (1, 10240, 50),
            [("[1-1]", MigPlacement(1, 1))],
            False,
            [],
        ),
        ("2.8", "mig", "g0[0-3],NVIDIA,5120,14:;", (1, 5120, 14), [("[0-3]", MigPlacement(3, 1))], False, []),
        # a MIG instance on a hami-core GPU: counted, and the GPU goes unhealthy
        ("2.9", "hami-core", "g0[1-1],NVIDIA,10240,50:;", (1, 10240, 50), [], True, []),
        # a suffix HAMi cannot read: counted on the GPU, no slot marked (v2.9.0 would crash on it)
        ("2.9", "mig", "g0[x-1],NVIDIA,10240,50:;", (1, 10240, 50), [], False, []),
        # a whole MIG GPU without a suffix: counted, no slot (v2.9.0 asks no reservation of it)
        ("2.9", "mig", "g0,NVIDIA,40960,100:;", (1, 40960, 100), [], False, []),
        # v2.10.0 reads no suffix: the UUID names no registered GPU
        ("2.10", "mig", "g0[1-1],NVIDIA,10240,50:;", (0, 0, 0), [], False, [("ml/p", "g0[1-1]")]),
    ],
)
def test_a_suffixed_uuid_counts_on_its_gpu_and_marks_its_slot(
    release, mode, allocation, counted, marks, unhealthy, unknown
):
    usage = node_usage({"g0": mode}, [held(allocation)], rules_for(release))
    use = usage.devices["g0"]
    assert (use.used, use.usedmem, use.usedcores) == counted
    assert use.mig == marks and use.unhealthy is unhealthy and usage.unknown == unknown
    # a suffix that marks nothing (unreadable, or on a hami-core GPU) is a finding
    assert bool(usage.problems) is ("[" in allocation and not marks and release != "2.10")


def test_v2_9_reads_no_mig_allocations_annotation():
    """``hami.io/vgpu-mig-allocations`` came with v2.10.0: before it, no reservation is read from it
    (and a MIG GPU holding a pod without one stays healthy)."""
    reservation = '[{"gpuUUID":"g0","profile":"1g.10gb","placement":{"start":6,"size":1}}]'
    usage = node_usage({"g0": "mig"}, [held("g0,NVIDIA,10240,14:;", **{MIG_ALLOCATIONS: reservation})], V2_9)
    assert usage.devices["g0"].mig == [] and not usage.devices["g0"].unhealthy


A100 = MigGeometries(
    ("A100-SXM4-40GB",),
    (
        (MigTemplate("1g.5gb", 5120, 14, 7),),
        (MigTemplate("1g.5gb", 5120, 14, 1), MigTemplate("2g.10gb", 10240, 28, 3)),
        (MigTemplate("3g.20gb", 20480, 42, 2),),
        (MigTemplate("7g.40gb", 40960, 100, 1),),
    ),
)


@pytest.mark.parametrize("release", ["2.8", "2.9"])
def test_the_next_instance_follows_the_geometry_a_live_suffix_names(release):
    """One A100 in MIG mode. Empty, a 4000 MiB instance takes a 1g.5gb slot of the first geometry.
    Holding ``[2-0]`` (geometry 2: two 3g.20gb slots, the first taken), the same instance takes the
    free 3g.20gb slot, and a third one finds no slot (CardNotFoundCustomFilterRule)."""
    vendors = tuple(default_vendors(NvidiaConfig(known_mig_geometries=(A100,))))
    sim = Simulator(EngineConfig(vendors=vendors, hami_release=release))
    card = gpu("GPU-a", devmem=40960, count=7, type="NVIDIA-A100-SXM4-40GB", mode="mig")
    state = sim.inventory(node("n", [card])).state("n")
    ctx = sim.pod_context(pod(gpu_count=1, gpumem=4000))

    empty = sim.evaluate(ctx, "n", state).fit
    assert empty is not None and empty.ok
    [[instance]] = empty.containers
    assert (instance.usedmem, allocated_uuid(instance)) == (5120, "GPU-a[0-0]")

    def live(*allocations: str):
        pods = [held(a, name=f"p{i}") for i, a in enumerate(allocations)]
        return apply_usage(state, node_usage({"GPU-a": "mig"}, pods, rules_for(release)).devices)

    one = sim.evaluate(ctx, "n", live("GPU-a[2-0],NVIDIA,20480,42:;")).fit
    assert one is not None and one.ok
    [[instance]] = one.containers
    assert (instance.usedmem, instance.usedcores, allocated_uuid(instance)) == (20480, 42, "GPU-a[2-1]")

    full = sim.evaluate(ctx, "n", live("GPU-a[2-0],NVIDIA,20480,42:;", "GPU-a[2-1],NVIDIA,10000,42:;"))
    assert not full.fits and "CardNotFoundCustomFilterRule" in full.reason

    # a suffix naming a geometry or a slot the GPU lacks marks nothing: as on an empty GPU
    for stale in ("GPU-a[9-0],NVIDIA,5120,14:;", "GPU-a[2-5],NVIDIA,5120,14:;"):
        again = sim.evaluate(ctx, "n", live(stale)).fit
        assert again is not None and again.ok
        assert allocated_uuid(again.containers[0][0]) == "GPU-a[0-0]"


def test_known_mig_geometries_are_read_from_the_nvidia_settings_block():
    """``HAMI["NVIDIA"]["knownMigGeometries"]`` (``HAMI_NVIDIA_KNOWN_MIG_GEOMETRIES``) as the chart
    writes it; absent, not configured (None: the release's chart default applies), and an empty
    list is a list: no geometry (every MIG instance is refused under 2.9 and 2.8)."""
    from hami_sim.engine.vendors.nvidia import config_from_settings

    block = {"resourceCountName": "nvidia.com/gpu", "resourceMemoryName": "m", "resourceMemoryPercentageName": "p",
             "resourceCoreName": "c", "defaultMemory": 0, "defaultCores": 0, "memoryFactor": 1}  # fmt: skip
    assert config_from_settings(block).known_mig_geometries is None
    assert config_from_settings({**block, "knownMigGeometries": []}).known_mig_geometries == ()
    entry = {"models": ["A100-SXM4-40GB"], "allowedGeometries": [[{"name": "3g.20gb", "memory": 20480,
                                                                   "core": 42, "count": 2}]]}  # fmt: skip
    config = config_from_settings({**block, "knownMigGeometries": [entry]})
    assert config.known_mig_geometries == (
        MigGeometries(("A100-SXM4-40GB",), ((MigTemplate("3g.20gb", 20480, 42, 2),),)),
    )
    with pytest.raises(ValueError):
        config_from_settings({**block, "knownMigGeometries": {"models": []}})
