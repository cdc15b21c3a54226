"""HAMi v2.10.0 ``pkg/device/hygon/device_test.go``, re-expressed against the engine's Hygon vendor.

Ported: ``Test_checkDCUtype`` and ``Test_checkType`` (through Fit: a rejected type is one
``CardTypeMismatch``), ``Test_GetNodeDevices``, ``Test_GenerateResourceRequests`` (and its
``_OutOfRangeValues`` / ``_MemoryFactorOverflow`` variants), ``TestDevices_Fit``,
``TestDevices_AddResourceUsage``.

Not ported, because the engine does not simulate them: ``Test_MutateAdmission`` (admission webhook),
``Test_CheckHealth`` (device-plugin handshake annotations), ``Test_PatchAnnotations`` (pod
annotations written at bind time), ``TestDevices_LockNode`` / ``TestDevices_ReleaseNodeLock``
(the node lock).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors import HygonConfig, HygonVendor
from tests.vendors.harness import EMPTY, add_usage, cdev, fit, fit_ids, node, node_devices, request_of, usage
from tests.vendors.sliced_fit import sliced_fit_cases

DCU = "DCU"
HYGON = HygonVendor()


def dcu(id="dev-0", **kw):
    """The Go tests' usual DCU: 100 slots, 100 cores, healthy."""
    base = {"type": DCU, "count": 100, "totalcore": 100, "totalmem": 1280}
    base.update(kw)
    return usage(id, **base)


# ---- Test_checkDCUtype: (annotations, card type) -> accepted ------------------------------------
USE, NOUSE = "hygon.com/use-dcutype", "hygon.com/nouse-dcutype"


@pytest.mark.parametrize(
    ("annotations", "card_type", "accepted"),
    [
        pytest.param({USE: "dcu"}, "dcu", True, id="Test_checkDCUtype/exist one dcu in use type"),
        pytest.param({USE: "dcu"}, "test", False, id="Test_checkDCUtype/the different of dcu in use type"),
        pytest.param({}, "dcu", True, id="Test_checkDCUtype/no dcu in use annotation"),
        pytest.param({USE: "dcu,test"}, "dcu", True, id="Test_checkDCUtype/exist multi dcu in use type"),
        pytest.param({NOUSE: "dcu"}, "dcu", False, id="Test_checkDCUtype/exist one dcu no use type"),
        pytest.param({}, "dcu", True, id="Test_checkDCUtype/no dcu in use annotation#01"),
        pytest.param({NOUSE: "test,dcu"}, "test", False, id="Test_checkDCUtype/exist multi dcu no use type"),
        pytest.param({NOUSE: "dcu"}, "test", True, id="Test_checkDCUtype/the different of dcu no use type"),
        pytest.param(
            {USE: ""}, "dcu", True, id="Test_checkDCUtype/empty use type annotation is no constraint"
        ),
        pytest.param(
            {NOUSE: ""},
            "dcu",
            True,
            id="Test_checkDCUtype/empty nouse type annotation excludes nothing",
        ),
        pytest.param(
            {NOUSE: "   "},
            "dcu",
            True,
            id="Test_checkDCUtype/whitespace-only nouse type annotation excludes nothing",
        ),
    ],
)
def test_check_dcu_type(annotations, card_type, accepted):
    outcome = fit(HYGON, [dcu(type=card_type)], (1, DCU, 0, 100, 0), annotations)
    assert outcome.ok is accepted
    assert outcome.reason == ("" if accepted else "1/1 CardTypeMismatch")


# ---- Test_checkType: the request's type must be DCU, then the card type lists apply -------------
@pytest.mark.parametrize(
    ("request_type", "fits"),
    [
        pytest.param(DCU, True, id="Test_checkType/the same type"),
        pytest.param("test", False, id="Test_checkType/the different type"),
    ],
)
def test_check_type(request_type, fits):
    outcome = fit(HYGON, [dcu(type=DCU)], (1, request_type, 0, 100, 0), {USE: "DCU"})
    assert outcome.ok is fits
    assert outcome.reason == ("" if fits else "1/1 CardTypeMismatch")


# ---- Test_GetNodeDevices ---------------------------------------------------------------------------
REGISTER = "hami.io/node-dcu-register"


@pytest.mark.parametrize(
    ("annotations", "want"),
    [
        pytest.param({}, [], id="Test_GetNodeDevices/no annotation"),
        pytest.param(
            {REGISTER: "test-0,1,1024,100,DCU,0,true,0,test:"},
            [("test-0", 0, 1, 1024, 100, DCU, 0, True, "test", DCU)],
            id="Test_GetNodeDevices/exist dcu device",
        ),
        pytest.param({REGISTER: ":"}, [], id="Test_GetNodeDevices/no dcu device"),
        pytest.param({REGISTER: ""}, [], id="Test_GetNodeDevices/node annotations not decode successfully"),
        pytest.param(
            {REGISTER: "test-0,1,1024,100,DCU:"}, [], id="Test_GetNodeDevices/dcu device length less than 7"
        ),
    ],
)
def test_get_node_devices(annotations, want):
    got = node_devices(HYGON, node(annotations=annotations))
    assert [
        (d.id, d.index, d.count, d.devmem, d.devcore, d.type, d.numa, d.health, d.mode, d.device_vendor)
        for d in got
    ] == want


# ---- Test_GenerateResourceRequests (+ _OutOfRangeValues, _MemoryFactorOverflow) ------------------
NUM, MEM, CORES = "hygon.com/dcunum", "hygon.com/dcumem", "hygon.com/dcucores"
ALL = {NUM: "1", CORES: "1", MEM: "1024"}


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param({}, {}, EMPTY, id="Test_GenerateResourceRequests/don't set to limits and request"),
        pytest.param(
            ALL,
            ALL,
            (1, DCU, 1024, 0, 1),
            id="Test_GenerateResourceRequests/dcuResourceCount,dcuesourceMem and dcuResourceCores set to limits and request",
        ),
        pytest.param(
            {NUM: "1"},
            ALL,
            (1, DCU, 1024, 0, 1),
            id="Test_GenerateResourceRequests/dcuResourceMem,dcuResourceCores don't set limit and dcuResourceCount set to limits and request",
        ),
        pytest.param(
            {NUM: "1"},
            {NUM: "1", CORES: "1"},
            (1, DCU, 0, 100, 1),
            id="Test_GenerateResourceRequests/dcuResourceMem don't set limit and request,dcuResourceCores don't set limit and dcuResourceCount set to limits and request",
        ),
        pytest.param(
            {NUM: "1", MEM: "16Gi"},
            {},
            EMPTY,
            id="Test_GenerateResourceRequests/oversized dcu memory request exceeds int32 range",
        ),
        pytest.param(
            {NUM: "2200000000"},
            {},
            EMPTY,
            id="Test_GenerateResourceRequests_OutOfRangeValues/oversized dcu count exceeds int32 range",
        ),
        pytest.param(
            {NUM: "1", CORES: "-1"},
            {},
            EMPTY,
            id="Test_GenerateResourceRequests_OutOfRangeValues/negative dcu cores",
        ),
    ],
)
def test_generate_resource_requests(limits, requests, want):
    assert request_of(HYGON, limits, requests) == want


def test_generate_resource_requests_memory_factor_overflow():
    """Go: Test_GenerateResourceRequests_MemoryFactorOverflow (3000000 MiB x 1024 > MaxInt32)."""
    vendor = HygonVendor(HygonConfig(memory_factor=1024))
    assert request_of(vendor, {NUM: "1", MEM: "3000000"}) == EMPTY


# ---- TestDevices_Fit ------------------------------------------------------------------------------
FIT_CASES = sliced_fit_cases(
    "TestDevices_Fit",
    DCU,
    "hygon.com/use-gpuuuid",
    "hygon.com/nouse-gpuuuid",
)


@pytest.mark.parametrize(("devices", "request_", "annotations", "fits", "length", "ids", "reason"), FIT_CASES)
def test_fit(devices, request_, annotations, fits, length, ids, reason):
    outcome = fit(HYGON, devices, request_, annotations)
    assert outcome.ok is fits
    assert len(outcome.devices) == length
    if fits:
        assert fit_ids(outcome) == ids
    assert outcome.reason == reason


# ---- TestDevices_AddResourceUsage -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("before", "chosen", "after"),
    [
        pytest.param(
            (0, 15, 2000),
            (50, 1024),
            (1, 65, 3024),
            id="TestDevices_AddResourceUsage/test add resource usage",
        ),
    ],
)
def test_add_resource_usage(before, chosen, after):
    used, usedcores, usedmem = before
    dev = usage("dev-0", used=used, usedcores=usedcores, usedmem=usedmem)
    assert add_usage(HYGON, dev, cdev("dev-0", usedcores=chosen[0], usedmem=chosen[1])) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == after
