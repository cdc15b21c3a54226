"""HAMi v2.8.3 ``pkg/device/nvidia/device_test.go`` ``TestDevices_Fit`` as data, under the v2.8 rules
(the sliced vendors' twelve cases, ``tests/vendors/sliced_fit.py``, plus its unhealthy-card case:
the same values as v2.9.0's).

Ported elsewhere: ``Test_checkUUID`` and ``Test_checkType`` (private helpers taking a v2.8.3 device
struct), in ``tests/vendors/test_selection_lists.py``. Not ported: the admission, bind,
device-plugin and ResourceQuota tests (as for v2.9.0).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.nvidia import NvidiaConfig, NvidiaVendor
from tests.vendors.harness import fit_ids, for_release, request, usage
from tests.vendors.sliced_fit import V2_9_NAMES, sliced_fit_cases

h = for_release("2.8")
GO = "pkg/device/nvidia/device_test.go"
NV = "NVIDIA"
vendor = NvidiaVendor(NvidiaConfig())

FIT_CASES = [
    *sliced_fit_cases(
        "TestDevices_Fit", NV, "nvidia.com/use-gpuuuid", "nvidia.com/nouse-gpuuuid", names=V2_9_NAMES, go_file=GO
    ),
    pytest.param(
        [usage("dev-0", type=NV, count=100, totalmem=1280, totalcore=100, used=20, usedcores=10, health=False)],
        request(NV, 1, 0, 10, 20), {}, False, 0, [], "1/1 CardNotHealth",
        id=f"{GO}::TestDevices_Fit/fit fail:  CardNotHealth",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("devices", "request_", "annotations", "fits", "length", "ids", "reason"), FIT_CASES)
def test_devices_fit(devices, request_, annotations, fits, length, ids, reason):
    outcome = h.fit(vendor, devices, request_, annotations)
    assert outcome.ok is fits
    if fits:
        assert len(outcome.devices) == length and fit_ids(outcome) == ids
    assert outcome.reason == reason
