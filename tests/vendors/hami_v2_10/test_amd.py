"""HAMi v2.10.0 ``pkg/device/amd/device_test.go`` as data, run against ``AmdVendor``.

Not ported (internals the engine does not expose): ``Test_MutateAdmission`` (admission webhook;
hami-sim does not mutate pods), ``Test_PatchAnnotations`` (bind-time pod annotations).
``Test_checkType`` and ``TestCheckAMDType`` assert the private type check; they are ported through
``fit`` (a rejected type shows as ``CardTypeMismatch``).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.amd import AmdConfig, AmdVendor
from tests.vendors.harness import EMPTY, fit, node, node_devices, request, request_of, usage

AMD = "AMD"
USE_TYPE = "amd.com/use-gputype"
NOUSE_TYPE = "amd.com/nouse-gputype"
USE_UUID = "amd.com/use-gpu-uuid"
REGISTER = "hami.io/node-amd-register"

vendor = AmdVendor(AmdConfig("amd.com/gpu", "amd.com/gpu-mem", "amd.com/gpu-core-pct"))


def amd(
    id,
    *,
    index=0,
    count=2,
    used=0,
    totalmem=1000,
    usedmem=0,
    totalcore=100,
    usedcores=0,
    type=AMD,
    health=True,
):
    return usage(
        id,
        index=index,
        count=count,
        used=used,
        totalmem=totalmem,
        usedmem=usedmem,
        totalcore=totalcore,
        usedcores=usedcores,
        type=type,
        health=health,
        custom_info={},
    )


# -- Test_GetNodeDevices -------------------------------------------------------------------------


def test_get_node_devices_decodes_json_and_sets_vendor():
    """Test_GetNodeDevices: one device, ``DeviceVendor`` = AMD."""
    raw = (
        '[{"id":"GPU-0","index":0,"count":1,"devmem":8192,"devcore":100,"type":"amd","numa":0,"health":true}]'
    )
    [got] = node_devices(vendor, node("node-1", annotations={REGISTER: raw}))
    assert (got.id, got.type, got.device_vendor) == ("GPU-0", "amd", AMD)


def test_get_node_devices_without_annotation():
    """Test_GetNodeDevices (second half): Go errors ``annos not found``; hami-sim's vendor interface
    answers "no devices of this vendor" for a node without the annotation (deliberate: the node is
    simply not an AMD node; Go's error only marks it unregistered for AMD, with the same effect)."""
    assert node_devices(vendor, node("node-2")) == []


def test_get_node_devices_empty_list_is_an_error():
    """Same function in device.go: ``[]`` -> error ``no gpu found on node``, no devices."""
    assert node_devices(vendor, node("node-1", annotations={REGISTER: "[]"})) == []


# -- Test_GenerateResourceRequests ---------------------------------------------------------------

MAX32 = 2**31 - 1


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param(
            {"amd.com/gpu": 2, "amd.com/gpu-mem": 4096, "amd.com/gpu-core-pct": 33},
            {"amd.com/gpu": 99, "amd.com/gpu-mem": 99, "amd.com/gpu-core-pct": 99},
            (2, AMD, 4096, 0, 33),
            id="Test_GenerateResourceRequests/parses limits only",
        ),
        pytest.param(
            {"amd.com/gpu-mem": 4096, "amd.com/gpu-core-pct": 33},
            {},
            None,
            id="Test_GenerateResourceRequests/no gpu limits -> empty",
        ),
        pytest.param(
            {"amd.com/gpu": 1, "amd.com/gpu-mem": 4096},
            {},
            (1, AMD, 4096, 0, 100),
            id="Test_GenerateResourceRequests/defaults an omitted core limit to 100 percent",
        ),
        pytest.param({"amd.com/gpu": 0}, {}, None, id="Test_GenerateResourceRequests/rejects zero count"),
        pytest.param(
            {"amd.com/gpu": MAX32 + 1}, {}, None, id="Test_GenerateResourceRequests/rejects overflowing count"
        ),
        pytest.param(
            {"amd.com/gpu": 1, "amd.com/gpu-mem": -1},
            {},
            None,
            id="Test_GenerateResourceRequests/rejects negative memory",
        ),
        pytest.param(
            {"amd.com/gpu": 1, "amd.com/gpu-mem": MAX32 + 1},
            {},
            None,
            id="Test_GenerateResourceRequests/rejects overflowing memory",
        ),
        pytest.param(
            {"amd.com/gpu": 1, "amd.com/gpu-core-pct": 0},
            {},
            None,
            id="Test_GenerateResourceRequests/rejects zero core percentage",
        ),
        pytest.param(
            {"amd.com/gpu": 1, "amd.com/gpu-core-pct": 101},
            {},
            None,
            id="Test_GenerateResourceRequests/rejects excessive core percentage",
        ),
    ],
)
def test_generate_resource_requests(limits, requests, want):
    assert request_of(vendor, limits, requests) == (want or EMPTY)


# -- TestDevices_Fit -----------------------------------------------------------------------------
# (devices, request, annotations, ok, [(uuid, usedmem, usedcores, type)] or the reason substring)


@pytest.mark.parametrize(
    ("devices", "req", "annotations", "want"),
    [
        pytest.param(
            [amd("dev-0", count=2), amd("dev-1", index=1, count=12)],
            request(AMD, 2),
            {},
            [("dev-1", 1000, 100, AMD), ("dev-0", 1000, 100, AMD)],
            id="TestDevices_Fit/allocate two whole cards",
        ),
        pytest.param(
            [amd("dev-0", totalcore=10), amd("dev-1", index=1, count=12)],
            request(AMD, 1, 500, 0, 50),
            {},
            [("dev-1", 500, 50, AMD)],
            id="TestDevices_Fit/core percentage maps per device",
        ),
        pytest.param(
            [amd("dev-0", type="AMD_Instinct_MI300X_VF")],
            request(AMD, 1, 100, 0, 10),
            {},
            [("dev-0", 100, 10, "AMD_Instinct_MI300X_VF")],
            id="TestDevices_Fit/retains the registered product type in the allocation",
        ),
        pytest.param(
            [amd("dev-0", totalcore=64)],
            request(AMD, 1, 100, 0, 1),
            {},
            [("dev-0", 100, 1, AMD)],
            id="TestDevices_Fit/clamps a positive percentage to at least one CU",
        ),
        pytest.param(
            [amd("dev-0", totalcore=64)],
            request(AMD, 1, 100, 0, 101),
            {},
            [("dev-0", 100, 64, AMD)],
            id="TestDevices_Fit/clamps a core request to the device total",
        ),
        pytest.param(
            [amd("dev-0", usedmem=900)],
            request(AMD, 1, 500, 0, 10),
            {},
            "CardInsufficientMemory",
            id="TestDevices_Fit/insufficient memory",
        ),
        pytest.param(
            [amd("dev-0", totalcore=10, usedcores=9)],
            request(AMD, 1, 100, 0, 100),
            {},
            "CardInsufficientCore",
            id="TestDevices_Fit/insufficient core",
        ),
        pytest.param(
            [amd("dev-1")],
            request(AMD, 1, 100, 0, 10),
            {USE_UUID: "dev-0"},
            "CardUuidMismatch",  # HAMi CardUUIDMismatch
            id="TestDevices_Fit/uuid mismatch (use)",
        ),
        pytest.param(
            [amd("dev-0", used=2)],
            request(AMD, 1, 100, 0, 10),
            {},
            "CardTimeSlicingExhausted",
            id="TestDevices_Fit/time slicing exhausted",
        ),
        pytest.param(
            [amd("dev-0", health=False)],
            request(AMD, 1, 100, 0, 10),
            {},
            "CardNotHealth",
            id="TestDevices_Fit/unhealthy device is rejected",
        ),
        # Test_checkType, through Fit: the request type must be AMD (case-insensitive), the card
        # type must pass the use/nouse lists
        pytest.param(
            [amd("d", type="AMD-MI300X")],
            request(AMD, 1, 100),
            {},
            [("d", 100, 0, "AMD-MI300X")],
            id="Test_checkType/no annotations",
        ),
        pytest.param(
            [amd("d", type="AMD-MI300X")],
            request(AMD, 1, 100),
            {USE_TYPE: "MI250"},
            "CardTypeMismatch",
            id="Test_checkType/use type MI250 not found",
        ),
        pytest.param(
            [amd("d", type="AMD-MI300X")],
            request("other", 1, 100),
            {},
            "CardTypeMismatch",
            id="Test_checkType/other request type",
        ),
    ],
)
def test_fit(devices, req, annotations, want):
    out = fit(vendor, devices, req, annotations)
    if isinstance(want, str):
        assert not out.ok and want in out.reason
    else:
        assert out.ok, out.reason
        assert [(d.uuid, d.usedmem, d.usedcores, d.type) for d in out.devices] == want


# -- TestCheckAMDType (through Fit on one card) ------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "card_type", "want"),
    [
        pytest.param({}, "MI300X", True, id="TestCheckAMDType/no annotations"),
        pytest.param({USE_TYPE: "MI300"}, "MI300X", True, id="TestCheckAMDType/matching use type"),
        pytest.param({USE_TYPE: "MI250"}, "MI300X", False, id="TestCheckAMDType/non-matching use type"),
        pytest.param(
            {NOUSE_TYPE: "MI300"}, "MI300X", False, id="TestCheckAMDType/matching nouse type excludes card"
        ),
        pytest.param(
            {NOUSE_TYPE: "MI250"}, "MI300X", True, id="TestCheckAMDType/non-matching nouse type keeps card"
        ),
        pytest.param(
            {NOUSE_TYPE: ""}, "MI300X", True, id="TestCheckAMDType/empty nouse annotation keeps card"
        ),
        pytest.param({USE_TYPE: ""}, "MI300X", True, id="TestCheckAMDType/empty use annotation keeps card"),
        pytest.param(
            {NOUSE_TYPE: "   "},
            "MI300X",
            True,
            id="TestCheckAMDType/whitespace-only nouse annotation keeps card",
        ),
        pytest.param(
            {USE_TYPE: "   "}, "MI300X", True, id="TestCheckAMDType/whitespace-only use annotation keeps card"
        ),
        pytest.param(
            {NOUSE_TYPE: "MI250,"},
            "MI300X",
            True,
            id="TestCheckAMDType/nouse with trailing comma only excludes named type",
        ),
        pytest.param(
            {NOUSE_TYPE: ",MI250"},
            "MI300X",
            True,
            id="TestCheckAMDType/nouse with leading comma only excludes named type",
        ),
        pytest.param(
            {NOUSE_TYPE: " MI250 , "},
            "MI250X",
            False,
            id="TestCheckAMDType/nouse with blank member still excludes named type",
        ),
        pytest.param(
            {NOUSE_TYPE: ", "}, "MI300X", True, id="TestCheckAMDType/nouse with only commas keeps card"
        ),
        pytest.param(
            {USE_TYPE: "MI300,"},
            "MI250X",
            False,
            id="TestCheckAMDType/use with trailing comma matches named type only",
        ),
        pytest.param(
            {USE_TYPE: ", "},
            "MI300X",
            False,
            id="TestCheckAMDType/use with only commas rejects card",
        ),
    ],
)
def test_check_amd_type(annotations, card_type, want):
    out = fit(vendor, [amd("d", type=card_type)], request(AMD, 1, 100), annotations)
    assert out.ok is want, out.reason
    if not want:
        assert out.reason == "1/1 CardTypeMismatch"
