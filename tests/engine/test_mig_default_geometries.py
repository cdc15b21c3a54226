"""MIG GPUs under ``HAMI_VERSION`` 2.9 and 2.8 with no geometries configured: the instance a default
HAMi install gives, from the chart's default ``knownMigGeometries`` of that release
(``vendors/nvidia_mig_defaults.py``). A configured list, even an empty one, replaces the default."""

from __future__ import annotations

import pytest

from hami_sim.engine.hami_releases import rule_differences
from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.vendors import default_vendors
from hami_sim.engine.vendors.nvidia import NvidiaConfig
from hami_sim.engine.vendors.nvidia_mig_templates import MigGeometries, MigTemplate, allocated_uuid
from tests.factories import gpu, node, pod

REFUSED = None


def first_instance(release: str, gpu_type: str, devmem: int, gpumem: int, config: NvidiaConfig | None = None):
    """(memory, cores, allocated UUID) of the instance one ``gpumem`` request gets on an empty MIG
    GPU of ``gpu_type``, or ``REFUSED`` with the reason."""
    vendors = tuple(default_vendors(config or NvidiaConfig()))
    sim = Simulator(EngineConfig(vendors=vendors, hami_release=release))
    card = gpu("GPU-a", devmem=devmem, count=7, type=gpu_type, mode="mig")
    state = sim.inventory(node("n", [card])).state("n")
    result = sim.evaluate(sim.pod_context(pod(gpu_count=1, gpumem=gpumem)), "n", state)
    if not result.fits:
        return REFUSED, result.reason
    [[instance]] = result.fit.containers
    return (instance.usedmem, instance.usedcores, allocated_uuid(instance)), ""


# (release, GPU type, its memory, the request's MiB, (instance MiB, cores, UUID) or REFUSED)
CASES = [
    # A100 40GB: the smallest template covering the request, in the chart's order
    ("2.9", "NVIDIA-A100-SXM4-40GB", 40960, 4000, (5120, 14, "GPU-a[0-0]")),
    ("2.9", "NVIDIA-A100-PCIE-40GB", 40960, 15000, (20480, 42, "GPU-a[2-0]")),
    ("2.9", "NVIDIA-A100-SXM4-40GB", 40960, 40000, (40960, 100, "GPU-a[3-0]")),
    ("2.8", "NVIDIA-A100-SXM4-40GB", 40960, 4000, (5120, 14, "GPU-a[0-0]")),
    # A100 80GB: v2.9.0's chart lowered the instances' memory, so 10000 MiB no longer fits a 1g.10gb
    ("2.9", "NVIDIA-A100-SXM4-80GB", 81920, 9000, (9728, 14, "GPU-a[0-0]")),
    ("2.9", "NVIDIA-A100-SXM4-80GB", 81920, 10000, (19968, 28, "GPU-a[1-1]")),
    ("2.8", "NVIDIA-A100-SXM4-80GB", 81920, 10000, (10240, 14, "GPU-a[0-0]")),
    ("2.9", "NVIDIA-A100-80GB-PCIe", 81920, 80000, (80896, 98, "GPU-a[3-0]")),
    ("2.8", "NVIDIA-A100-80GB-PCIe", 81920, 80000, (80896, 100, "GPU-a[3-0]")),
    # H100 80GB and 94GB, H200, B200
    ("2.9", "NVIDIA-H100-SXM5-80GB", 81920, 30000, (40960, 42, "GPU-a[2-0]")),
    ("2.8", "NVIDIA-H100-PCIE-80GB", 81920, 10240, (10240, 14, "GPU-a[0-0]")),
    ("2.9", "NVIDIA-H100-SXM5-94GB", 96256, 20000, (24576, 28, "GPU-a[1-1]")),
    # an H200's type contains "H20", whose entry comes first: it takes the H20's templates, as HAMi does
    ("2.9", "NVIDIA-H200-SXM5", 144384, 20000, (24576, 28, "GPU-a[1-1]")),
    ("2.9", "NVIDIA-H200-SXM5", 144384, 100000, REFUSED),
    ("2.9", "NVIDIA-B200", 184320, 20000, (23552, 14, "GPU-a[0-0]")),
    # A30: four, two or one instance
    ("2.9", "NVIDIA-A30", 24576, 8000, (12288, 50, "GPU-a[1-0]")),
    # a model no default entry names: no instance
    ("2.9", "NVIDIA-L40S", 46068, 4000, REFUSED),
    # larger than every template of the model: no instance
    ("2.9", "NVIDIA-A100-SXM4-80GB", 81920, 81000, REFUSED),
]


@pytest.mark.parametrize(("release", "gpu_type", "devmem", "gpumem", "expected"), CASES)
def test_a_default_install_gives_the_charts_instance(release, gpu_type, devmem, gpumem, expected):
    got, reason = first_instance(release, gpu_type, devmem, gpumem)
    assert got == expected
    if expected is REFUSED:
        assert "CardNotFoundCustomFilterRule" in reason


def test_configured_geometries_replace_the_default_even_when_empty():
    """The setting wins: an empty list knows no model; a list of its own gives its own template."""
    none_known = NvidiaConfig(known_mig_geometries=())
    got, reason = first_instance("2.9", "NVIDIA-A100-SXM4-40GB", 40960, 4000, none_known)
    assert got is REFUSED and "CardNotFoundCustomFilterRule" in reason
    own = MigGeometries(("A100",), ((MigTemplate("2g.10gb", 10240, 28, 3),),))
    got, _ = first_instance(
        "2.9", "NVIDIA-A100-SXM4-40GB", 40960, 4000, NvidiaConfig(known_mig_geometries=(own,))
    )
    assert got == (10240, 28, "GPU-a[0-0]")


def test_the_a100_80gb_default_is_a_rule_change_between_2_8_and_2_9():
    [change] = [c for c in rule_differences("2.8", "2.9") if c.name == "mig_default_geometries"]
    assert change.pr == 1847 and "9728" in change.description
    assert "mig_default_geometries" not in {c.name for c in rule_differences("2.9", "2.10")}
