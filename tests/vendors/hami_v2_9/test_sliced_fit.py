"""HAMi v2.9.0 ``TestDevices_Fit`` of the sliced vendors as data, run under the 2.9 rules:
``pkg/device/hygon/device_test.go`` and ``pkg/device/mthreads/device_test.go`` (the twelve cases
of ``tests/vendors/sliced_fit.py`` both files hold at v2.9.0, with the same values; the Go test
compares the number of devices only when the Fit succeeds), and ``pkg/device/metax/device_test.go``'s
``TestMetaxDevices_Fit`` (the same table without its two UUID cases).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors import HygonVendor, MetaxGpuVendor, MthreadsVendor
from tests.vendors.harness import fit_ids, for_release
from tests.vendors.sliced_fit import V2_9_NAMES, sliced_fit_cases

h = for_release("2.9")
VENDORS = {"DCU": HygonVendor(), "Mthreads": MthreadsVendor(), "Metax-GPU": MetaxGpuVendor()}
CASES = (
    [
        pytest.param("DCU", *case.values, id=case.id)
        for case in sliced_fit_cases(
            "TestDevices_Fit",
            "DCU",
            "hygon.com/use-gpuuuid",
            "hygon.com/nouse-gpuuuid",
            names=V2_9_NAMES,
            go_file="pkg/device/hygon/device_test.go",
        )
    ]
    + [
        pytest.param("Mthreads", *case.values, id=case.id)
        for case in sliced_fit_cases(
            "TestDevices_Fit",
            "Mthreads",
            "mthreads.ai/use-gpuuuid",
            "mthreads.ai/nouse-gpuuuid",
            names=V2_9_NAMES,
            go_file="pkg/device/mthreads/device_test.go",
        )
    ]
    + [
        pytest.param("Metax-GPU", *case.values, id=case.id)
        for case in sliced_fit_cases(
            "TestMetaxDevices_Fit",
            "Metax-GPU",
            "metax-tech.com/use-gpuuuid",
            "metax-tech.com/nouse-gpuuuid",
            names=[n for n in V2_9_NAMES if "uuid" not in n],
            go_file="pkg/device/metax/device_test.go",
        )
    ]
)


@pytest.mark.parametrize(
    ("vendor", "devices", "request_", "annotations", "fits", "length", "ids", "reason"), CASES
)
def test_fit(vendor, devices, request_, annotations, fits, length, ids, reason):
    outcome = h.fit(VENDORS[vendor], devices, request_, annotations)
    assert outcome.ok is fits
    if fits:
        assert len(outcome.devices) == length
        assert fit_ids(outcome) == ids
    assert outcome.reason == reason
