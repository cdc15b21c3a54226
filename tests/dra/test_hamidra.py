"""HAMi on DRA: the claims HAMi-DRA's webhook makes, and the verdicts on profile and CA template slices."""

from __future__ import annotations

import pytest

from hami_sim.engine.dra.explain import judge
from hami_sim.engine.dra.hamidra import (
    HAMI_DRA_CLASS,
    HAMI_DRA_DRIVER,
    GpuSpec,
    claim_objects_of_pod,
    claims_of_pod,
    clusterapi_slice,
    hami_dra_class,
    profile_slice,
)
from hami_sim.engine.dra.objects import parse_slice

pytestmark = pytest.mark.engine

MIB = 1024 * 1024
TYPE_SELECTOR = f'device.attributes["{HAMI_DRA_DRIVER}"].type == "hami-gpu"'


def pod(*containers: dict, annotations: dict | None = None) -> dict:
    return {
        "metadata": {"name": "train", "namespace": "ml", "annotations": annotations or {}},
        "spec": {"containers": list(containers)},
    }


def container(name: str, **limits: str) -> dict:
    names = {
        "gpu": "nvidia.com/gpu",
        "gpumem": "nvidia.com/gpumem",
        "gpucores": "nvidia.com/gpucores",
        "cpu": "cpu",
    }
    return {"name": name, "resources": {"limits": {names[k]: v for k, v in limits.items()}}}


WEBHOOK_CASES = [
    # (case, pod, expected: [(claim name, count, selectors, capacity requests)])
    ("no GPU asks no claim", pod(container("main", cpu="1")), []),
    (
        "count, memory in bytes, cores as written",
        pod(container("main", gpu="1", gpumem="8000", gpucores="30")),
        [("ml-train-main", 1, [TYPE_SELECTOR], {"memory": str(8000 * MIB), "cores": "30"})],
    ),
    (
        "count alone: an empty capacity request",
        pod(container("main", gpu="2")),
        [("ml-train-main", 2, [TYPE_SELECTOR], {})],
    ),
    (
        "one claim per GPU container",
        pod(container("a", gpu="1"), container("b", cpu="1"), container("c", gpu="1", gpumem="1000")),
        [
            ("ml-train-a", 1, [TYPE_SELECTOR], {}),
            ("ml-train-c", 1, [TYPE_SELECTOR], {"memory": str(1000 * MIB)}),
        ],
    ),
    (
        "use-gpuuuid and use-gputype become selectors",
        pod(
            container("main", gpu="1"),
            annotations={"nvidia.com/use-gpuuuid": "GPU-1", "nvidia.com/use-gputype": "A100"},
        ),
        [
            (
                "ml-train-main",
                1,
                [
                    TYPE_SELECTOR,
                    f'device.attributes["{HAMI_DRA_DRIVER}"].uuid == "GPU-1"',
                    f'device.attributes["{HAMI_DRA_DRIVER}"].productName == "A100"',
                ],
                {},
            )
        ],
    ),
]


@pytest.mark.parametrize(("case", "the_pod", "expected"), WEBHOOK_CASES, ids=[c[0] for c in WEBHOOK_CASES])
def test_claims_as_hami_dra_makes_them(case: str, the_pod: dict, expected: list) -> None:
    got = []
    for claim in claim_objects_of_pod(the_pod):
        (request,) = claim["spec"]["devices"]["requests"]
        exactly = request["exactly"]
        assert request["name"] == "gpu" and exactly["deviceClassName"] == HAMI_DRA_CLASS
        assert exactly["allocationMode"] == "ExactCount"
        selectors = [s["cel"]["expression"] for s in exactly["selectors"]]
        got.append((claim["metadata"]["name"], exactly["count"], selectors, exactly["capacity"]["requests"]))
    assert got == expected


A10 = GpuSpec("NVIDIA A10", 23028)
H100 = GpuSpec("NVIDIA H100", 81559)
NODE = {"metadata": {"name": "gpu-a10-1", "labels": {}}}
CLASSES = {HAMI_DRA_CLASS: hami_dra_class()}


def _verdict(the_pod: dict, slices: list[dict]):
    return judge(NODE, claims_of_pod(the_pod), CLASSES, [parse_slice(s) for s in slices])


def test_a_pod_fits_a_profile_slice_with_its_share_of_memory_and_cores() -> None:
    verdict = _verdict(
        pod(container("main", gpu="1", gpumem="8000", gpucores="30")),
        [profile_slice("gpu-a10-1", [A10, A10])],
    )
    assert verdict.fits
    ((placement,),) = verdict.placements
    assert (placement.device, dict(placement.consumed or {})) == (
        "gpu-0",
        {"memory": 8000 * MIB, "cores": 30},
    )


def test_two_pods_share_one_gpu_until_its_memory_runs_out() -> None:
    slices = [profile_slice("gpu-a10-1", [A10])]
    claims = claims_of_pod(
        pod(container("a", gpu="1", gpumem="12000"), container("b", gpu="1", gpumem="12000"))
    )
    verdict = judge(NODE, claims, CLASSES, [parse_slice(s) for s in slices])
    assert not verdict.fits
    reasons = {r.device: r.reason for r in verdict.reasons if r.claim == "ml-train-b"}
    assert reasons == {f"{HAMI_DRA_DRIVER}/gpu-a10-1/gpu-0": "memory: asks 12000Mi, 11028Mi of 23028Mi free"}


def test_a_pod_too_big_for_every_card_is_told_why_per_device() -> None:
    verdict = _verdict(
        pod(container("main", gpu="1", gpumem="40000")), [profile_slice("gpu-a10-1", [A10, A10])]
    )
    assert not verdict.fits
    assert [r.device.rsplit("/", 1)[1] for r in verdict.reasons] == ["gpu-0", "gpu-1"]
    assert all(r.reason.startswith("memory: asks 40000Mi") for r in verdict.reasons)


def test_a_uuid_pinned_pod_fits_only_its_card() -> None:
    the_pod = pod(container("main", gpu="1"), annotations={"nvidia.com/use-gpuuuid": "gpu-a10-1-gpu-1"})
    verdict = _verdict(the_pod, [profile_slice("gpu-a10-1", [A10, A10])])
    assert verdict.fits and verdict.placements[0][0].device == "gpu-1"


def test_clusterapi_template_slices_can_never_hold_a_hami_dra_pod() -> None:
    """CA's clusterapi template: devices of type "gpu" without capacity, in a pool of no declared
    slices. One slice against none declared is an incomplete pool to the allocator
    (``pools_stable.go`` ``GatherPools``), which it skips before it reads a selector, so that reason
    comes first; the selector and the missing capacity would rule the devices out as well."""
    template = clusterapi_slice("gpu-a10-1", HAMI_DRA_DRIVER, 2)
    assert template is not None
    verdict = _verdict(pod(container("main", gpu="1", gpumem="1000")), [template])
    assert not verdict.fits
    for reason in verdict.reasons:
        assert reason.reason.startswith("its pool is incomplete")
        assert 'selector is false: device.driver == "hami-core-gpu.project-hami.io"' in reason.reason
        assert "publishes no capacity 'memory'" in reason.reason


def test_clusterapi_builds_no_slice_without_driver_or_gpus() -> None:
    assert clusterapi_slice("n", "", 2) is None
    assert clusterapi_slice("n", HAMI_DRA_DRIVER, 0) is None


def test_an_h100_only_pod_is_refused_by_its_product_selector() -> None:
    the_pod = pod(container("main", gpu="1"), annotations={"nvidia.com/use-gputype": "NVIDIA H100"})
    verdict = _verdict(the_pod, [profile_slice("gpu-a10-1", [A10])])
    assert not verdict.fits
    assert "request selector is false" in verdict.reasons[0].reason
    assert _verdict(the_pod, [profile_slice("gpu-a10-1", [H100])]).fits
