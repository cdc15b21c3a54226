"""HAMi v2.10.0 ``pkg/device/vastai/device_test.go``, re-expressed against the engine's Vastai vendor.

Ported: ``Test_GetNodeDevices``, ``Test_checkType`` (through Fit: a request of another type is one
``CardTypeMismatch``), ``Test_GenerateResourceRequests``, ``TestDevices_Fit``,
``TestDevices_AddResourceUsage``, and ``TestComputeBestCombination`` through Fit.

``computeBestCombination`` is internal to v2.10.0's Fit: in die mode (the first device's
``CustomInfo.DeviceStrategy`` is ``die``) Fit collects every acceptable die walking backward, then, when
it collected more than requested, keeps the best combination (largest AIC groups first). Each of its
cases is run here as a die-mode Fit whose devices are listed in reverse, so the backward walk hands
``computeBestCombination`` exactly the Go case's input list.

Not ported, because the engine does not simulate them: ``Test_MutateAdmission`` (admission webhook),
``Test_CheckHealth`` (device-plugin handshake annotations), ``Test_PatchAnnotations`` (bind-time pod
annotations), ``TestDevices_LockNode`` / ``TestDevices_ReleaseNodeLock`` (the node lock).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors import VastaiVendor
from tests.vendors.harness import EMPTY, add_usage, cdev, fit, fit_ids, node, node_devices, request_of, usage

VASTAI = "Vastai"
VENDOR = VastaiVendor()
REGISTER = "hami.io/node-va-register"
GPU = "vastaitech.com/va"


def card(id="dev-0", **kw):
    """The Go tests' Vastai device: one slot, no memory or cores registered, healthy."""
    base = {"type": VASTAI, "count": 1}
    base.update(kw)
    return usage(id, **base)


@pytest.mark.parametrize(
    ("annotations", "want"),
    [
        pytest.param({}, [], id="Test_GetNodeDevices/no annotation"),
        pytest.param(
            {
                REGISTER: '[{"id":"7-0","count":1,"devmem":32768,"type":"Vastai","health":true,"devicepairscore":{}}]'
            },
            [("7-0", 0, 1, 32768, 100, VASTAI, 0, True, "", VASTAI)],
            id="Test_GetNodeDevices/exist vastai device",
        ),
        pytest.param({REGISTER: ":"}, [], id="Test_GetNodeDevices/no vasta device"),
        pytest.param({REGISTER: ""}, [], id="Test_GetNodeDevices/node annotations not decode successfully"),
    ],
)
def test_get_node_devices(annotations, want):
    got = node_devices(VENDOR, node(annotations=annotations))
    assert [
        (d.id, d.index, d.count, d.devmem, d.devcore, d.type, d.numa, d.health, d.mode, d.device_vendor)
        for d in got
    ] == want


@pytest.mark.parametrize(
    ("request_type", "fits"),
    [
        pytest.param(VASTAI, True, id="Test_checkType/the same type"),
        pytest.param("test", False, id="Test_checkType/the different type"),
    ],
)
def test_check_type(request_type, fits):
    outcome = fit(VENDOR, [card()], (1, request_type, 0, 100, 0))
    assert outcome.ok is fits
    assert outcome.reason == ("" if fits else "1/1 CardTypeMismatch")


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param({}, {}, EMPTY, id="Test_GenerateResourceRequests/don't set to limits and request"),
        pytest.param(
            {GPU: "1"},
            {GPU: "1"},
            (1, VASTAI, 0, 100, 0),
            id="Test_GenerateResourceRequests/set to limits and request",
        ),
        pytest.param(
            {GPU: "1"}, {}, (1, VASTAI, 0, 100, 0), id="Test_GenerateResourceRequests/only set to limits"
        ),
        pytest.param(
            {}, {GPU: "1"}, (1, VASTAI, 0, 100, 0), id="Test_GenerateResourceRequests/only set to request"
        ),
    ],
)
def test_generate_resource_requests(limits, requests, want):
    assert request_of(VENDOR, limits, requests) == want


# (devices, request (nums, type, memreq, mem%, cores), annotations, fit, collected, ids, reason)
FIT_CASES = [
    pytest.param(
        [card("dev-0"), card("dev-1", index=1)],
        (1, VASTAI, 0, 0, 0),
        {},
        True,
        1,
        ["dev-1"],
        "",
        id="TestDevices_Fit/fit success",
    ),
    pytest.param(
        [card()],
        (1, "OtherType", 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardTypeMismatch",
        id="TestDevices_Fit/fit fail: type mismatch",
    ),
    pytest.param(
        [card("dev-1")],
        (1, VASTAI, 0, 0, 0),
        {"vastaitech.com/use-gpuuuid": "dev-0"},
        False,
        0,
        [],
        "1/1 CardUuidMismatch",
        id="TestDevices_Fit/fit fail: user assign use uuid mismatch",
    ),
    pytest.param(
        [card("dev-0")],
        (1, VASTAI, 0, 0, 0),
        {"vastaitech.com/nouse-gpuuuid": "dev-0"},
        False,
        0,
        [],
        "1/1 CardUuidMismatch",
        id="TestDevices_Fit/fit fail: user assign no use uuid match",
    ),
    pytest.param(
        [card(used=1)],
        (1, VASTAI, 0, 0, 0),
        {},
        False,
        0,
        [],
        "1/1 CardTimeSlicingExhausted",
        id="TestDevices_Fit/fit fail: card overused",
    ),
    pytest.param(
        [card()],
        (2, VASTAI, 0, 0, 0),
        {},
        False,
        1,
        [],
        "1/1 AllocatedCardsInsufficientRequest",
        id="TestDevices_Fit/fit fail:  AllocatedCardsInsufficientRequest",
    ),
    pytest.param(
        [card(used=1, count=2)],
        (1, VASTAI, 0, 0, 0),
        {"hami.io/gpu-scheduler-policy": "mutex"},
        False,
        0,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
        id="TestDevices_Fit/mutex policy rejects used device",
    ),
    pytest.param(
        [
            card("dev-0", count=100, totalmem=1280, totalcore=100),
            card("dev-1", index=1, count=100, totalmem=1280, totalcore=100),
        ],
        (3, VASTAI, 512, 0, 20),
        {},
        False,
        2,
        [],
        "2/2 AllocatedCardsInsufficientRequest",
        id="TestDevices_Fit/fit fail: partial allocation AllocatedCardsInsufficientRequest",
    ),
    pytest.param(
        [card(health=False)],
        (1, VASTAI, 0, 0, 0),
        {},
        False,
        0,
        [],
        "1/1 CardNotHealth",
        id="TestDevices_Fit/fit fail: CardNotHealth",
    ),
]


def die(id, index, aic, **kw):
    """A die of a physical card (AIC) in die mode."""
    return card(id, index=index, custom_info={"DeviceStrategy": "die", "AIC": aic}, **kw)


FIT_CASES += [
    pytest.param(
        [die("dev-0", 0, "1", used=1, count=2), die("dev-1", 1, "1"), die("dev-2", 2, "2")],
        (1, VASTAI, 0, 0, 0),
        {"hami.io/gpu-scheduler-policy": "mutex"},
        True,
        1,
        ["dev-2"],
        "",
        id="TestDevices_Fit/mutex die mode rejects idle die on occupied card, picks die on free card",
    ),
    pytest.param(
        [die("dev-0", 0, "1", used=1, count=2), die("dev-1", 1, "1")],
        (1, VASTAI, 0, 0, 0),
        {"hami.io/gpu-scheduler-policy": "mutex"},
        False,
        0,
        [],
        "2/2 ExclusiveDeviceAllocateConflict",
        id="TestDevices_Fit/mutex die mode rejects all idle dies on an occupied card",
    ),
]


@pytest.mark.parametrize(("devices", "request_", "annotations", "fits", "length", "ids", "reason"), FIT_CASES)
def test_fit(devices, request_, annotations, fits, length, ids, reason):
    outcome = fit(VENDOR, devices, request_, annotations)
    assert outcome.ok is fits
    assert len(outcome.devices) == length
    if fits:
        assert fit_ids(outcome) == ids
    assert outcome.reason == reason


@pytest.mark.parametrize(
    ("before", "chosen", "after"),
    [pytest.param((1, 0, 0), (0, 0), (2, 0, 0), id="TestDevices_AddResourceUsage/test add resource usage")],
)
def test_add_resource_usage(before, chosen, after):
    used, usedcores, usedmem = before
    dev = usage("dev-0", used=used, usedcores=usedcores, usedmem=usedmem)
    assert add_usage(VENDOR, dev, cdev("dev-0", usedcores=chosen[0], usedmem=chosen[1])) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == after


# ---- TestComputeBestCombination, through a die-mode Fit (see the module docstring) ----------------
def dies(*aics):
    """Dies dev1..devN on the given AICs, listed in reverse so the backward walk visits dev1 first."""
    return [die(f"dev{i}", i, aic) for i, aic in reversed(list(enumerate(aics, start=1)))]


@pytest.mark.parametrize(
    ("devices", "nums", "fits", "ids"),
    [
        pytest.param(
            dies("1", "1", "1"),
            2,
            True,
            ["dev1", "dev2"],
            id="TestComputeBestCombination/single AIC group, sufficient to meet demand",
        ),
        pytest.param(
            dies("1", "1", "1", "2", "2", "3"),
            3,
            True,
            ["dev1", "dev2", "dev3"],
            id="TestComputeBestCombination/multiple AIC groups, select by count after sorting",
        ),
        pytest.param(
            dies("1", "1", "1", "2", "2", "3"),
            4,
            True,
            ["dev1", "dev2", "dev3", "dev4"],
            id="TestComputeBestCombination/multiple AIC groups, need to take across groups",
        ),
        pytest.param(
            dies("1", "1", "2"),
            5,
            False,
            ["dev1", "dev2", "dev3"],
            id="TestComputeBestCombination/request number exceeds available devices",
        ),
    ],
)
def test_compute_best_combination(devices, nums, fits, ids):
    outcome = fit(VENDOR, devices, (nums, VASTAI, 0, 100, 0))
    assert outcome.ok is fits
    assert fit_ids(outcome) == ids
