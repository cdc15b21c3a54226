"""HAMi v2.10.0 ``pkg/device/enflame/device_test.go`` (DRS slices, ``Enflame``) and ``gcu_test.go``
(whole GCUs, ``GCU``), re-expressed against the engine's ``EnflameDrsVendor`` and ``EnflameGcuVendor``.

Ported from ``device_test.go``: ``TestGetNodeDevices_DRSAnnotation``, ``Test_checkType`` (through
Fit), ``TestGenerateResourceRequests`` and ``_ByMemoryCore``, ``TestFit_SelectProfileByRequest``,
``TestFit_SelectProfileByMemoryCoreRequest``, ``TestFit_ProfileNotFound``,
``TestFit_MutexRejectsUsedDevice``, ``TestFit_UnhealthyDeviceRejected``,
``TestFit_OversizedProfileRejected`` (its four scenarios); ``TestParseDRSCapacity_RejectsNaNAndInf``
through ``node_devices`` (the capacity values JSON can carry: NaN and infinities cannot appear in a JSON
registration); ``TestAddResourceUsage_ClampsOnOverflow`` and ``_ClampsOversizedSliceString`` through
``add_usage``: HAMi reads the slice count from the chosen device's ``CustomInfo["drsSlice"]``, which the
engine's ``ContainerDevice`` does not carry; the engine finds it from the device's profiles by the chosen
memory, so these cases use a device whose profile has that many slices.

Ported from ``gcu_test.go``: ``TestGCUDevices_GetNodeDevices``, ``TestGCUDevices_GenerateResourceRequests``,
``TestGCUDevices_Fit``, ``TestGCUDevices_AddResourceUsage``.

Not ported: ``TestClampToInt32`` and ``TestReadCustomInfoInt_RejectsNaNAndInf`` (helpers; the engine
builds the DRS ``custom_info`` itself from the registration, always with ints), the chosen device's
``CustomInfo`` (profile name and id) that ``TestFit_Select*`` also check (bind-time annotations, which the
engine does not write), ``TestMutateAdmission_ByMemoryCoreAPI`` / ``TestGCUDevices_MutateAdmission``
(admission webhook), ``TestPatchAnnotations_DRSFields`` / ``TestGCUDevices_PatchAnnotations``
(bind-time annotations), ``TestGCUDevices_CheckHealth`` / ``TestGCUDevices_NodeCleanUp`` /
``TestInitGCUDevice`` / ``TestGCUDevices_CommonWord`` (device-plugin handshake and registration
bookkeeping).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors import EnflameDrsVendor, EnflameGcuVendor
from tests.vendors.harness import EMPTY, add_usage, cdev, fit, node, node_devices, request_of, usage

ENFLAME, GCU = "Enflame", "GCU"
DRS, GCUS = EnflameDrsVendor(), EnflameGcuVendor()
DRS_CAPACITY = "enflame.com/gcu-drs-capacity"
MAX_INT32 = 2**31 - 1
DIRECT, BY_SPEC = 0, -1  # enflameRequestModeDirect / enflameRequestModeBySpec (MemPercentagereq)
PROFILES = {"1g.6gb": "0", "3g.20gb": "1", "6g.40gb": "2"}


def drs(profiles=PROFILES, **kw):
    """The Go tests' DRS device: 6 slices, 40960 MiB, no cores registered; the profiles in CustomInfo."""
    base = {"type": ENFLAME, "count": 6, "totalmem": 40960, "health": True}
    base.update(kw)
    info = {"minor": "0", "index": "0", "profiles": dict(profiles)}
    info.update(base.pop("extra_info", {}))
    return usage("node-a-enflame-drs-0", custom_info=info, **base)


# ---- device_test.go ---------------------------------------------------------------------------------
def test_get_node_devices_drs_annotation():
    """Go: TestGetNodeDevices_DRSAnnotation."""
    raw = (
        '{"devices":[{"index":"0","minor":"0","capacity":6}],'
        '"profiles":{"1g.6gb":"0","3g.20gb":"1","6g.40gb":"2"}}'
    )
    got = node_devices(DRS, node("node-a", annotations={DRS_CAPACITY: raw}))
    assert [(d.type, d.devmem, d.count, d.custom_info["minor"]) for d in got] == [(ENFLAME, 40960, 6, "0")]


@pytest.mark.parametrize(
    ("capacity", "count"),
    [
        pytest.param(
            "1e300",
            None,
            id="TestParseDRSCapacity_RejectsNaNAndInf/1e300",
        ),
        pytest.param("42", 42, id="TestParseDRSCapacity_RejectsNaNAndInf/float64(42)"),
        pytest.param(
            '"2147483648"',
            MAX_INT32,
            id='TestParseDRSCapacity_RejectsNaNAndInf/"2147483648"',
        ),
    ],
)
def test_parse_drs_capacity(capacity, count):
    raw = f'{{"devices":[{{"index":"0","minor":"0","capacity":{capacity}}}],"profiles":{{"1g.6gb":"0"}}}}'
    got = node_devices(DRS, node("node-a", annotations={DRS_CAPACITY: raw}))
    assert [d.count for d in got] == ([] if count is None else [count])


@pytest.mark.parametrize(
    ("request_type", "fits"),
    [
        pytest.param(ENFLAME, True, id="Test_checkType/the same type"),
        pytest.param(
            "test123",
            False,
            id="Test_checkType/the different type",
        ),
    ],
)
def test_check_type(request_type, fits):
    outcome = fit(DRS, [drs(totalcore=100, extra_info={"maxSlice": 6})], (1, request_type, 3, DIRECT, 0))
    assert outcome.ok is fits
    assert ("CardTypeMismatch" in outcome.reason) is not fits


@pytest.mark.parametrize(
    ("limits", "want"),
    [
        pytest.param(
            {"enflame.com/drs-gcu": "3"}, (1, ENFLAME, 3, DIRECT, 0), id="TestGenerateResourceRequests"
        ),
        pytest.param(
            {"enflame.com/gcu-memory": "20480", "enflame.com/gcu-core": "40"},
            (1, ENFLAME, 20480, BY_SPEC, 40),
            id="TestGenerateResourceRequests_ByMemoryCore",
        ),
    ],
)
def test_generate_resource_requests(limits, want):
    assert request_of(DRS, limits) == want


# (devices, request (nums, type, memreq, mem%, cores), annotations, fits, collected (usedmem, usedcores) or
# None, reason: exact, or a part the reason must contain when it starts with "~")
DRS_FIT = [
    pytest.param(
        [drs()],
        (1, ENFLAME, 3, DIRECT, 0),
        {},
        True,
        [(20480, 50)],
        "",
        id="TestFit_SelectProfileByRequest",
    ),
    pytest.param(
        [drs()],
        (1, ENFLAME, 20480, BY_SPEC, 40),
        {},
        True,
        [(20480, 50)],
        "",
        id="TestFit_SelectProfileByMemoryCoreRequest",
    ),
    pytest.param(
        [drs(profiles={"1g.6gb": "0"}, health=False)],
        (1, ENFLAME, 3, DIRECT, 0),
        {},
        False,
        None,
        "~ModeNotFit",
        id="TestFit_ProfileNotFound",
    ),
    pytest.param(
        [drs(count=2, used=1)],
        (1, ENFLAME, 3, DIRECT, 0),
        {"hami.io/gpu-scheduler-policy": "mutex"},
        False,
        None,
        "1/1 ExclusiveDeviceAllocateConflict",
        id="TestFit_MutexRejectsUsedDevice",
    ),
    pytest.param(
        [drs(health=False)],
        (1, ENFLAME, 3, DIRECT, 0),
        {},
        False,
        None,
        "~CardNotHealth",
        id="TestFit_UnhealthyDeviceRejected",
    ),
]
for number, (info, profiles) in enumerate(
    [
        ({}, {"4294967299g.4294967299gb": "0"}),
        ({}, {"4294967299g.20gb": "0"}),
        ({}, {"2g.4294967299gb": "0"}),
        ({"maxSlice": "1"}, {"2147483647g.20gb": "0"}),
    ]
):
    DRS_FIT.append(
        pytest.param(
            [drs(profiles=profiles, health=False, extra_info=info)],
            (1, ENFLAME, 3, 101, 0),
            {},
            False,
            [],
            None,
            id=f"TestFit_OversizedProfileRejected/{number}",
        )
    )


@pytest.mark.parametrize(("devices", "request_", "annotations", "fits", "chosen", "reason"), DRS_FIT)
def test_drs_fit(devices, request_, annotations, fits, chosen, reason):
    outcome = fit(DRS, devices, request_, annotations)
    assert outcome.ok is fits
    if chosen is not None:
        assert [(d.usedmem, d.usedcores) for d in outcome.devices] == chosen
    if reason is not None:
        if reason.startswith("~"):
            assert reason[1:] in outcome.reason
        else:
            assert outcome.reason == reason


@pytest.mark.parametrize(
    ("profile", "adds", "used"),
    [
        pytest.param(
            "2147483647g.20gb",
            2,
            MAX_INT32,
            id="TestAddResourceUsage_ClampsOnOverflow",
        ),
        pytest.param(
            "2147483648g.20gb",
            1,
            MAX_INT32,
            id="TestAddResourceUsage_ClampsOversizedSliceString",
        ),
    ],
)
def test_drs_add_resource_usage(profile, adds, used):
    dev = drs(profiles={profile: "0"}, extra_info={"maxSlice": 1})
    for _ in range(adds):
        assert add_usage(DRS, dev, cdev(dev.id, ENFLAME, usedmem=20 * 1024)) is None
    assert dev.used == used


# ---- gcu_test.go ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("capacity", "want"),
    [
        pytest.param(
            {"enflame.com/gcu": "2"},
            [(0, "testnode-GCU-0", 100, 100), (1, "testnode-GCU-1", 100, 100)],
            id="TestGCUDevices_GetNodeDevices/Test with valid node",
        ),
        pytest.param({}, [], id="TestGCUDevices_GetNodeDevices/Test with missing resource"),
    ],
)
def test_gcu_get_node_devices(capacity, want):
    got = node_devices(GCUS, node("testnode", capacity=capacity))
    assert [(d.index, d.id, d.devcore, d.devmem) for d in got] == want


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param(
            {"enflame.com/gcu": "3"},
            {},
            (3, GCU, 100, 100, 100),
            id="TestGCUDevices_GenerateResourceRequests/GCU resource set to limits",
        ),
        pytest.param(
            {},
            {"enflame.com/gcu": "2"},
            (2, GCU, 100, 100, 100),
            id="TestGCUDevices_GenerateResourceRequests/GCU resource set to requests",
        ),
        pytest.param({}, {}, EMPTY, id="TestGCUDevices_GenerateResourceRequests/GCU resource not set"),
    ],
)
def test_gcu_generate_resource_requests(limits, requests, want):
    assert request_of(GCUS, limits, requests) == want


def gcu(id="dev-0", **kw):
    base = {"type": GCU, "count": 1, "totalmem": 100, "totalcore": 100}
    base.update(kw)
    return usage(id, **base)


REQ = (1, GCU, 100, 100, 100)
GCU_FIT = [
    pytest.param(
        [gcu("dev-0"), gcu("dev-1", index=1)],
        REQ,
        True,
        1,
        ["dev-1"],
        "",
        id="TestGCUDevices_Fit/fit success",
    ),
    pytest.param(
        [gcu()],
        (1, "OtherType", 100, 100, 100),
        False,
        0,
        [],
        "1/1 CardTypeMismatch",
        id="TestGCUDevices_Fit/fit fail: type mismatch",
    ),
    pytest.param(
        [gcu(used=1)],
        REQ,
        False,
        0,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
        id="TestGCUDevices_Fit/fit fail: device already used",
    ),
    pytest.param(
        [gcu()],
        (2, GCU, 100, 100, 100),
        False,
        1,
        ["dev-0"],
        "1/1 AllocatedCardsInsufficientRequest",
        id="TestGCUDevices_Fit/fit fail: insufficient devices",
    ),
    pytest.param(
        [gcu("dev-0"), gcu("dev-1", index=1)],
        (3, GCU, 100, 100, 100),
        False,
        2,
        [],
        "2/2 AllocatedCardsInsufficientRequest",
        id="TestGCUDevices_Fit/fit fail: partial allocation AllocatedCardsInsufficientRequest for multiple cards",
    ),
    pytest.param(
        [gcu(health=False)],
        REQ,
        False,
        0,
        [],
        "1/1 CardNotHealth",
        id="TestGCUDevices_Fit/fit fail: CardNotHealth",
    ),
]


@pytest.mark.parametrize(("devices", "request_", "fits", "length", "ids", "reason"), GCU_FIT)
def test_gcu_fit(devices, request_, fits, length, ids, reason):
    outcome = fit(GCUS, devices, request_)
    assert outcome.ok is fits
    assert len(outcome.devices) == length
    if fits:
        assert [d.uuid for d in outcome.devices] == ids
    assert outcome.reason == reason


def test_gcu_add_resource_usage():
    """Go: TestGCUDevices_AddResourceUsage/test add resource usage."""
    dev = usage("dev-0")
    assert add_usage(GCUS, dev, cdev("dev-0", usedcores=50, usedmem=100)) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == (1, 50, 100)
