"""HAMi v2.9.0 ``pkg/device/enflame/device_test.go`` (the shared-GCU backend) as data, under the 2.9
rules: the Enflame vendor of a 2.9 simulator is ``EnflameSharedVendor`` (v2.10.0 replaced it with
DRS slices, #1872; ``HamiRules.enflame_drs``).

Ported: ``TestGetNodeDevices`` (the Go test compares index, ID, cores and memory),
``Test_GenerateResourceRequests``, ``TestDevices_Fit`` (the twelve cases of
``tests/vendors/sliced_fit.py``: the Go table is Hygon's with Enflame's type and UUID keys; the Go
test compares the number of devices only when the Fit succeeds) and
``TestDevices_AddResourceUsage``. Not ported: ``TestPatchAnnotations`` and ``Test_MutateAdmission``
(bind-time annotations and the admission webhook), ``Test_checkType`` (private; its two cases are
the type-mismatch Fit case and any fitting case). ``gcu_test.go`` (whole GCUs) reads as at v2.10.0
apart from its health cases and is not ported here.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.enflame import EnflameDrsVendor
from hami_sim.engine.vendors.enflame_shared import EnflameSharedVendor
from tests.vendors.harness import EMPTY, cdev, fit_ids, for_release, node, usage
from tests.vendors.sliced_fit import V2_9_NAMES, sliced_fit_cases

GO = "pkg/device/enflame/device_test.go"
v2_9 = for_release("2.9")
VENDOR = EnflameDrsVendor()  # what the device config builds; 2.9 swaps it for the shared backend
GCU, SHARE = "enflame.com/vgcu", "enflame.com/vgcu-percentage"


def test_a_2_9_simulator_shares_whole_gcus():
    assert isinstance(VENDOR.under(v2_9.rules), EnflameSharedVendor)


def test_get_node_devices():
    """Go: TestGetNodeDevices/Test with valid node (one GCU, a sharing factor of 6)."""
    devices = v2_9.node_devices(
        VENDOR, node("test", capacity={"enflame.com/gcu-count": "1", "enflame.com/shared-gcu": "6"})
    )
    assert [(d.index, d.id, d.devcore, d.devmem) for d in devices] == [(0, "test-enflame-0", 100, 100)]


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param({GCU: "1", SHARE: "15"}, {GCU: "1", SHARE: "15"}, (1, "Enflame", 15, 0, 0),
                     id=f"{GO}::Test_GenerateResourceRequests/all resources set to limits and requests"),
        pytest.param({}, {}, EMPTY,
                     id=f"{GO}::Test_GenerateResourceRequests/all resources don't set to limits and requests"),
        pytest.param({GCU: "1"}, {GCU: "1"}, (1, "Enflame", 100, 0, 0),
                     id=f"{GO}::Test_GenerateResourceRequests/resourcemem don't set to limits and requests"),
    ],
)  # fmt: skip
def test_generate_resource_requests(limits, requests, want):
    assert v2_9.request_of(VENDOR, limits, requests) == want


@pytest.mark.parametrize(
    ("devices", "request_", "annotations", "fits", "length", "ids", "reason"),
    sliced_fit_cases(
        "TestDevices_Fit",
        "Enflame",
        "enflame.com/use-gpuuuid",
        "enflame.com/nouse-gpuuuid",
        names=V2_9_NAMES,
        go_file=GO,
    ),
)
def test_fit(devices, request_, annotations, fits, length, ids, reason):
    outcome = v2_9.fit(VENDOR, devices, request_, annotations)
    assert outcome.ok is fits
    if fits:
        assert len(outcome.devices) == length and fit_ids(outcome) == ids
    assert outcome.reason == reason


def test_add_resource_usage():
    """Go: TestDevices_AddResourceUsage/test add resource usage."""
    dev = usage("dev-0", type="Enflame", used=0, usedcores=15, usedmem=2000)
    assert v2_9.add_usage(VENDOR, dev, cdev("dev-0", usedcores=50, usedmem=1024)) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == (1, 65, 3024)
