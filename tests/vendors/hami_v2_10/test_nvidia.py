"""HAMi v2.10.0 ``pkg/device/nvidia/*_test.go`` (scheduler side) as data, run against ``NvidiaVendor``.

Ported: ``device_test.go`` (Fit, cordon, type checks, NUMA, mutex, topology, requests, registration,
AddResourceUsage, ScoreNode), ``mig_capability_test.go`` and ``mig_topology_test.go`` (through
``add_usage`` and ``fit`` on a MIG-mode device). Private helpers are ported through ``fit``:
``Test_checkType``, ``TestCheckGPUtype_*``, ``TestCheckType_AllocateMode``, ``TestAssertNuma``,
``TestCustomFilterRule_NonMig``, ``TestComputeWorstSingleCard`` / ``TestComputeBestCombination``
(topology-aware Fit with the same pair scores), ``TestCanPlaceMigProfilesA100`` and
``TestSelectMigPlacementUsesBalancedPacking`` (MIG placement through ``fit`` / ``add_usage``).

Not ported (internals the engine does not expose or rules it does not simulate):
- admission and bind time: ``Test_MutateAdmission*``, ``TestMutateAdmission*``,
  ``TestDefaultExclusiveCoreIfNeeded_NilContainer``, ``Test_PatchAnnotations``, ``TestLockNode``,
  ``TestReleaseNodeLock``, ``TestNodeCleanUp``, ``TestNodeDeleted_*`` (scheduler bookkeeping);
- the device plugin: ``Test_FilterDeviceToRegister``, ``Test_InitNvidiaDevice``, ``TestParseConfig``,
  ``calculate_score_test.go`` and ``links_test.go`` (NVML topology scores written to the node),
  ``mig_profiles_test.go`` (the plugin's allow-list and the bind-time MIG allocation annotation);
- ``TestCheckHealth`` (the live handshake: the simulation never reads it);
- ``TestFitQuota`` (11 cases): namespace ResourceQuota, a deliberate departure (the simulation
  ignores ResourceQuota; docs/device-rules.md, "Deliberate differences");
- Go-library helpers: ``TestResourceQuantityAsInt64``, ``TestResourceValue_NilAndEmpty``,
  ``TestResourcePresent_NilAndEmpty``, ``TestGenerateCombinations``, ``TestGetDevicePairScoreMap``.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.annotations import parse_cordon
from hami_sim.engine.model import MigPlacement, MigProfile
from hami_sim.engine.vendors.nvidia import NvidiaConfig, NvidiaVendor
from tests.vendors.harness import (
    EMPTY,
    add_usage,
    cdev,
    fit,
    fit_ids,
    node,
    node_devices,
    request,
    request_of,
    score_node,
    usage,
)

NV = "NVIDIA"
REGISTER = "hami.io/node-nvidia-register"
PAIR_SCORE = "hami.io/node-nvidia-score"
USE_TYPE = "nvidia.com/use-gputype"
NOUSE_TYPE = "nvidia.com/nouse-gputype"
USE_UUID = "nvidia.com/use-gpuuuid"
NOUSE_UUID = "nvidia.com/nouse-gpuuuid"
NUMA_BIND = "nvidia.com/numa-bind"
MODE = "nvidia.com/vgpu-mode"
POLICY = "hami.io/gpu-scheduler-policy"
TOPOLOGY = {POLICY: "topology-aware"}

vendor = NvidiaVendor(NvidiaConfig())


def gpu(id, *, index=0, used=0, count=100, totalmem=1280, usedmem=0, totalcore=100, usedcores=0, **kw):
    return usage(
        id,
        type=kw.pop("type", NV),
        index=index,
        used=used,
        count=count,
        totalmem=totalmem,
        usedmem=usedmem,
        totalcore=totalcore,
        usedcores=usedcores,
        **kw,
    )


# -- Test_GetNodeDevices and friends -------------------------------------------------------------


def test_get_node_devices_exist_gpu_devices():
    """Test_GetNodeDevices/exist gpu devices."""
    raw = '[{"id":"GPU-0","count":5,"devmem":8192,"devcore":100,"type":"NVIDIA-Tesla P4","numa":0,"health":true,"index":0}]'
    [got] = node_devices(vendor, node("node-01", annotations={REGISTER: raw}))
    assert (got.index, got.id, got.devcore, got.health, got.numa, got.type, got.count, got.device_vendor) == (
        0,
        "GPU-0",
        100,
        True,
        0,
        "NVIDIA-Tesla P4",
        5,
        NV,
    )


@pytest.mark.parametrize(
    "annotations",
    [
        pytest.param({REGISTER: "[]"}, id="Test_GetNodeDevices/no gpu devices"),
        pytest.param({}, id="Test_GetNodeDevices/no annotation"),
        pytest.param({REGISTER: "not-valid-json"}, id="TestGetNodeDevices_InvalidJSON"),
        pytest.param(
            {
                REGISTER: '[{"id":"GPU-0","count":1,"devmem":8192,"devcore":100,"type":"V100","health":true}]',
                PAIR_SCORE: "not-valid-json",
            },
            id="TestGetNodeDevices_InvalidPairScores",
        ),
    ],
)
def test_get_node_devices_none(annotations):
    """Go returns an error (or nothing): no NVIDIA devices on the node."""
    assert node_devices(vendor, node("n", annotations=annotations)) == []


def test_get_node_devices_mig_profiles_from_node():
    """TestGetNodeDevices_MigProfilesFromNode: unknown keys (instanceCount...) are ignored."""
    raw = (
        '[{"id":"GPU-0","count":7,"devmem":40960,"devcore":100,"type":"NVIDIA-A100-SXM4-40GB","numa":0,'
        '"health":true,"mode":"mig","migProfiles":[{"name":"1g.5gb","memoryMB":5120,"core":14,"sliceCount":1,'
        '"instanceCount":7,"multiprocessorCount":14,"placements":[{"start":6,"size":1}]}]}]'
    )
    [got] = node_devices(vendor, node("node-mig", annotations={REGISTER: raw}))
    [profile] = got.mig_profiles
    assert (profile.name, profile.placements) == ("1g.5gb", (MigPlacement(6, 1),))


def test_get_node_devices_pair_scores():
    """TestGetNodeDevices_PairScores: the score annotation is read with the devices."""
    raw = (
        '[{"id":"GPU-0","count":1,"devmem":8192,"devcore":100,"type":"NVIDIA-V100","health":true},'
        '{"id":"GPU-1","count":1,"devmem":8192,"devcore":100,"type":"NVIDIA-V100","health":true}]'
    )
    scores = '[{"uuid":"GPU-0","score":{"GPU-1":100}},{"uuid":"GPU-1","score":{"GPU-0":100}}]'
    devices, pairs = vendor.node_devices({REGISTER: raw, PAIR_SCORE: scores}, node("node-topo"))
    assert len(devices) == 2
    assert pairs["GPU-0"]["GPU-1"] == 100


# -- TestDevices_Fit ------------------------------------------------------------------------------

FIT_CASES = [
    pytest.param(
        [gpu("dev-0", totalmem=128), gpu("dev-1", totalmem=128)],
        request(NV, 1, 64, 0, 50),
        {},
        True,
        ["dev-1"],
        "",
        id="TestDevices_Fit/fit success",
    ),
    pytest.param(
        [gpu("dev-0", totalmem=128)],
        request(NV, 1, 512, 0, 50),
        {},
        False,
        [],
        "1/1 CardInsufficientMemory",
        id="TestDevices_Fit/fit fail: memory not enough",
    ),
    pytest.param(
        [gpu("dev-0", totalmem=1024, usedcores=100)],
        request(NV, 1, 512, 0, 50),
        {},
        False,
        [],
        "1/1 CardInsufficientCore",
        id="TestDevices_Fit/fit fail: core not enough",
    ),
    pytest.param(
        [gpu("dev-0", totalmem=128)],
        request("OtherType", 1, 512, 0, 50),
        {},
        False,
        [],
        "1/1 CardTypeMismatch",
        id="TestDevices_Fit/fit fail: type mismatch",
    ),
    pytest.param(
        [gpu("dev-1")],
        request(NV, 2, 512, 0, 50),
        {USE_UUID: "dev-0"},
        False,
        [],
        "1/1 CardUuidMismatch",
        id="TestDevices_Fit/fit fail: user assign use uuid mismatch",
    ),
    pytest.param(
        [gpu("dev-0")],
        request(NV, 2, 512, 0, 50),
        {NOUSE_UUID: "dev-0"},
        False,
        [],
        "1/1 CardUuidMismatch",
        id="TestDevices_Fit/fit fail: user assign no use uuid match",
    ),
    pytest.param(
        [gpu("dev-0", used=100)],
        request(NV, 1, 512, 0, 50),
        {},
        False,
        [],
        "1/1 CardTimeSlicingExhausted",
        id="TestDevices_Fit/fit fail: card overused",
    ),
    pytest.param(
        [gpu("dev-0")],
        request(NV, 1, 512, 0, 120),
        {},
        True,
        ["dev-0"],
        "",
        id="TestDevices_Fit/fit success: but core limit can't exceed 100",
    ),
    pytest.param(
        [gpu("dev-0", used=20)],
        request(NV, 1, 512, 0, 100),
        {},
        False,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
        id="TestDevices_Fit/fit fail:  card exclusively",
    ),
    pytest.param(
        [gpu("dev-0", used=20, usedcores=100)],
        request(NV, 1, 512, 0, 0),
        {},
        False,
        [],
        "1/1 CardComputeUnitsExhausted",
        id="TestDevices_Fit/fit fail:  CardComputeUnitsExhausted",
    ),
    pytest.param(
        [gpu("dev-0", used=20, usedcores=10)],
        request(NV, 2, 512, 0, 20),
        {},
        False,
        [],
        "1/1 AllocatedCardsInsufficientRequest",
        id="TestDevices_Fit/fit fail:  AllocatedCardsInsufficientRequest",
    ),
    pytest.param(
        [gpu("dev-0"), gpu("dev-1", index=1)],
        request(NV, 3, 512, 0, 20),
        {},
        False,
        [],
        "2/2 AllocatedCardsInsufficientRequest",
        id="TestDevices_Fit/fit fail: partial allocation AllocatedCardsInsufficientRequest for multiple cards",
    ),
    pytest.param(
        [gpu("dev-0", used=20, usedcores=10)],
        request(NV, 1, 0, 10, 20),
        {},
        True,
        ["dev-0"],
        "",
        id="TestDevices_Fit/fit success:  memory percentage",
    ),
    pytest.param(
        [gpu("dev-0", used=20, usedcores=10, health=False)],
        request(NV, 1, 0, 10, 20),
        {},
        False,
        [],
        "1/1 CardNotHealth",
        id="TestDevices_Fit/fit fail:  CardNotHealth",
    ),
]


@pytest.mark.parametrize(("devices", "req", "annotations", "ok", "ids", "reason"), FIT_CASES)
def test_fit(devices, req, annotations, ok, ids, reason):
    out = fit(vendor, devices, req, annotations)
    assert (out.ok, out.reason) == (ok, reason)
    if ok:
        assert fit_ids(out) == ids


# -- TestFit_DeviceCordon -------------------------------------------------------------------------


def two_small():
    return [gpu("dev-0", totalmem=128), gpu("dev-1", totalmem=128)]


@pytest.mark.parametrize(
    ("cordon", "used_dev1", "ok", "ids", "reason"),
    [
        pytest.param(
            "dev-1, ",
            False,
            True,
            ["dev-0"],
            "",
            id="TestFit_DeviceCordon/cordoned device is skipped, healthy sibling still fits",
        ),
        pytest.param(
            "dev-0,dev-1",
            False,
            False,
            [],
            "2/2 CardCordoned",
            id="TestFit_DeviceCordon/all devices cordoned fails",
        ),
        pytest.param(
            "dev-1",
            True,
            True,
            ["dev-0"],
            "",
            id="TestFit_DeviceCordon/running pods on a cordoned device are unaffected",
        ),
        pytest.param(
            None, False, True, ["dev-1"], "", id="TestFit_DeviceCordon/no annotation means nothing cordoned"
        ),
    ],
)
def test_fit_device_cordon(cordon, used_dev1, ok, ids, reason):
    devices = two_small()
    if used_dev1:
        devices[1].used, devices[1].usedcores, devices[1].usedmem = 1, 50, 64
    out = fit(vendor, devices, request(NV, 1, 64, 0, 50), cordoned=sorted(parse_cordon(cordon)))
    assert (out.ok, out.reason) == (ok, reason)
    if ok:
        assert fit_ids(out) == ids
    if used_dev1:
        assert devices[1].used == 1


def test_add_resource_usage():
    """TestDevices_AddResourceUsage."""
    dev = usage("dev-0", usedcores=15, usedmem=2000)
    assert add_usage(vendor, dev, cdev("dev-0", usedmem=1024, usedcores=50)) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == (1, 65, 3024)


def test_score_node():
    """TestScoreNode: NVIDIA adds nothing to the node score."""
    assert score_node(vendor, [], [], "") == 0


# -- type, mode, NUMA, mutex (private helpers through Fit) ----------------------------------------


@pytest.mark.parametrize(
    ("annotations", "card_type", "mode", "ok"),
    [
        pytest.param(
            {USE_TYPE: "A10"}, "NVIDIA A100", "", True, id="Test_checkType/use set GPUInUse, device match"
        ),
        pytest.param(
            {USE_TYPE: "A10", NOUSE_TYPE: "A100"},
            "NVIDIA A100",
            "",
            False,
            id="Test_checkType/use set GPUInUse set GPUNoUse, device don't match",
        ),
        pytest.param(
            {USE_TYPE: "A10", NOUSE_TYPE: "A100"},
            "NVIDIA A10",
            "",
            True,
            id="Test_checkType/use set GPUInUse set GPUNoUse, device match",
        ),
        pytest.param({NOUSE_TYPE: "A100"}, "NVIDIA-A100", "", False, id="TestCheckGPUtype_NoUse/A100"),
        pytest.param({NOUSE_TYPE: "A100"}, "NVIDIA-V100", "", True, id="TestCheckGPUtype_NoUse/V100"),
        pytest.param(
            {USE_TYPE: ""}, "NVIDIA-A100", "", True, id="TestCheckGPUtype_EmptyAnnotation/use empty"
        ),
        pytest.param(
            {USE_TYPE: "   "}, "NVIDIA-A100", "", True, id="TestCheckGPUtype_EmptyAnnotation/use blank"
        ),
        pytest.param(
            {NOUSE_TYPE: ""}, "NVIDIA-A100", "", True, id="TestCheckGPUtype_EmptyAnnotation/nouse empty"
        ),
        pytest.param(
            {NOUSE_TYPE: "   "}, "NVIDIA-A100", "", True, id="TestCheckGPUtype_EmptyAnnotation/nouse blank"
        ),
        pytest.param({USE_TYPE: "A100"}, "NVIDIA-V100", "", False, id="TestCheckGPUtype_InUseMismatch"),
        pytest.param({MODE: "mps"}, "NVIDIA-A100", "hami-core", False, id="TestCheckType_AllocateMode/mps"),
        pytest.param(
            {MODE: "hami-core"}, "NVIDIA-A100", "hami-core", True, id="TestCheckType_AllocateMode/hami-core"
        ),
        pytest.param({}, "NVIDIA-A100", "", True, id="TestCustomFilterRule_NonMig"),
    ],
)
def test_check_type(annotations, card_type, mode, ok):
    out = fit(vendor, [gpu("d", type=card_type, mode=mode)], request(NV, 1, 100), annotations)
    assert out.ok is ok
    if not ok:
        assert out.reason == "1/1 CardTypeMismatch"


@pytest.mark.parametrize(
    ("annotations", "enforced"),
    [
        pytest.param({NUMA_BIND: "true"}, True, id="TestAssertNuma/NumaBind=true enforces numa"),
        pytest.param({NUMA_BIND: "false"}, False, id="TestAssertNuma/NumaBind=false does not enforce"),
        pytest.param({NUMA_BIND: "notabool"}, False, id="TestAssertNuma/NumaBind invalid value"),
        pytest.param({}, False, id="TestAssertNuma/NumaBind key absent"),
    ],
)
def test_assert_numa(annotations, enforced):
    """Two cards on different NUMA nodes hold a 2-card request only when NUMA is not enforced."""
    devices = [gpu("a", numa=0, totalmem=8192), gpu("b", index=1, numa=1, totalmem=8192)]
    assert fit(vendor, devices, request(NV, 2, 100), annotations).ok is not enforced


def test_fit_numa_switching():
    """TestFit_NumaSwitching: dev-2 (NUMA 0) is dropped when the walk reaches NUMA 1."""
    devices = [
        gpu("dev-0", count=10, totalmem=8192, numa=1),
        gpu("dev-1", index=1, count=10, totalmem=8192, numa=1),
        gpu("dev-2", index=2, count=10, totalmem=8192, numa=0),
    ]
    out = fit(vendor, devices, request(NV, 2, 100, 0, 10), {NUMA_BIND: "true"})
    assert (out.ok, fit_ids(out)) == (True, ["dev-1", "dev-0"])


@pytest.mark.parametrize(
    ("nums", "ok", "ids"),
    [
        pytest.param(1, True, ["idle"], id="TestFit_MutexPolicy/mutex skips the used device"),
        pytest.param(2, False, [], id="TestFit_MutexPolicy/mutex cannot satisfy 2 cards"),
    ],
)
def test_fit_mutex_policy(nums, ok, ids):
    devices = [gpu("used", used=1, count=10, totalmem=8192), gpu("idle", index=1, count=10, totalmem=8192)]
    out = fit(vendor, devices, request(NV, nums, 100, 0, 10), {POLICY: "mutex"})
    assert out.ok is ok
    if ok:
        assert fit_ids(out) == ids


# -- topology-aware ---------------------------------------------------------------------------------

SCORES = {
    "dev-0": {"dev-1": 100, "dev-2": 200},
    "dev-1": {"dev-0": 100, "dev-2": 150},
    "dev-2": {"dev-0": 200, "dev-1": 150},
}
ZERO = {a: dict.fromkeys(row, 0) for a, row in SCORES.items()}
NEGATIVE = {
    "dev-0": {"dev-1": -5, "dev-2": -3},
    "dev-1": {"dev-0": -5, "dev-2": -1},
    "dev-2": {"dev-0": -3, "dev-1": -1},
}

# Hand-derived (no HAMi test has a card totalling -1): v2.10.0 device.go computeWorstSingleCard marks
# "none yet" with a flag, so a total of -1 is an ordinary lowest total. Fit walks dev-2, dev-1, dev-0.
# MINUS_ONE_MIDDLE totals dev-0 6, dev-1 -1, dev-2 3; MINUS_ONE_FIRST totals 7, 4, -1.
MINUS_ONE_MIDDLE = {
    "dev-0": {"dev-1": 1, "dev-2": 5},
    "dev-1": {"dev-0": 1, "dev-2": -2},
    "dev-2": {"dev-0": 5, "dev-1": -2},
}
MINUS_ONE_FIRST = {
    "dev-0": {"dev-1": 6, "dev-2": 1},
    "dev-1": {"dev-0": 6, "dev-2": -2},
    "dev-2": {"dev-0": 1, "dev-1": -2},
}


def three(n=3):
    return [gpu(f"dev-{i}", index=i, count=10, totalmem=8192) for i in range(n)]


@pytest.mark.parametrize(
    ("devices", "nums", "scores", "want"),
    [
        pytest.param(three(2), 2, {}, {"dev-0", "dev-1"}, id="TestFit_TopologyExactMatch"),
        pytest.param(three(), 1, SCORES, {"dev-1"}, id="TestFit_TopologyWorstSingleCard"),
        pytest.param(three(), 2, SCORES, {"dev-0", "dev-2"}, id="TestFit_TopologyBestCombination"),
        pytest.param(three(), 2, ZERO, None, id="TestFit_TopologyBestCombinationZeroScores"),
        pytest.param(three(), 1, NEGATIVE, {"dev-0"}, id="TestFit_TopologyNegativeScores/SingleGPU"),
        pytest.param(three(), 2, NEGATIVE, {"dev-1", "dev-2"}, id="TestFit_TopologyNegativeScores/MultiGPU"),
        # the private helpers' own tables: gpu totals 300/250/350 -> worst single card gpu1;
        # pairs 100/200/150 -> best pair (gpu0, gpu2)
        pytest.param(three(), 1, SCORES, {"dev-1"}, id="TestComputeWorstSingleCard"),
        pytest.param(three(), 2, SCORES, {"dev-0", "dev-2"}, id="TestComputeBestCombination"),
        pytest.param(three(), 1, MINUS_ONE_MIDDLE, {"dev-1"}, id="single card totalling -1 (hand-derived)"),
        pytest.param(three(), 1, MINUS_ONE_FIRST, {"dev-2"}, id="first card totalling -1 (hand-derived)"),
    ],
)
def test_fit_topology(devices, nums, scores, want):
    out = fit(vendor, devices, request(NV, nums, 100, 0, 10), TOPOLOGY, pair_scores=scores)
    assert out.ok and len(out.devices) == nums
    if want is not None:
        assert set(fit_ids(out)) == want


# -- TestGenerateResourceRequests and friends --------------------------------------------------------

GPU, MEM, PCT, CORES = (
    "nvidia.com/gpu",
    "nvidia.com/gpumem",
    "nvidia.com/gpumem-percentage",
    "nvidia.com/gpucores",
)


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param({GPU: "1"}, {}, (1, NV, 0, 100, 0), id="TestGenerateResourceRequests/gpu count only"),
        pytest.param(
            {GPU: "2", MEM: "4096"},
            {},
            (2, NV, 4096, 101, 0),
            id="TestGenerateResourceRequests/gpu count + explicit memory",
        ),
        pytest.param(
            {GPU: "1", PCT: "50"},
            {},
            (1, NV, 0, 50, 0),
            id="TestGenerateResourceRequests/gpu count + memory percentage",
        ),
        pytest.param(
            {GPU: "1", PCT: "150"},
            {},
            (1, NV, 0, 100, 0),
            id="TestGenerateResourceRequests/percentage above 100 clamped",
        ),
        pytest.param(
            {GPU: "1", PCT: str((1 << 32) + 50)},
            {},
            (1, NV, 0, 100, 0),
            id="TestGenerateResourceRequests/percentage beyond int32 clamped without wrapping",
        ),
        pytest.param(
            {GPU: "1", PCT: "101"},
            {},
            (1, NV, 0, 100, 0),
            id="TestGenerateResourceRequests/percentage 101 clamped",
        ),
        pytest.param(
            {GPU: "1", CORES: "50"},
            {},
            (1, NV, 0, 100, 50),
            id="TestGenerateResourceRequests/gpu count + explicit cores",
        ),
        pytest.param({}, {}, EMPTY, id="TestGenerateResourceRequests/no gpu resource"),
        pytest.param({}, {GPU: "1"}, (1, NV, 0, 100, 0), id="TestGenerateResourceRequests/gpu in Requests"),
        pytest.param(
            {GPU: "1", PCT: "0"},
            {},
            (1, NV, 0, 100, 0),
            id="TestGenerateResourceRequests/percentage 0 treated as unset",
        ),
        pytest.param(
            {},
            {GPU: "1", PCT: "0"},
            (1, NV, 0, 100, 0),
            id="TestGenerateResourceRequests/percentage 0 in Requests",
        ),
        pytest.param(
            {GPU: "1", PCT: "-1"},
            {},
            (1, NV, 0, 100, 0),
            id="TestGenerateResourceRequests/negative percentage unset",
        ),
        pytest.param(
            {GPU: "1", MEM: "2000", PCT: "0"},
            {},
            (1, NV, 2000, 101, 0),
            id="TestGenerateResourceRequests/percentage 0 + explicit memory",
        ),
        pytest.param(
            {GPU: "1", MEM: "16Gi"}, {}, EMPTY, id="TestGenerateResourceRequests/byte-scale memory rejected"
        ),
        pytest.param(
            {GPU: "1", MEM: "16.0Gi"},
            {},
            EMPTY,
            id="TestGenerateResourceRequests/decimal-form memory rejected",
        ),
    ],
)
def test_generate_resource_requests(limits, requests, want):
    assert request_of(vendor, limits, requests) == want


@pytest.mark.parametrize(
    ("config", "limits", "want"),
    [
        pytest.param(
            NvidiaConfig(memory_factor=2),
            {GPU: "1", MEM: "1024"},
            (1, NV, 2048, 101, 0),
            id="TestGenerateResourceRequests_MemoryFactor/1024",
        ),
        pytest.param(
            NvidiaConfig(memory_factor=2),
            {GPU: "1", MEM: "1Gi"},
            EMPTY,
            id="TestGenerateResourceRequests_MemoryFactor/1Gi",
        ),
        pytest.param(
            NvidiaConfig(default_memory=512),
            {GPU: "1"},
            (1, NV, 512, 101, 0),
            id="TestGenerateResourceRequests_DefaultMemory/none",
        ),
        pytest.param(
            NvidiaConfig(default_memory=512),
            {GPU: "1", PCT: "0"},
            (1, NV, 512, 101, 0),
            id="TestGenerateResourceRequests_DefaultMemory/percentage 0",
        ),
        pytest.param(
            NvidiaConfig(default_memory=512),
            {GPU: "1", MEM: "0"},
            (1, NV, 512, 101, 0),
            id="TestGenerateResourceRequests_DefaultMemory/gpumem 0",
        ),
    ],
)
def test_generate_resource_requests_config(config, limits, want):
    assert request_of(NvidiaVendor(config), limits) == want


@pytest.mark.parametrize(
    ("usedmem", "ok"),
    [pytest.param(0, True, id="empty card"), pytest.param(11260, False, id="almost full card")],
)
def test_zero_memory_percentage_is_accounted_as_whole_card(usedmem, ok):
    """TestZeroMemoryPercentageIsAccountedAsWholeCard: percentage 0 books the whole card."""
    req = request_of(vendor, {GPU: "1", PCT: "0"})
    out = fit(vendor, [gpu("dev-0", count=10, totalmem=11264, usedmem=usedmem)], req)
    assert out.ok is ok
    if ok:
        assert out.devices[0].usedmem == 11264
    else:
        assert "CardInsufficientMemory" in out.reason


# -- MIG (mig_capability_test.go, mig_topology_test.go, TestFit_MigPercentage...) ---------------------


def a100_profiles():
    return (
        MigProfile("1g.5gb", 5120, 14, 1, tuple(MigPlacement(i, 1) for i in range(7))),
        MigProfile("2g.10gb", 10240, 28, 2, (MigPlacement(0, 2), MigPlacement(2, 2), MigPlacement(4, 2))),
        MigProfile("3g.20gb", 20480, 42, 3, (MigPlacement(0, 4), MigPlacement(4, 4))),
    )


def mig_gpu(id="GPU-a", *, in_use=(), profiles=None, **kw):
    kw.setdefault("count", 7)
    kw.setdefault("totalmem", 40960)
    dev = gpu(id, mode="mig", **kw)
    dev.mig_profiles = a100_profiles() if profiles is None else profiles
    dev.mig_in_use = [(name, MigPlacement(start, size)) for name, start, size in in_use]
    return dev


THREE_2G = (("2g.10gb", 0, 2), ("2g.10gb", 2, 2), ("2g.10gb", 4, 2))


def test_add_resource_usage_uses_reported_profile_and_placement():
    """TestAddResourceUsageUsesReportedProfileAndPlacement: 10000 MiB -> 2g.10gb at slice 0."""
    dev = mig_gpu()
    picked = cdev("GPU-a", usedmem=10000)
    assert add_usage(vendor, dev, picked) is None
    picked = vendor.placed(dev, picked)  # (frozen: the placed device is a new one)
    assert picked.uuid == "GPU-a"
    assert (picked.usedmem, picked.usedcores, picked.mig_profile, picked.mig_placement) == (
        10240,
        28,
        "2g.10gb",
        MigPlacement(0, 2),
    )


@pytest.mark.parametrize(
    ("memreq", "allocated", "ok"),
    [
        pytest.param(10000, (), False, id="TestCustomFilterUsesReportedPlacementCapacity/fourth 2g"),
        pytest.param(5000, (), True, id="TestCustomFilterUsesReportedPlacementCapacity/1g fits"),
        pytest.param(
            5000, ("GPU-b",), True, id="TestCustomFilterIgnoresQueuedAllocationsForOtherGPUs/other gpu"
        ),
        pytest.param(
            5000, ("GPU-a",), False, id="TestCustomFilterIgnoresQueuedAllocationsForOtherGPUs/this gpu"
        ),
    ],
)
def test_custom_filter_rule(memreq, allocated, ok):
    """CustomFilterRule through Fit: the container's earlier picks on this GPU take placements too."""
    dev = mig_gpu(in_use=THREE_2G, used=3)
    devices = [dev]
    nums = 1
    if allocated:
        # the queued pick is this container's earlier pick: on GPU-a itself (Fit revisits a MIG GPU),
        # or on GPU-b, which the backward walk visits first and which holds one 1g slot only
        if allocated[0] != "GPU-a":
            one_slot = (MigProfile("1g.5gb", 5120, 14, 1, (MigPlacement(0, 1),)),)
            devices = [dev, mig_gpu(allocated[0], index=1, profiles=one_slot)]
        nums = 2
    out = fit(vendor, devices, request(NV, nums, memreq))
    assert out.ok is ok
    if ok and allocated:
        assert fit_ids(out) == ["GPU-b", "GPU-a"]


def test_fit_uses_effective_percentage_memory_for_mig_placement():
    """TestFitUsesEffectivePercentageMemoryForMigPlacement: 25 % of 40960 needs a 2g slot."""
    dev = mig_gpu(in_use=THREE_2G, used=3, usedmem=30720)
    assert not fit(vendor, [dev], request(NV, 1, 0, 25)).ok


def test_fit_mig_percentage_request_rejects_undersized_template():
    """TestFit_MigPercentageRequestRejectsUndersizedTemplate: 50 % of 8192 MiB does not fit a
    1024 MiB profile (the Go test states the profile as a v2.9 geometry; v2.10 reads profiles)."""
    profiles = (MigProfile("1g.5gb", 1024, 14, 1, (MigPlacement(0, 1),)),)
    dev = mig_gpu("dev-0", count=1, totalmem=8192, profiles=profiles)
    assert not fit(vendor, [dev], request(NV, 1, 0, 50, 10)).ok


@pytest.mark.parametrize(
    ("in_use", "memreq", "ok"),
    [
        pytest.param((("3g.20gb", 4, 4),), 10240, True, id="TestCanPlaceMigProfilesA100/remaining 2g"),
        pytest.param(
            (("3g.20gb", 0, 4), ("3g.20gb", 4, 4)),
            5120,
            False,
            id="TestCanPlaceMigProfilesA100/no 1g beside two 3g",
        ),
        pytest.param(THREE_2G, 10240, False, id="TestCanPlaceMigProfilesA100/fourth 2g rejected"),
    ],
)
def test_can_place_mig_profiles(in_use, memreq, ok):
    assert fit(vendor, [mig_gpu(in_use=in_use)], request(NV, 1, memreq)).ok is ok


def test_balanced_packing():
    """TestSelectMigPlacementUsesBalancedPacking and TestCanPlaceMigProfilesA100 (all-balanced
    geometry): 3g, 2g, 1g, 1g land at slices 4, 0, 3, 2."""
    dev = mig_gpu()
    starts = []
    for memory in (20480, 10240, 5120, 5120):
        picked = cdev("GPU-a", usedmem=memory)
        assert add_usage(vendor, dev, picked) is None
        starts.append(vendor.placed(dev, picked).mig_placement.start)
    assert starts == [4, 0, 3, 2]
