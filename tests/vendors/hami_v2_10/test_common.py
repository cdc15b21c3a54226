"""HAMi v2.10.0 ``pkg/device/common/common_test.go``: the reason strings every vendor Fit aggregates."""

from __future__ import annotations

import pytest

from tests.vendors.harness import gen_reason, parse_reason


@pytest.mark.parametrize(
    ("reason", "want"),
    [
        pytest.param(
            "3/8 CardInsufficientMemory, 2/8 CardInsufficientCore, 3/8 CardNotHealth",
            {"CardInsufficientMemory": 3, "CardInsufficientCore": 2, "CardNotHealth": 3},
            id="TestParseReason/base test",
        ),
    ],
)
def test_parse_reason(reason, want):
    assert parse_reason(reason) == want
    # GenReason is its inverse up to order (it sorts the "<count>/<total> <Reason>" strings)
    assert gen_reason(want, 8) == ", ".join(sorted(reason.split(", ")))
