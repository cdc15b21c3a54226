"""HAMi v2.10.0 ``pkg/device/iluvatar/device_test.go`` as data, run against ``IluvatarVendor``.

Not ported (internals the engine does not expose): ``TestPatchAnnotations``, ``Test_MutateAdmission``,
``TestDevices_LockNode``, ``TestDevices_ReleaseNodeLock`` (admission and bind time).
``Test_checkType`` asserts the private type check; it is ported through ``fit``.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.iluvatar import IluvatarConfig, IluvatarVendor
from tests.vendors.harness import EMPTY, fit, node, node_devices, request, request_of, usage

CHIP = "MR-V100"
REGISTER = "hami.io/node-MR-V100-register"
POLICY = "hami.io/gpu-scheduler-policy"

vendor = IluvatarVendor(
    IluvatarConfig(CHIP, "iluvatar.ai/MR-V100-vgpu", "iluvatar.ai/MR-V100.vMem", "iluvatar.ai/MR-V100.vCore")
)


def card(id, *, used=0, count=100, totalmem=128, usedcores=0, health=True):
    return usage(
        id,
        count=count,
        used=used,
        totalmem=totalmem,
        totalcore=100,
        usedcores=usedcores,
        type=CHIP,
        health=health,
    )


def test_get_node_devices_exist_usage():
    """TestGetNodeDevices/exist device: the legacy 7-field format."""
    raw = "GPU-bad51c5a-ed4c-591d-91bf-c04a12e19eae,10,8192,100,MR-V100,0,true:"
    [got] = node_devices(vendor, node("node-01", annotations={REGISTER: raw}))
    assert (got.index, got.id, got.count, got.devcore, got.devmem, got.type, got.numa, got.health) == (
        0,
        "GPU-bad51c5a-ed4c-591d-91bf-c04a12e19eae",
        10,
        100,
        8192,
        CHIP,
        0,
        True,
    )
    assert got.device_vendor == CHIP


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("[]", id="TestGetNodeDevices/no device"),
        pytest.param("", id="TestGetNodeDevices/failed to unmarshal node devices"),
    ],
)
def test_get_node_devices_error(raw):
    """Go returns an error and no devices: the node is unregistered for this chip."""
    assert node_devices(vendor, node("node-02", annotations={REGISTER: raw})) == []


def test_get_node_devices_no_annotation():
    """TestGetNodeDevices/no annotation: Go errors ``annos not found``; hami-sim answers "no devices of
    this chip" (the node is simply not an Iluvatar node; same effect: no devices)."""
    assert node_devices(vendor, node("node-03")) == []


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param(
            {
                "iluvatar.ai/MR-V100-vgpu": "1",
                "iluvatar.ai/MR-V100.vMem": "1000",
                "iluvatar.ai/MR-V100.vCore": "100",
            },
            {
                "iluvatar.ai/MR-V100-vgpu": "1",
                "iluvatar.ai/MR-V100.vMem": "1000",
                "iluvatar.ai/MR-V100.vCore": "100",
            },
            (1, CHIP, 256000, 0, 100),
            id="Test_GenerateResourceRequests/all resources set to limits and requests",
        ),
        pytest.param(
            {}, {}, None, id="Test_GenerateResourceRequests/all resources don't set to limits and requests"
        ),
        pytest.param(
            {"iluvatar.ai/MR-V100-vgpu": "1"},
            {"iluvatar.ai/MR-V100-vgpu": "1"},
            (1, CHIP, 0, 100, 0),
            id="Test_GenerateResourceRequests/resourcemem don't set to limits and requests",
        ),
        pytest.param(
            {"iluvatar.ai/MR-V100-vgpu": "1", "iluvatar.ai/MR-V100.vMem": "16Gi"},
            {},
            None,
            id="Test_GenerateResourceRequests/memory overflowing int32 is rejected, not truncated to zero",
        ),
        pytest.param(
            {"iluvatar.ai/MR-V100-vgpu": "1", "iluvatar.ai/MR-V100.vMem": "16.0Gi"},
            {},
            None,
            id="Test_GenerateResourceRequests/decimal-form memory request is rejected, not treated as zero",
        ),
    ],
)
def test_generate_resource_requests(limits, requests, want):
    assert request_of(vendor, limits, requests) == (want or EMPTY)


FIT_CASES = [
    pytest.param(
        [card("dev-0"), card("dev-1")],
        request(CHIP, 1, 64, 0, 50),
        {},
        True,
        1,
        ["dev-1"],
        "",
        id="Test_Fit/fit success",
    ),
    pytest.param(
        [card("dev-0")],
        request(CHIP, 1, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardInsufficientMemory",
        id="Test_Fit/fit fail: memory not enough",
    ),
    pytest.param(
        [card("dev-0", usedcores=100)],
        request(CHIP, 1, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardInsufficientMemory",
        id="Test_Fit/fit fail: core not enough",
    ),
    pytest.param(
        [card("dev-0")],
        request("OtherType", 1, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardTypeMismatch",
        id="Test_Fit/fit fail: type mismatch",
    ),
    pytest.param(
        [card("dev-0", used=1, count=2)],
        request(CHIP, 1, 64, 0, 50),
        {POLICY: "mutex"},
        False,
        0,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
        id="Test_Fit/mutex policy rejects used device",
    ),
    pytest.param(
        [card("dev-0", health=False)],
        request(CHIP, 1, 64, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardNotHealth",
        id="Test_Fit/fit fail: CardNotHealth",
    ),
    pytest.param(
        [card("dev-0", used=1)],
        request(CHIP, 1, 64, 0, 50),
        {POLICY: "mutex"},
        False,
        0,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
        id="TestFit_MutexRejectsUsedDevice",
    ),
    pytest.param(
        [card("d")], request(CHIP, 1, 64), {}, True, 1, ["d"], "", id="Test_checkType/the same type"
    ),
    pytest.param(
        [card("d")],
        request("test123", 1, 64),
        {},
        False,
        0,
        [],
        "1/1 CardTypeMismatch",
        id="Test_checkType/the different type",
    ),
]


@pytest.mark.parametrize(("devices", "req", "annotations", "ok", "length", "ids", "reason"), FIT_CASES)
def test_fit(devices, req, annotations, ok, length, ids, reason):
    out = fit(vendor, devices, req, annotations)
    assert (out.ok, out.reason) == (ok, reason)
    assert len(out.devices) == length
    if ok:
        assert [d.uuid for d in out.devices] == ids
