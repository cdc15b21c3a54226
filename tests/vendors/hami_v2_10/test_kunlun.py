"""HAMi v2.10.0 ``pkg/device/kunlun`` tests (``device_test.go``, ``topo_test.go``, ``vdevice_test.go``),
re-expressed against the engine's ``KunlunVendor`` (whole cards, ``kunlun``) and ``KunlunVxpuVendor``
(vXPU slices, ``XPU``).

Internals go through the vendor interface:

- ``graghSelect`` (``Test_graphSelect``, ``Test_graphSelectVXPU``, ``TestGraghSelect_*``,
  ``TestInterconnect_TwoDevices`` / ``_FourDevices``) through Fit: the chosen device indices are
  ``graghSelect``'s answer; the whole-card ``FitXPU`` (idle and healthy) is ``topo_test.go``'s
  ``fitAvailable`` on one-slot cards.
- ``calcscore`` / ``countbubble`` / ``getvalue`` / ``addidx`` (``TestCalcscore``, ``TestCountbubble``,
  ``TestGetvalue``, ``TestAddidx``) through ``score_node``: the node's cards in use are ``prev``, the
  pod's card indices ``cur``. ``countbubble(in)`` is scored against no card in use; ``getvalue(t)`` is
  ``countbubble`` of ``t`` cards on the left wing next to a full right wing.
- ``trimMemory`` (``Test_trimMemory``) through the vXPU request; ``FitVXPU`` (``Test_FitVXPU_direct``)
  through a one-card vXPU Fit.

Not ported: ``TestParseUsage*``, ``TestCanMeet``, ``TestDelta``, ``TestDevicepick``,
``TestInterconnect_TwoDevices_ChoosesAmongMultipleCandidates``, ``TestInterconnect_UnsupportedCount``,
``TestParseInterconnection*_Structure`` (helpers of ``graghSelect`` that Fit only reaches through the
cases above), ``Test_KunlunVDevices_CheckType`` (v2.10.0's vXPU Fit does not call it), and what the
engine does not simulate: ``Test_InitKunlunVDevice``, ``Test_CommonWord``, ``Test_MutateAdmission``,
``Test_KunlunVDevices_CheckHealth``, ``Test_NodeCleanUp``, ``Test_KunlunVDevices_PatchAnnotations``,
``Test_KunlunVDevices_LockNode`` / ``_ReleaseNodeLock``, ``Test_KunlunVDevices_GetResourceNames``.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors import KunlunVendor, KunlunVxpuVendor
from tests.vendors.harness import (
    EMPTY,
    add_usage,
    cdev,
    fit,
    node,
    node_devices,
    request_of,
    score_node,
    usage,
)

KUNLUN, XPU = "kunlun", "XPU"
CARDS, VXPU = KunlunVendor(), KunlunVxpuVendor()
MAX_MEMORY = 98304
MUTEX = {"hami.io/gpu-scheduler-policy": "mutex"}


def board(*used, type=KUNLUN, **kw):
    """Eight one-slot cards ``xpu-0..7``; the indices in ``used`` are in use."""
    return [
        usage(f"xpu-{i}", type=type, index=i, count=1, used=1 if i in used else 0, **kw) for i in range(8)
    ]


def vboard(*cards):
    """vXPU cards ``(used, usedmem)`` of 98304 MiB."""
    return [
        usage(f"xpu-{i}", type=XPU, index=i, count=10, totalmem=MAX_MEMORY, used=u, usedmem=m)
        for i, (u, m) in enumerate(cards)
    ]


def indices(outcome):
    return [d.idx for d in outcome.devices]


# ---- graghSelect on whole cards ------------------------------------------------------------------------
GRAPH_SELECT = [
    pytest.param((), 8, [0, 1, 2, 3, 4, 5, 6, 7], id="Test_graphSelect/full allocate"),
    pytest.param((5,), 8, [], id="Test_graphSelect/full allocate not success"),
    pytest.param((5,), 2, [4, 6], id="Test_graphSelect/allocate 2 cards"),
    pytest.param((5,), 1, [4], id="Test_graphSelect/allocate 1 card"),
    pytest.param((6, 7), 1, [4], id="Test_graphSelect/allocate 1 card#01"),
    pytest.param(
        (0, 1, 2, 4, 5, 6), 2, [3, 7], id="Test_graphSelect/allocate 2 card according to interconnect"
    ),
    pytest.param(
        (2, 3, 7),
        4,
        [0, 1, 4, 5],
        id="Test_graphSelect/allocate 4 cards according to interconnect when have 5 cards",
    ),
    pytest.param(
        (3, 6),
        4,
        [0, 1, 4, 5],
        id="Test_graphSelect/allocate 4 cards according to interconnect when have 6 cards, leave 2 cards unconnected",
    ),
    pytest.param(
        (2, 6),
        4,
        [0, 1, 4, 5],
        id="Test_graphSelect/allocate 4 cards according to interconnect when have 6 cards, leave 2 cards connected",
    ),
    pytest.param((), 8, [0, 1, 2, 3, 4, 5, 6, 7], id="TestGraghSelect_AllEightAvailable"),
    pytest.param((0,), 8, [], id="TestGraghSelect_EightNotFullyAvailable"),
    pytest.param((), 1, [0], id="TestGraghSelect_SingleDevice"),
    pytest.param((4, 5, 6, 7), 4, [0, 1, 2, 3], id="TestGraghSelect_FourFromLeftWing"),
    pytest.param((1, 2, 3, 5, 6, 7), 2, [0, 4], id="TestInterconnect_TwoDevices"),
    pytest.param((2, 3, 6, 7), 4, [0, 1, 4, 5], id="TestInterconnect_FourDevices"),
]


@pytest.mark.parametrize(("used", "nums", "want"), GRAPH_SELECT)
def test_graph_select(used, nums, want):
    outcome = fit(CARDS, board(*used), (nums, KUNLUN, 0, 100, 0))
    assert outcome.ok is bool(want)
    assert indices(outcome) == want


# ---- graghSelect with FitVXPU ----------------------------------------------------------------------------
GRAPH_SELECT_VXPU = [
    pytest.param(
        [(0, 0)] * 8,
        8,
        [0, 1, 2, 3, 4, 5, 6, 7],
        id="Test_graphSelectVXPU/full allocate with unused devices",
    ),
    pytest.param(
        [(0, 0), (1, 24576), (0, 0), (2, 49152), (0, 0), (1, 49152), (0, 0), (0, 0)],
        4,
        [0, 1, 2, 3],
        id="Test_graphSelectVXPU/allocate with matching memory requirements",
    ),
    pytest.param(
        [(0, 0), (2, 49152), (0, 0), (1, 49152), (0, 0), (1, 24576), (0, 0), (0, 0)],
        4,
        [4, 5, 6, 7],
        id="Test_graphSelectVXPU/allocate with mixed memory requirements",
    ),
    pytest.param(
        [(1, 49152)] * 8, 2, [], id="Test_graphSelectVXPU/no suitable devices due to memory mismatch"
    ),
    pytest.param(
        [(1, 24576), (1, 24576), (1, 49152), (0, 0), (0, 0), (1, 24576), (0, 0), (0, 0)],
        1,
        [0],
        id="Test_graphSelectVXPU/allocate 1 card with matching memory",
    ),
    pytest.param(
        [(0, 0), (2, 49152), (1, 24576), (1, 49152), (0, 0), (0, 0), (1, 24576), (0, 0)],
        2,
        [0, 1],
        id="Test_graphSelectVXPU/allocate 2 cards with different memory requirements",
    ),
]


@pytest.mark.parametrize(("cards", "nums", "want"), GRAPH_SELECT_VXPU)
def test_graph_select_vxpu(cards, nums, want):
    outcome = fit(VXPU, vboard(*cards), (nums, XPU, 24576, 0, 25))
    assert outcome.ok is bool(want)
    assert indices(outcome) == want


# ---- Fit reasons, mutex and UUID selection -------------------------------------------------------------
def test_vxpu_fit_mutex():
    """Go: TestKunlunVDevices_Fit_Mutex (shared by default, every used card conflicts under mutex)."""
    cards = vboard(*[(1, 24576)] * 8)
    assert fit(VXPU, cards, (1, "", 24576, 0, 0)).ok


def test_vxpu_fit_mutex_rejects_used():
    """Go: TestKunlunVDevices_Fit_Mutex (the mutex half)."""
    outcome = fit(VXPU, vboard(*[(1, 24576)] * 8), (1, "", 24576, 0, 0), MUTEX)
    assert (outcome.ok, outcome.reason) == (False, "8/8 ExclusiveDeviceAllocateConflict")


@pytest.mark.parametrize(
    ("vendor", "devices", "request_"),
    [
        pytest.param(
            VXPU,
            [usage(f"d{i}", index=i, totalmem=1024) for i in range(8)],
            (1, "", 2048, 0, 0),
            id="TestKunlunVDevices_Fit_NumaNotFit",
        ),
        pytest.param(
            CARDS,
            [usage(f"d{i}", index=i, used=1) for i in range(8)],
            (1, KUNLUN, 0, 0, 0),
            id="TestKunlunDevices_Fit_NumaNotFit",
        ),
    ],
)
def test_fit_numa_not_fit(vendor, devices, request_):
    outcome = fit(vendor, devices, request_)
    assert (outcome.ok, outcome.reason) == (False, "1/8 NumaNotFit")


def uuid_board(vtype, count):
    return [
        usage(f"xpu-{i}", type=vtype, index=i, count=count, totalmem=MAX_MEMORY, totalcore=100)
        for i in range(8)
    ]


ALL = ",".join(f"xpu-{i}" for i in range(8))
UUID_CASES = [
    # (vendor, device type, slots, request, annotations, chosen uuid or None for CardUuidMismatch)
    pytest.param(CARDS, KUNLUN, 1, (1, KUNLUN, 0, 0, 0), {"baidu.com/use-gpuuuid": "xpu-5"}, "xpu-5",
                 id="TestKunlunDevices_Fit_UseUUID/legacy annotation"),
    pytest.param(CARDS, KUNLUN, 1, (1, KUNLUN, 0, 0, 0), {"hami.io/use-xpu-uuid": "xpu-3"}, "xpu-3",
                 id="TestKunlunDevices_Fit_UseUUID/new standard annotation"),
    pytest.param(CARDS, KUNLUN, 1, (1, KUNLUN, 0, 0, 0), {"hami.io/use-xpu-uuid": "xpu-6"}, "xpu-6",
                 id="TestKunlunDevices_Fit_UseUUID/literal key"),
    pytest.param(CARDS, KUNLUN, 1, (1, KUNLUN, 0, 0, 0), {"hami.io/use-xpu-uuid": "xpu-99"}, None,
                 id="TestKunlunDevices_Fit_UseUUID/card not on the node"),
    pytest.param(CARDS, KUNLUN, 1, (1, KUNLUN, 0, 0, 0), {"baidu.com/nouse-gpuuuid": ALL}, None,
                 id="TestKunlunDevices_Fit_NoUseUUID/legacy annotation"),
    pytest.param(CARDS, KUNLUN, 1, (1, KUNLUN, 0, 0, 0), {"hami.io/no-use-xpu-uuid": ALL}, None,
                 id="TestKunlunDevices_Fit_NoUseUUID/new standard annotation"),
    pytest.param(VXPU, XPU, 10, (1, XPU, MAX_MEMORY, 0, 0), {"hami.io/use-xpu-uuid": "xpu-3"}, "xpu-3",
                 id="TestKunlunVDevices_Fit_UUIDAnnotations/standard hami annotation"),
    pytest.param(VXPU, XPU, 10, (1, XPU, MAX_MEMORY, 0, 0), {"baidu.com/use-gpuuuid": "xpu-2"}, "xpu-2",
                 id="TestKunlunVDevices_Fit_UUIDAnnotations/legacy baidu annotation"),
    pytest.param(VXPU, XPU, 10, (1, XPU, MAX_MEMORY, 0, 0), {"hami.io/no-use-xpu-uuid": ALL}, None,
                 id="TestKunlunVDevices_Fit_UUIDAnnotations/standard hami nouse annotation"),
    pytest.param(VXPU, XPU, 10, (1, XPU, MAX_MEMORY, 0, 0), {"baidu.com/nouse-gpuuuid": ALL}, None,
                 id="TestKunlunVDevices_Fit_UUIDAnnotations/legacy baidu nouse annotation"),
]  # fmt: skip


@pytest.mark.parametrize(("vendor", "vtype", "slots", "request_", "annotations", "chosen"), UUID_CASES)
def test_fit_uuid(vendor, vtype, slots, request_, annotations, chosen):
    outcome = fit(vendor, uuid_board(vtype, slots), request_, annotations)
    if chosen is None:
        assert not outcome.ok
        assert "CardUuidMismatch" in outcome.reason
    else:
        assert outcome.ok
        assert [d.uuid for d in outcome.devices] == [chosen]


# ---- ScoreNode: calcscore, countbubble, getvalue, addidx ----------------------------------------------
def score(cur_containers, prev_used, n=8):
    previous = board(*prev_used)[:n]
    pod_devices = [[cdev(f"xpu-{i}", KUNLUN, idx=i) for i in container] for container in cur_containers]
    return score_node(CARDS, pod_devices, previous, "binpack")


@pytest.mark.parametrize(
    ("cur", "prev", "n", "want"),
    [
        pytest.param([list(range(8))], (0, 1, 2, 3), 4, 3000, id="Test_ScoreNode/Scenario 1"),
        pytest.param([[0]], (), 0, 0, id="Test_ScoreNode/Scenario 2"),
        pytest.param([[0, 1]], (0,), 8, 3000, id="TestCalcscore/cur decreases fragmentation by 1"),
        pytest.param([[4]], (0,), 8, 2000, id="TestCalcscore/cur unchanged"),
        pytest.param([[0]], (0, 1), 8, 1000, id="TestCalcscore/cur increases fragmentation by 1"),
        pytest.param([[0]], (0, 1, 2, 3), 8, 0, id="TestCalcscore/cur increases fragmentation by 2"),
        # countbubble(in) against no card in use (countbubble 1): 1 -> 2000, 2 -> 1000, 3 -> 0
        pytest.param([[]], (), 8, 2000, id="TestCountbubble/empty"),
        pytest.param([[0, 1, 2, 3]], (), 8, 2000, id="TestCountbubble/all left, full group of 4"),
        pytest.param([[0]], (), 8, 0, id="TestCountbubble/single left device"),
        pytest.param([[4]], (), 8, 0, id="TestCountbubble/single right device"),
        pytest.param([[0, 1]], (), 8, 1000, id="TestCountbubble/two left devices"),
        # getvalue(t): t left cards beside a full right wing, against no card in use: 0 -> 3000, 1 -> 2000, 2 -> 1000
        pytest.param([[4, 5, 6, 7, 0, 1, 2, 3]], (), 8, 3000, id="TestGetvalue/4"),
        pytest.param([[4, 5, 6, 7, 0]], (), 8, 1000, id="TestGetvalue/1"),
        pytest.param([[4, 5, 6, 7]], (), 8, 2000, id="TestGetvalue/0"),
        pytest.param([[4, 5, 6, 7, 0, 1]], (), 8, 2000, id="TestGetvalue/2"),
        pytest.param([[4, 5, 6, 7, 0, 1, 2]], (), 8, 2000, id="TestGetvalue/3"),
        # addidx: a card index counts once however many containers hold it
        pytest.param([[1, 2], [3]], (), 8, 1000, id="TestAddidx/append new value"),
        pytest.param([[1, 2, 3], [2]], (), 8, 1000, id="TestAddidx/duplicate value is ignored"),
        pytest.param([[5]], (), 8, 0, id="TestAddidx/append to empty slice"),
    ],
)  # fmt: skip
def test_score_node(cur, prev, n, want):
    assert score(cur, prev, n) == want


# ---- vXPU: GetNodeDevices, GenerateResourceRequests, trimMemory, FitVXPU, ScoreNode, AddResourceUsage --
REGISTER = "hami.io/node-register-xpu"


@pytest.mark.parametrize(
    ("annotations", "count"),
    [
        pytest.param({}, 0, id="Test_GetNodeDevices/annotation missing"),
        pytest.param({REGISTER: "not-json"}, 0, id="Test_GetNodeDevices/invalid json"),
        pytest.param({REGISTER: "[]"}, 0, id="Test_GetNodeDevices/empty device list"),
        pytest.param(
            {
                REGISTER: '[{"id":"xpu-0","index":0,"count":1,"devmem":98304,"devcore":100,"type":"XPU","health":true}]'
            },
            1,
            id="Test_GetNodeDevices/valid devices get vendor tagged",
        ),
    ],
)
def test_vxpu_get_node_devices(annotations, count):
    got = node_devices(VXPU, node(annotations=annotations))
    assert len(got) == count
    assert all(d.device_vendor == XPU for d in got)


VCOUNT, VMEM = "kunlunxin.com/vxpu", "kunlunxin.com/vxpu-memory"


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param({}, {}, EMPTY, id="Test_KunlunVDevices_GenerateResourceRequests/no vcount requested"),
        pytest.param(
            {VCOUNT: "1"},
            {},
            (1, XPU, MAX_MEMORY, 100, 100),
            id="Test_KunlunVDevices_GenerateResourceRequests/vcount without memory defaults to full device",
        ),
        pytest.param(
            {},
            {VCOUNT: "2", VMEM: "24576"},
            (2, XPU, 24576, 0, 25),
            id="Test_KunlunVDevices_GenerateResourceRequests/vcount with memory from requests fallback",
        ),
    ],
)
def test_vxpu_generate_resource_requests(limits, requests, want):
    assert request_of(VXPU, limits, requests) == want


@pytest.mark.parametrize(
    ("memory", "trimmed"),
    [
        pytest.param(0, 24576, id="Test_trimMemory/zero"),
        pytest.param(24576, 24576, id="Test_trimMemory/at first threshold"),
        pytest.param(24577, 49152, id="Test_trimMemory/just above first threshold"),
        pytest.param(49152, 49152, id="Test_trimMemory/at second threshold"),
        pytest.param(49153, MAX_MEMORY, id="Test_trimMemory/just above second threshold"),
        pytest.param(200000, MAX_MEMORY, id="Test_trimMemory/far above"),
    ],
)
def test_trim_memory(memory, trimmed):
    assert request_of(VXPU, {VCOUNT: "1", VMEM: str(memory)})[2] == trimmed


@pytest.mark.parametrize(
    ("card", "memreq", "fits"),
    [
        pytest.param({"usedmem": 90000, "health": False}, 20000, False, id="Test_FitVXPU_direct/would exceed total memory"),
        pytest.param({}, 24576, True, id="Test_FitVXPU_direct/idle device always fits"),
        pytest.param({"used": 2, "usedmem": 49152}, 24576, True,
                     id="Test_FitVXPU_direct/shared device with matching average memory"),
        pytest.param({"used": 1, "usedmem": 49152, "health": False}, 24576, False,
                     id="Test_FitVXPU_direct/shared device with mismatched average memory"),
        pytest.param({"health": False}, 24576, False, id="Test_FitVXPU_direct/unhealthy device is rejected"),
    ],
)  # fmt: skip
def test_fit_vxpu_direct(card, memreq, fits):
    dev = usage("xpu-0", type=XPU, count=10, totalmem=MAX_MEMORY, **card)
    assert fit(VXPU, [dev], (1, XPU, memreq, 0, 0)).ok is fits


def test_vxpu_score_node():
    """Go: Test_KunlunVDevices_ScoreNode (vXPU slices do not score nodes)."""
    assert score_node(VXPU, [], [], "binpack") == 0


def test_vxpu_add_resource_usage():
    """Go: Test_KunlunVDevices_AddResourceUsage."""
    dev = usage("xpu-0", used=1, usedcores=10, usedmem=1000)
    assert add_usage(VXPU, dev, cdev("xpu-0", usedcores=20, usedmem=2000)) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == (2, 30, 3000)
