"""HAMi v2.10.0 ``pkg/device/cambricon/device_test.go`` as data, run against ``CambriconVendor``.

Not ported (internals the engine does not expose): ``Test_MutateAdmission``, ``Test_ParseConfig``,
``Test_PatchAnnotations``, ``Test_setNodeLock``, ``Test_LockNode``, ``Test_ReleaseNodeLock`` (admission
and bind-time node locks). ``Test_checkType`` asserts the private type check; it is ported through
``fit``.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.cambricon import CambriconConfig, CambriconVendor
from tests.vendors.harness import EMPTY, add_usage, cdev, fit, node, node_devices, request, request_of, usage

MLU = "MLU"
POLICY = "hami.io/gpu-scheduler-policy"


vendor = CambriconVendor(
    CambriconConfig("cambricon.com/mlu", "cambricon.com/mlu.smlu.vmemory", "cambricon.com/mlu.smlu.vcore")
)


def mlu(id, *, index=0, used=0, totalmem=1280, usedmem=0, usedcores=0, health=True):
    return usage(
        id,
        index=index,
        count=100,
        used=used,
        totalmem=totalmem,
        usedmem=usedmem,
        totalcore=100,
        usedcores=usedcores,
        type=MLU,
        health=health,
    )


def test_get_node_devices_from_capacity():
    """Test_GetNodeDevices/test with valid configuration: vcore 1, vmemory 1 -> one MLU."""
    n = node("test", capacity={"cambricon.com/mlu.smlu.vcore": 1, "cambricon.com/mlu.smlu.vmemory": 1})
    [got] = node_devices(vendor, n)
    assert (got.index, got.id, got.count, got.devmem, got.devcore, got.type, got.numa, got.health) == (
        0,
        "test-cambricon-mlu-0",
        100,
        25600,
        100,
        MLU,
        0,
        True,
    )
    assert got.device_vendor == MLU


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param({}, {}, None, id="Test_GenerateResourceRequests/don't set to limits and request"),
        pytest.param(
            {
                "cambricon.com/mlu": "1",
                "cambricon.com/mlu.smlu.vmemory": "1000",
                "cambricon.com/mlu.smlu.vcore": "2",
            },
            {
                "cambricon.com/mlu": "1",
                "cambricon.com/mlu.smlu.vmemory": "1000",
                "cambricon.com/mlu.smlu.vcore": "2",
            },
            (1, MLU, 256000, 0, 2),
            id="Test_GenerateResourceRequests/count, memory and cores set",
        ),
        pytest.param(
            {"cambricon.com/mlu": "1", "cambricon.com/mlu.smlu.vmemory": "1000"},
            {"cambricon.com/mlu": "1", "cambricon.com/mlu.smlu.vmemory": "1000"},
            (1, MLU, 256000, 0, 100),
            id="Test_GenerateResourceRequests/resourcememoryname don't set to limits and requests",
        ),
        pytest.param(
            {"cambricon.com/mlu": "1", "cambricon.com/mlu.smlu.vcore": "2"},
            {"cambricon.com/mlu": "1", "cambricon.com/mlu.smlu.vcore": "2"},
            (1, MLU, 0, 100, 2),
            id="Test_GenerateResourceRequests/resourcecoresname don't set to limits and requests",
        ),
        pytest.param(
            {"cambricon.com/mlu": "1", "cambricon.com/mlu.smlu.vmemory": "16Gi"},
            {},
            None,
            id="Test_GenerateResourceRequests/memory overflowing int32 is rejected, not truncated to zero",
        ),
        pytest.param(
            {"cambricon.com/mlu": "1", "cambricon.com/mlu.smlu.vmemory": "16.0Gi"},
            {},
            None,
            id="Test_GenerateResourceRequests/decimal-form memory request is rejected, not treated as zero",
        ),
    ],
)
def test_generate_resource_requests(limits, requests, want):
    assert request_of(vendor, limits, requests) == (want or EMPTY)


# (devices, request, annotations, ok, devices returned, chosen ids when ok, reason)
FIT_CASES = [
    pytest.param(
        [mlu("dev-0", totalmem=128), mlu("dev-1", totalmem=128)],
        request(MLU, 1, 64, 0, 50),
        {},
        True,
        1,
        ["dev-1"],
        "",
        id="TestDevices_Fit/fit success",
    ),
    pytest.param(
        [mlu("dev-0", totalmem=128)],
        request(MLU, 1, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardInsufficientMemory",
        id="TestDevices_Fit/fit fail: memory not enough",
    ),
    pytest.param(
        [mlu("dev-0", totalmem=1024, usedcores=100)],
        request(MLU, 1, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardInsufficientCore",
        id="TestDevices_Fit/fit fail: core not enough",
    ),
    pytest.param(
        [mlu("dev-0", totalmem=128)],
        request("OtherType", 1, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardTypeMismatch",
        id="TestDevices_Fit/fit fail: type mismatch",
    ),
    pytest.param(
        [mlu("dev-1")],
        request(MLU, 2, 512, 0, 50),
        {"cambricon.com/use-gpuuuid": "dev-0"},
        False,
        0,
        [],
        "1/1 CardUuidMismatch",
        id="TestDevices_Fit/fit fail: user assign use uuid mismatch",
    ),
    pytest.param(
        [mlu("dev-0")],
        request(MLU, 2, 512, 0, 50),
        {"cambricon.com/nouse-gpuuuid": "dev-0"},
        False,
        0,
        [],
        "1/1 CardUuidMismatch",
        id="TestDevices_Fit/fit fail: user assign no use uuid match",
    ),
    pytest.param(
        [mlu("dev-0", used=100)],
        request(MLU, 1, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardTimeSlicingExhausted",
        id="TestDevices_Fit/fit fail: card overused",
    ),
    pytest.param(
        [mlu("dev-0")],
        request(MLU, 1, 512, 0, 120),
        {},
        True,
        1,
        ["dev-0"],
        "",
        id="TestDevices_Fit/fit success: but core limit can't exceed 100",
    ),
    pytest.param(
        [mlu("dev-0", used=20)],
        request(MLU, 1, 512, 0, 100),
        {},
        False,
        0,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
        id="TestDevices_Fit/fit fail:  card exclusively",
    ),
    pytest.param(
        [mlu("dev-0", used=20, usedcores=100)],
        request(MLU, 1, 512, 0, 0),
        {},
        False,
        0,
        [],
        "1/1 CardComputeUnitsExhausted",
        id="TestDevices_Fit/fit fail:  CardComputeUnitsExhausted",
    ),
    pytest.param(
        [mlu("dev-0", used=20, usedcores=10)],
        request(MLU, 2, 512, 0, 20),
        {},
        False,
        1,
        [],
        "1/1 AllocatedCardsInsufficientRequest",
        id="TestDevices_Fit/fit fail:  AllocatedCardsInsufficientRequest",
    ),
    pytest.param(
        [mlu("dev-0", used=20, usedcores=10)],
        request(MLU, 1, 0, 10, 20),
        {},
        True,
        1,
        ["dev-0"],
        "",
        id="TestDevices_Fit/fit success:  memory percentage",
    ),
    pytest.param(
        [mlu("dev-0", used=1, totalmem=128)],
        request(MLU, 1, 64, 0, 50),
        {POLICY: "mutex"},
        False,
        0,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
        id="TestDevices_Fit/mutex policy rejects used device",
    ),
    pytest.param(
        [mlu("dev-0"), mlu("dev-1", index=1)],
        request(MLU, 3, 512, 0, 20),
        {},
        False,
        2,
        [],
        "2/2 AllocatedCardsInsufficientRequest",
        id="TestDevices_Fit/fit fail: partial allocation AllocatedCardsInsufficientRequest for multiple cards",
    ),
    pytest.param(
        [mlu("dev-0", totalmem=128, health=False)],
        request(MLU, 1, 64, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardNotHealth",
        id="TestDevices_Fit/fit fail: CardNotHealth",
    ),
]


@pytest.mark.parametrize(("devices", "req", "annotations", "ok", "length", "ids", "reason"), FIT_CASES)
def test_fit(devices, req, annotations, ok, length, ids, reason):
    out = fit(vendor, devices, req, annotations)
    assert (out.ok, out.reason) == (ok, reason)
    assert len(out.devices) == length
    if ok:
        assert [d.uuid for d in out.devices] == ids


def test_fit_resource_quota_whole_card_request_departure():
    """TestDevices_Fit_ResourceQuotaWholeCardRequest: HAMi denies (``1/1 ResourceQuotaNotFit``) a
    whole-card request over a namespace quota of 50 vmemory units. Deliberate departure
    (docs/device-rules.md, "Deliberate differences"): the simulation ignores namespace ResourceQuota,
    so it fits."""
    out = fit(vendor, [mlu("dev-0", totalmem=40960)], request(MLU, 1, 0, 100, 10))
    assert out.ok


@pytest.mark.parametrize(
    ("req", "ok", "reason"),
    [
        # one card of one card: only the type check can refuse it
        pytest.param(request(MLU, 1), True, "", id="Test_checkType/the same type"),
        pytest.param(
            request("TEST", 1), False, "1/1 CardTypeMismatch", id="Test_checkType/the different type"
        ),
    ],
)
def test_check_type(req, ok, reason):
    out = fit(vendor, [mlu("d")], req)
    assert (out.ok, out.reason) == (ok, reason)


def test_add_resource_usage():
    """TestDevices_AddResourceUsage/test add resource usage."""
    dev = usage("dev-0", usedcores=15, usedmem=2000)
    assert add_usage(vendor, dev, cdev("dev-0", MLU, usedmem=1024, usedcores=50)) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == (1, 65, 3024)
