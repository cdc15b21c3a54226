"""HAMi v2.10.0 ``pkg/scheduler/score_test.go`` (the NVIDIA cases) as data, run through the engine's
``fit_pod`` / ``fit_in_devices`` (HAMi's ``calcScore`` / ``fitInDevices``).

The two Kunlun cases of ``Test_calcScore`` ("... use one device for kunlun.", "two node eight
device ... for kunlun.") belong to the Kunlun module. ``TestMain`` configures NVIDIA with
``hami.io/gpu``-style names; the tables hand requests over directly, so the names do not matter.

Go's ``Fit`` also hands back the devices it collected before failing (``Test_fitInCertainDevice``
"mode is mig", "numa not fit"); ``fitInDevices`` drops them and the engine does not expose them, so
those cases compare the verdict and the reason counts only. ``calcScore``'s node score is the
engine's ``score_before`` (``ComputeDefaultScore`` over the usage before the pod, plus the vendors'
``OverrideScore``, 0 for NVIDIA).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.model import DeviceUsage, MigPlacement, MigProfile
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.vendors.base import FitOutcome, NodeReads, Vendor
from hami_sim.engine.vendors.nvidia import NvidiaVendor
from tests.vendors.harness import calc_score, cdev, fit, fit_ids, fit_in_devices, usage

NV = "NVIDIA"
POLICY = "hami.io/gpu-scheduler-policy"
WEIGHTS = "hami.io/device-scoring-weights"
VENDORS = [NvidiaVendor()]
nvidia = VENDORS[0]


def g(id, *, index=0, used=0, usedmem=0, usedcores=0, totalmem=8000, count=10, totalcore=100):
    """A ``Test_calcScore`` device: 10 slots, 8000 MiB, 100 cores unless stated."""
    return usage(
        id,
        type=NV,
        index=index,
        count=count,
        used=used,
        totalmem=totalmem,
        usedmem=usedmem,
        totalcore=totalcore,
        usedcores=usedcores,
    )


def r(nums, mem, cores, pct=0):
    return {NV: (nums, NV, mem, pct, cores)}


NONE: dict = {}
HALF = {"used": 5, "usedmem": 4000, "usedcores": 50}


def chosen(*items):
    """One container's devices: ``(uuid, usedmem, usedcores)`` or ``(uuid, usedmem, usedcores, idx)``."""
    return [item if len(item) == 4 else (*item, 0) for item in items]


C1 = chosen(("uuid1", 1000, 30))
C2 = chosen(("uuid2", 1000, 30))

# name, nodes {node: (devices, GPU policy)}, containers (init first), init count,
# want {node: (per-container devices, score)} or {node: reason}
CALC_SCORE = [
    (
        "one node one device one pod one container use one device.",
        {"node1": ([g("uuid1")], "spread")},
        [r(1, 1000, 30)],
        0,
        {"node1": ([C1], 0)},
    ),
    (
        "one node one device one pod one container use one device,but this device before having use.",
        {"node1": ([g("uuid1", **HALF)], "spread")},
        [r(1, 1000, 30)],
        0,
        {"node1": ([C1], 15)},
    ),
    (
        "one node two device one pod one container use one device",
        {"node1": ([g("uuid1"), g("uuid2")], "spread")},
        [r(1, 1000, 30)],
        0,
        {"node1": ([C2], 0)},
    ),
    (
        "init container requests more memory than any single device has (should filter node)",
        {"node1": ([g("uuid1", usedmem=7500), g("uuid2", index=1, usedmem=7500)], "binpack")},
        [r(1, 4000, 30), r(1, 100, 30)],
        1,
        {"node1": "2/2 CardInsufficientMemory"},
    ),
    (
        "one node two device one pod one container use one device,but having use 50%",
        {"node1": ([g("uuid1"), g("uuid2", **HALF)], "spread")},
        [r(1, 1000, 30)],
        0,
        {"node1": ([C1], 7.5)},
    ),
    (
        "one node two device one pod one container use two device",
        {"node1": ([g("uuid1"), g("uuid2")], "spread")},
        [r(2, 1000, 30)],
        0,
        {"node1": ([chosen(("uuid2", 1000, 30), ("uuid1", 1000, 30))], 0)},
    ),
    (
        "one node two device one pod one container use two device,but this two device before having use.",
        {"node1": ([g("uuid1", **HALF), g("uuid2", **HALF)], "spread")},
        [r(2, 1000, 30)],
        0,
        {"node1": ([chosen(("uuid2", 1000, 30), ("uuid1", 1000, 30))], 15)},
    ),
    (
        "two node per node having one device one pod one container use one device",
        {"node1": ([g("uuid1")], "spread"), "node2": ([g("uuid2")], "spread")},
        [r(1, 1000, 30)],
        0,
        {"node1": ([C1], 0), "node2": ([C2], 0)},
    ),
    (
        "two node per node having one device one pod one container use one device,one device having use 50%",
        {"node1": ([g("uuid1", **HALF)], "spread"), "node2": ([g("uuid2")], "spread")},
        [r(1, 1000, 30)],
        0,
        {"node1": ([C1], 15), "node2": ([C2], 0)},
    ),
    (
        "one node two device one pod two container use two device",
        {"node1": ([g("uuid1")], "binpack")},
        [r(1, 1000, 30, 101), NONE],
        0,
        {"node1": ([C1, []], 0)},
    ),
    (
        "one node one device one pod two container, the second container use device",
        {"node1": ([g("uuid1")], "binpack")},
        [NONE, r(1, 1000, 30, 101)],
        0,
        {"node1": ([[], C1], 0)},
    ),
    (
        "one node one device one pod with three containers, middle container uses one device.",
        {"node1": ([g("uuid1")], "spread")},
        [NONE, r(1, 1000, 30, 101), NONE],
        0,
        {"node1": ([[], C1, []], 0)},
    ),
    (
        "one node two device one pod two containers use two device with spread,should not in same device.",
        {"node1": ([g("uuid1"), g("uuid2", index=1)], "spread")},
        [r(1, 8000, 30), r(1, 1000, 30)],
        0,
        {"node1": ([chosen(("uuid2", 8000, 30, 1)), C1], 0)},
    ),
    (
        "one node one device one pod one container use one device and not enough resource,node should be failed.",
        {"node1": ([g("uuid1", totalmem=50)], "spread")},
        [r(1, 1000, 30)],
        0,
        {"node1": "1/1 CardInsufficientMemory"},
    ),
    (
        "race condition test for failedNodes map with two nodes failing",
        {"node1": ([g("uuid1", totalmem=50)], "spread"), "node2": ([g("uuid2", totalmem=50)], "spread")},
        [r(1, 1000, 30)],
        0,
        {"node1": "1/1 CardInsufficientMemory", "node2": "1/1 CardInsufficientMemory"},
    ),
    (
        "two init containers, first has no device request, second does - tests slot alignment (issue #1667)",
        {"node1": ([g("uuid1")], "binpack")},
        [NONE, r(1, 1000, 30), r(1, 1000, 30)],
        2,
        {"node1": ([[], C1, C1], 0)},
    ),
    (
        "one node two devices, pod has one init container (uses 1 device) and one regular container "
        "(uses 1 device) - tests InitContainer capacity reset",
        {"node1": ([g("uuid1"), g("uuid2")], "binpack")},
        [r(1, 1000, 30), r(1, 1000, 30)],
        1,
        {"node1": ([C2, C2], 0)},
    ),
    (
        "init container requests MORE than app container - needsInitClone=true path",
        {"node1": ([g("uuid1"), g("uuid2")], "binpack")},
        [r(2, 1000, 30), r(1, 1000, 30)],
        1,
        {"node1": ([chosen(("uuid2", 1000, 30), ("uuid1", 1000, 30)), C2], 0)},
    ),
    (
        "init container requests more cores than any single device has (should filter node)",
        {"node1": ([g("uuid1", usedcores=80), g("uuid2", index=1, usedcores=80)], "binpack")},
        [r(1, 1000, 30), r(1, 1000, 10)],
        1,
        {"node1": "2/2 CardInsufficientCore"},
    ),
    (
        "two node per node having one device one pod two container use one device",
        {"node1": ([g("uuid1")], "spread"), "node2": ([g("uuid2")], "spread")},
        [r(1, 1000, 30), r(1, 1000, 40)],
        0,
        {
            "node1": ([C1, chosen(("uuid1", 1000, 40))], 0),
            "node2": ([C2, chosen(("uuid2", 1000, 40))], 0),
        },
    ),
]


def _devices(container):
    return [(d.uuid, d.usedmem, d.usedcores, d.idx) for d in container]


@pytest.mark.parametrize(
    ("nodes", "containers", "init_count", "want"),
    [pytest.param(n, c, i, w, id=f"Test_calcScore/{name}") for name, n, c, i, w in CALC_SCORE],
)
def test_calc_score(nodes, containers, init_count, want):
    got = calc_score(VENDORS, nodes, containers, init_count=init_count)
    for node, expected in want.items():
        result = got[node]
        if isinstance(expected, str):
            assert (result.ok, result.reason) == (False, expected)
        else:
            devices, score = expected
            assert result.ok, result.reason
            assert [_devices(c) for c in result.containers] == devices
            assert result.score_before == score


# -- Test_fitInCertainDevice: NVIDIA Fit on getNodeResources(node, "NVIDIA") -------------------------


def make_device(id, numa, type, used, count, totalmem, usedmem, usedcores, totalcore):
    """``makeDevice`` (health true, index 0)."""
    return usage(
        id,
        numa=numa,
        type=type,
        used=used,
        count=count,
        totalmem=totalmem,
        usedmem=usedmem,
        usedcores=usedcores,
        totalcore=totalcore,
    )


def node_resources(devices, vendor_type=NV):
    """``getNodeResources``: the devices whose type contains the vendor type (case-insensitive)."""
    return [d for d in devices if vendor_type.lower() in d.type.lower()]


def reason_map(reason: str) -> dict[str, int]:
    """``convertReasonToMap``: ``"n/total Reason, ..."`` -> ``{Reason: n}``."""
    out: dict[str, int] = {}
    for part in reason.split(", "):
        head, _, name = part.partition(" ")
        count, slash, _ = head.partition("/")
        if name and slash and count.isdigit():
            out[name] = int(count)
    return out


def std(id="test-0", **kw):
    fields = dict(numa=1, type=NV, used=1, count=4, totalmem=8192, usedmem=2048, usedcores=1, totalcore=4)
    fields.update(kw)
    return make_device(id, **fields)


def mig_device():
    dev = std()
    dev.mode = "mig"
    dev.mig_profiles = (MigProfile("1g.test", 2048, 1, 1, (MigPlacement(0, 1),)),)
    return dev


KINDS = [
    make_device("a", 0, "DCU", 1, 4, 8192, 2048, 1, 100),
    make_device("f", 0, "MXGPU", 1, 4, 8192, 2048, 1, 100),
    *(make_device(x, 1, NV, 1, 4, 8192, 2048, 1, 100) for x in "bqi"),
    *(make_device(x, 1, NV, 4, 4, 8192, 2048, 1, 100) for x in "cjul"),
    *(make_device(x, 1, NV, 1, 4, 8192, 8048, 1, 100) for x in "dm"),
    make_device("e", 1, NV, 1, 4, 8192, 2048, 90, 100),
]


FIT_IN_CERTAIN = [
    pytest.param(
        [std()],
        (1, NV, 1024, 100, 1),
        {},
        True,
        [("test-0", 1024, 1)],
        {},
        id="Test_fitInCertainDevice/allocated device",
    ),
    pytest.param(
        [std()],
        (1, "test", 1024, 100, 1),
        {},
        False,
        [],
        {"CardTypeMismatch": 1},
        id="Test_fitInCertainDevice/card type don't match",
    ),
    pytest.param(
        [std(used=5)],
        (1, NV, 1024, 100, 1),
        {},
        False,
        [],
        {"CardTimeSlicingExhausted": 1},
        id="Test_fitInCertainDevice/device count less than device used",
    ),
    pytest.param(
        [std()],
        (1, NV, 1024, 100, 200),
        {},
        False,
        [],
        {"CardInsufficientCore": 1},
        id="Test_fitInCertainDevice/core limit exceed 100",
    ),
    pytest.param(
        [std(totalmem=8000, usedmem=8000)],
        (1, NV, 0, 100, 100),
        {},
        False,
        [],
        {"CardInsufficientMemory": 1},
        id="Test_fitInCertainDevice/card insufficient remaining memory",
    ),
    pytest.param(
        [std(usedcores=0, totalcore=100)],
        (1, NV, 100, 100, 100),
        {},
        False,
        [],
        {"ExclusiveDeviceAllocateConflict": 1},
        id="Test_fitInCertainDevice/exclusive card already in use",
    ),
    pytest.param(
        [std(totalcore=1)],
        (1, NV, 1024, 100, 0),
        {},
        False,
        [],
        {"CardComputeUnitsExhausted": 1},
        id="Test_fitInCertainDevice/can't allocate core=0 job to an already full GPU",
    ),
    pytest.param(
        [mig_device()],
        (2, NV, 1024, 100, 1),
        {},
        False,
        [],
        {"CardMigTopologyInfeasible": 1, "AllocatedCardsInsufficientRequest": 1},
        id="Test_fitInCertainDevice/mode is mig",
    ),
    pytest.param(
        [std()],
        (1, NV, 1024, 100, 1),
        {"nvidia.com/use-gpuuuid": "abc"},
        False,
        [],
        {"CardUuidMismatch": 1},
        id="Test_fitInCertainDevice/card uuid don't match",
    ),
    pytest.param(
        [std("test-0", numa=0), std("test-1", numa=1)],
        (2, NV, 1024, 100, 1),
        {"nvidia.com/use-gputype": "NVIDIA", "nvidia.com/numa-bind": "true"},
        False,
        [],
        {"NumaNotFit": 1, "AllocatedCardsInsufficientRequest": 1},
        id="Test_fitInCertainDevice/numa not fit",
    ),
    pytest.param(
        KINDS,
        (2, NV, 1024, 100, 20),
        {"nvidia.com/use-gpuuuid": "a,f,c,d,e,g,h,j,l,u,m"},
        False,
        [],
        {
            "CardUuidMismatch": 3,
            "CardTimeSlicingExhausted": 4,
            "CardInsufficientMemory": 2,
            "CardInsufficientCore": 1,
        },
        id="Test_fitInCertainDevice/test device kind of not fit reason",
    ),
]


@pytest.mark.parametrize(("devices", "req", "annotations", "ok", "picked", "reasons"), FIT_IN_CERTAIN)
def test_fit_in_certain_device(devices, req, annotations, ok, picked, reasons):
    out = fit(nvidia, node_resources(devices), req, annotations)
    assert out.ok is ok
    assert [(d.uuid, d.usedmem, d.usedcores) for d in out.devices] == picked
    assert reason_map(out.reason) == reasons


# -- Test_fitInDevices ----------------------------------------------------------------------------


FIT_IN_DEVICES = [
    pytest.param(
        [std("test-1"), std("test-2")],
        {"test-2": (1, NV, 1024, 100, 1)},
        "",
        id="Test_fitInDevices/all device score for one node",
    ),
    pytest.param(
        [std("test-1")],
        {"test-1": (2, NV, 1024, 100, 1)},
        "NodeInsufficientDevice",
        id="Test_fitInDevices/request devices nums cannot exceed the total number of devices on the node",
    ),
    pytest.param(
        [std("test-2", numa=0)],
        {"test-1": (1, "test", 1024, 100, 1)},
        "Device type not found",
        id="Test_fitInDevices/device type the different from request type",
    ),
]


@pytest.mark.parametrize(("devices", "requests", "reason"), FIT_IN_DEVICES)
def test_fit_in_devices(devices, requests, reason):
    # Go keys the requests by any string; the engine keys them by the request's type
    by_type = {req[1]: req for req in requests.values()}
    got, _ = fit_in_devices(VENDORS, devices, by_type)
    assert got == reason


class _Mock(Vendor):
    """``fitMockDevice``: Fit always picks its own single device."""

    def __init__(self, word: str, uuid: str) -> None:
        self.common_word = word
        self.uuid = uuid

    def resource_names(self):
        return frozenset()

    def node_reads(self):
        return NodeReads()

    def node_devices(self, annotations, node):
        return [], {}

    def container_request(self, resources):
        return None

    def fit(self, devices, request, pod, node, policy, allocated=()):
        return FitOutcome(True, [cdev(self.uuid, self.common_word)])

    def add_usage(self, dev: DeviceUsage, chosen) -> None:
        return None


def test_fit_in_devices_multi_type_partition():
    """Test_fitInDevices_MultiTypePartition: each type's entry holds only its own device."""
    devices = [usage("uuid-a", type="mockA"), usage("uuid-b", type="mockB")]
    requests = {"mockA": (1, "mockA", 1024, 101, 1), "mockB": (1, "mockB", 1024, 101, 1)}
    reason, devinput = fit_in_devices([_Mock("mockA", "uuid-a"), _Mock("mockB", "uuid-b")], devices, requests)
    assert reason == ""
    assert {k: [[d.uuid for d in c] for c in v] for k, v in devinput.items()} == {
        "mockA": [["uuid-a"]],
        "mockB": [["uuid-b"]],
    }


# -- device-scoring weights --------------------------------------------------------------------------


def weight_nodes(policy="binpack"):
    """``newDeviceScoringWeightTestNodes``."""
    return {
        "node1": (
            [
                usage(
                    "gpu-a", type=NV, count=10, used=1, totalcore=100, usedcores=90, totalmem=100, usedmem=10
                ),
                usage(
                    "gpu-b",
                    type=NV,
                    index=1,
                    count=10,
                    used=7,
                    totalcore=100,
                    usedcores=10,
                    totalmem=100,
                    usedmem=20,
                ),
            ],
            policy,
        )
    }


def test_calc_score_rejects_invalid_device_scoring_weights():
    """TestCalcScoreRejectsInvalidDeviceScoringWeights."""
    with pytest.raises(WeightsError, match='"core" weight must not be negative'):
        calc_score(VENDORS, {}, [], annotations={WEIGHTS: "slot=1,core=-1,memory=3"})


@pytest.mark.parametrize(
    ("init", "weights", "want"),
    [
        pytest.param(False, None, "gpu-a", id="TestCalcScoreUsesPodDeviceScoringWeights/default"),
        pytest.param(
            False, "slot=1,core=1,memory=3", "gpu-b", id="TestCalcScoreUsesPodDeviceScoringWeights/memory=3"
        ),
        pytest.param(
            True, None, "gpu-a", id="TestCalcScoreUsesPodDeviceScoringWeightsForInitContainers/default"
        ),
        pytest.param(
            True,
            "slot=1,core=1,memory=3",
            "gpu-b",
            id="TestCalcScoreUsesPodDeviceScoringWeightsForInitContainers/memory=3",
        ),
    ],
)
def test_calc_score_uses_pod_device_scoring_weights(init, weights, want):
    annotations = {POLICY: "binpack"}
    if weights:
        annotations[WEIGHTS] = weights
    containers = [{NV: (1, NV, 0, 40, 0)}] + ([{}] if init else [])
    got = calc_score(
        VENDORS, weight_nodes(), containers, init_count=1 if init else 0, annotations=annotations
    )
    result = got["node1"]
    assert result.ok, result.reason
    assert [[d.uuid for d in c] for c in result.containers] == [[want]] + ([[]] if init else [])


@pytest.mark.parametrize(
    ("weights", "want"),
    [
        pytest.param(None, "gpu-b", id="TestCalcScoreUsesDeviceScoringWeightsAsTopologyTieBreaker/default"),
        pytest.param(
            "slot=1,core=1,memory=3",
            "gpu-a",
            id="TestCalcScoreUsesDeviceScoringWeightsAsTopologyTieBreaker/memory=3",
        ),
    ],
)
def test_topology_tie_breaker(weights, want):
    annotations = {POLICY: "topology-aware"}
    if weights:
        annotations[WEIGHTS] = weights
    pairs = {"node1": {"gpu-a": {"gpu-b": 1}, "gpu-b": {"gpu-a": 1}}}
    got = calc_score(
        VENDORS,
        weight_nodes("topology-aware"),
        [{NV: (1, NV, 0, 40, 0)}],
        annotations=annotations,
        pair_scores=pairs,
    )
    assert [[d.uuid for d in c] for c in got["node1"].containers] == [[want]]


# -- Test_Nvidia_GPU_Topology -------------------------------------------------------------------------

SIX = [
    ("a", 0),
    ("b", 0),
    ("c", 1),
    ("d", 1),
    ("e", 1),
    ("f", 1),
]


def six():
    return [make_device(id, numa, NV, 1, 4, 8192, 2048, 1, 100) for id, numa in SIX]


def full_mesh(value: int, overrides: dict[tuple[str, str], int]) -> dict[str, dict[str, int]]:
    ids = [id for id, _ in SIX]
    return {a: {b: overrides.get((a, b), value) for b in ids if b != a} for a in ids}


TRIANGLE = full_mesh(1, {("a", "f"): 100, ("c", "f"): 100, ("f", "a"): 100, ("f", "c"): 100})
LONER = full_mesh(100, {**{(x, "f"): 1 for x in "abcde"}, **{("f", x): 1 for x in "abcde"}})


TOPOLOGY = [
    pytest.param(3, TRIANGLE, ["f", "c", "a"], id="Test_Nvidia_GPU_Topology/test nvidia gpu topology-aware"),
    pytest.param(1, LONER, ["f"], id="Test_Nvidia_GPU_Topology/test Single Card Topology"),
]


@pytest.mark.parametrize(("nums", "scores", "want"), TOPOLOGY)
def test_nvidia_gpu_topology(nums, scores, want):
    out = fit(nvidia, six(), (nums, NV, 1024, 100, 20), {POLICY: "topology-aware"}, pair_scores=scores)
    assert (out.ok, out.reason) == (True, "")
    assert fit_ids(out) == want
    assert all((d.usedmem, d.usedcores) == (1024, 20) for d in out.devices)
