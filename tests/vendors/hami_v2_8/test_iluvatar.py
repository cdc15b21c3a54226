"""HAMi v2.8.3 ``pkg/device/iluvatar/device_test.go`` ``Test_Fit`` as data, under the 2.8 rules
(the Go test compares the devices when the Fit succeeds and their number either way, not the reason).

At v2.8.3 the Iluvatar Fit walks the cards from the first (fixed in v2.9.0, #1631): of two equal
cards it takes ``dev-0``.

Not ported: ``TestGetNodeDevices``, ``Test_GenerateResourceRequests`` and ``Test_checkType`` (the
v2.10.0 tables hold their cases), and what the engine does not simulate (admission, annotations at
bind time, node locks). The private ``Test_checkUUID`` is in ``tests/vendors/test_selection_lists.py``.
"""

from __future__ import annotations

import pytest

from tests.vendors.hami_v2_10 import test_iluvatar as v2_10
from tests.vendors.harness import fit_ids, for_release, request

h = for_release("2.8")
GO = "pkg/device/iluvatar/device_test.go"
CHIP = v2_10.CHIP
card = v2_10.card


@pytest.mark.parametrize(
    ("devices", "request_", "ok", "length", "ids"),
    [
        pytest.param([card("dev-0"), card("dev-1")], request(CHIP, 1, 64, 0, 50), True, 1, ["dev-0"],
                     id=f"{GO}::Test_Fit/fit success"),
        pytest.param([card("dev-0")], request(CHIP, 1, 512, 0, 50), False, 0, [],
                     id=f"{GO}::Test_Fit/fit fail: memory not enough"),
        pytest.param([card("dev-0", usedcores=100)], request(CHIP, 1, 512, 0, 50), False, 0, [],
                     id=f"{GO}::Test_Fit/fit fail: core not enough"),
        pytest.param([card("dev-0")], request("OtherType", 1, 512, 0, 50), False, 0, [],
                     id=f"{GO}::Test_Fit/fit fail: type mismatch"),
    ],
)  # fmt: skip
def test_fit(devices, request_, ok, length, ids):
    outcome = h.fit(v2_10.vendor, devices, request_)
    assert outcome.ok is ok and len(outcome.devices) == length
    if ok:
        assert fit_ids(outcome) == ids
