"""HAMi v2.9.0 ``pkg/device/nvidia/device_test.go`` (scheduler side) as data, under the v2.9 rules.

Ported: ``TestDevices_Fit`` (the sliced vendors' twelve cases, ``tests/vendors/sliced_fit.py``, plus
its unhealthy-card case), ``TestGenerateResourceRequests`` and its ``_MemoryFactor`` and
``_DefaultMemory`` variants, ``TestCheckGPUtype_InUseMismatch`` (through Fit),
``TestFit_NumaSwitching`` and the three ``TestFit_Topology*`` tests.

Not ported: admission, bind and device-plugin tests (``Test_MutateAdmission*``,
``Test_PatchAnnotations``, ``TestLockNode``, ``TestReleaseNodeLock``, ``TestNodeCleanUp``,
``Test_FilterDeviceToRegister``, ``Test_InitNvidiaDevice``, ``TestParseConfig``, ``TestCheckHealth``),
``TestFitQuota`` (the simulation ignores ResourceQuota) and Go-library helpers. The MIG tests
(``TestMigNeedsReset``, ``TestCustomFilterRule_Mig*``, ``TestAddResourceUsage_MigNonReset*``,
``TestGetNodeDevices_MigTemplate``, ``TestDevices_AddResourceUsage``) are ``test_nvidia_mig.py``'s.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.nvidia import NvidiaConfig, NvidiaVendor
from tests.vendors.harness import fit_ids, for_release, request, usage
from tests.vendors.sliced_fit import V2_9_NAMES, sliced_fit_cases

h = for_release("2.9")
GO = "pkg/device/nvidia/device_test.go"
NV = "NVIDIA"
vendor = NvidiaVendor(NvidiaConfig())
POLICY = "hami.io/gpu-scheduler-policy"


def case(test: str, name: str = "") -> str:
    return f"{GO}::{test}/{name}" if name else f"{GO}::{test}"


FIT_CASES = [
    *sliced_fit_cases(
        "TestDevices_Fit", NV, "nvidia.com/use-gpuuuid", "nvidia.com/nouse-gpuuuid", names=V2_9_NAMES, go_file=GO
    ),
    pytest.param(
        [usage("dev-0", type=NV, count=100, totalmem=1280, totalcore=100, used=20, usedcores=10, health=False)],
        request(NV, 1, 0, 10, 20), {}, False, 0, [], "1/1 CardNotHealth",
        id=case("TestDevices_Fit", "fit fail:  CardNotHealth"),
    ),
]  # fmt: skip


@pytest.mark.parametrize(("devices", "request_", "annotations", "fits", "length", "ids", "reason"), FIT_CASES)
def test_devices_fit(devices, request_, annotations, fits, length, ids, reason):
    outcome = h.fit(vendor, devices, request_, annotations)
    assert outcome.ok is fits
    if fits:
        assert len(outcome.devices) == length and fit_ids(outcome) == ids
    assert outcome.reason == reason


@pytest.mark.parametrize(
    ("config", "limits", "requests", "expected"),
    [
        pytest.param({}, {"nvidia.com/gpu": "1"}, {}, (1, NV, 0, 100, 0),
                     id=case("TestGenerateResourceRequests", "gpu count only — defaults to 100% memory")),
        pytest.param({}, {"nvidia.com/gpu": "2", "nvidia.com/gpumem": "4096"}, {}, (2, NV, 4096, 101, 0),
                     id=case("TestGenerateResourceRequests", "gpu count + explicit memory")),
        pytest.param({}, {"nvidia.com/gpu": "1", "nvidia.com/gpumem-percentage": "50"}, {}, (1, NV, 0, 50, 0),
                     id=case("TestGenerateResourceRequests", "gpu count + memory percentage")),
        pytest.param({}, {"nvidia.com/gpu": "1", "nvidia.com/gpucores": "50"}, {}, (1, NV, 0, 100, 50),
                     id=case("TestGenerateResourceRequests", "gpu count + explicit cores")),
        pytest.param({}, {}, {}, (0, "", 0, 0, 0),
                     id=case("TestGenerateResourceRequests", "no gpu resource — returns empty request")),
        pytest.param({}, {}, {"nvidia.com/gpu": "1"}, (1, NV, 0, 100, 0),
                     id=case("TestGenerateResourceRequests", "gpu in Requests (not Limits) — falls back to Requests")),
        pytest.param({"memory_factor": 2}, {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1024"}, {}, (1, NV, 2048, 101, 0),
                     id=case("TestGenerateResourceRequests_MemoryFactor")),
        pytest.param({"default_memory": 512}, {"nvidia.com/gpu": "1"}, {}, (1, NV, 512, 101, 0),
                     id=case("TestGenerateResourceRequests_DefaultMemory")),
    ],
)  # fmt: skip
def test_generate_resource_requests(config, limits, requests, expected):
    assert h.request_of(NvidiaVendor(NvidiaConfig(**config)), limits, requests) == expected


def test_check_gpu_type_in_use_mismatch():
    """``TestCheckGPUtype_InUseMismatch``: use-gputype A100 does not take an NVIDIA-V100."""
    outcome = h.fit(vendor, [usage("g", type="NVIDIA-V100", count=10, totalmem=8192, totalcore=100)],
                    request(NV, 1, 100), {"nvidia.com/use-gputype": "A100"})  # fmt: skip
    assert outcome.reason == "1/1 CardTypeMismatch"


def gpus(*numas):
    return [usage(f"dev-{i}", index=i, type=NV, count=10, totalmem=8192, totalcore=100, numa=n)
            for i, n in enumerate(numas)]  # fmt: skip


def test_fit_numa_switching():
    """``TestFit_NumaSwitching``: walked from the end, dev-2 (NUMA 0) is dropped at the switch."""
    outcome = h.fit(vendor, gpus(1, 1, 0), request(NV, 2, 100, 0, 10), {"nvidia.com/numa-bind": "true"})
    assert outcome.ok and fit_ids(outcome) == ["dev-1", "dev-0"]


PAIRS = {"dev-0": {"dev-1": 100, "dev-2": 200}, "dev-1": {"dev-0": 100, "dev-2": 150},
         "dev-2": {"dev-0": 200, "dev-1": 150}}  # fmt: skip


@pytest.mark.parametrize(
    ("devices", "nums", "pairs", "chosen"),
    [
        pytest.param(2, 2, {}, {"dev-0", "dev-1"}, id=case("TestFit_TopologyExactMatch")),
        pytest.param(3, 1, PAIRS, {"dev-1"}, id=case("TestFit_TopologyWorstSingleCard")),
        pytest.param(3, 2, PAIRS, {"dev-0", "dev-2"}, id=case("TestFit_TopologyBestCombination")),
    ],
)
def test_fit_topology(devices, nums, pairs, chosen):
    outcome = h.fit(vendor, gpus(*[0] * devices), request(NV, nums, 100, 0, 10), {POLICY: "topology-aware"},
                    pair_scores=pairs)  # fmt: skip
    assert outcome.ok and set(fit_ids(outcome)) == chosen
