"""HAMi v2.9.0 ``pkg/device/vastai/device_test.go`` ``TestDevices_Fit`` as data, under the v2.9 rules.

v2.9.0's table has six cases. Five rows read as v2.10.0's and are taken from
``hami_v2_10/test_vastai.py``; v2.9.0's assertions differ (it checks the devices returned only for a
fit), so they are run with v2.9.0's. The sixth, "fit fail:  AllocatedCardsInsufficientRequest", is
v2.9.0's own: it expects no device returned where v2.10.0 expects the one collected, which v2.9.0's
assertions leave unchecked; the reason is "1/1 AllocatedCardsInsufficientRequest" in both. v2.9.0 has no mutex, partial-allocation, unhealthy or
die-mode mutex cases (those came with #2011, #2238 and #2260). The other Vastai tests read as at
v2.10.0 and are replayed by ``test_unchanged.py``.
"""

from __future__ import annotations

import pytest

from tests.vendors.hami_v2_10 import test_vastai as v2_10
from tests.vendors.harness import under_release

GO = "pkg/device/vastai/device_test.go"
SAME = (
    "fit success",
    "fit fail: type mismatch",
    "fit fail: user assign use uuid mismatch",
    "fit fail: user assign no use uuid match",
    "fit fail: card overused",
)
ROWS = {p.id.split("/", 1)[1]: p.values for p in v2_10.FIT_CASES}
CASES = [pytest.param(*ROWS[name], id=f"{GO}::TestDevices_Fit/{name}") for name in SAME] + [
    pytest.param(
        [v2_10.card()],
        (2, v2_10.VASTAI, 0, 0, 0),
        {},
        False,
        None,  # not checked by the Go test for a failed fit
        [],
        "1/1 AllocatedCardsInsufficientRequest",
        id=f"{GO}::TestDevices_Fit/fit fail:  AllocatedCardsInsufficientRequest",
    )
]


@pytest.mark.parametrize(("devices", "request_", "annotations", "fits", "length", "ids", "reason"), CASES)
def test_fit(devices, request_, annotations, fits, length, ids, reason):
    with under_release("2.9"):
        outcome = v2_10.fit(v2_10.VENDOR, devices, request_, annotations)
    assert outcome.ok is fits
    if fits:
        assert len(outcome.devices) == length and v2_10.fit_ids(outcome) == ids
    assert outcome.reason == reason
