"""HAMi v2.8.3 ``pkg/device/amd/device_test.go`` as data, under the 2.8 rules: the whole-card AMD
backend (``tests/vendors/amd_cards_tables.py`` holds the cases; v2.10.0 replaced it with vGPU).

Not ported: ``Test_MutateAdmission`` and ``Test_PatchAnnotations`` (admission and bind time).
"""

from __future__ import annotations

import pytest

from tests.vendors import amd_cards_tables as T
from tests.vendors.harness import for_release

h = for_release("2.8")


@pytest.mark.parametrize(
    "check", [pytest.param(T.check_get_node_devices, id=f"{T.GO}::Test_GetNodeDevices/get node device")]
)
def test_get_node_devices(check):
    check(h)


@pytest.mark.parametrize(
    "check",
    [
        pytest.param(
            T.check_generate_resource_requests,
            id=f"{T.GO}::Test_GenerateResourceRequests/allocate amdgpu device",
        )
    ],
)
def test_generate_resource_requests(check):
    check(h)


@pytest.mark.parametrize(("devices", "req", "annotations", "fits", "ids", "reason"), T.FIT_CASES)
def test_devices_fit(devices, req, annotations, fits, ids, reason):
    T.check_fit(h, devices, req, annotations, fits, ids, reason)


@pytest.mark.parametrize(("request_type", "passes"), T.CHECK_TYPE)
def test_check_type(request_type, passes):
    T.check_type(h, request_type, passes)
