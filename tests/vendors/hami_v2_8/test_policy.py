"""HAMi v2.8.3 ``pkg/scheduler/policy/gpu_policy_test.go`` as data, run under the v2.8 rules.

Ported: ``TestDeviceUsageList_Less`` (through the engine's device sort: NUMA node first, then score)
and ``TestComputeScore`` (the device score before v2.9.0: every request counts its device count and
cores on every card, whatever its type, and a memory percentage below 100 counts as no memory).

Not ported: ``TestDeviceUsageListLen`` and ``TestSwap`` (Go container helpers, no rule).
"""

from __future__ import annotations

import pytest

from tests.vendors.harness import for_release, request, usage

h = for_release("2.8")
GO = "pkg/scheduler/policy/gpu_policy_test.go"


def case(test: str, name: str) -> str:
    return f"{GO}::{test}/{name}"


@pytest.mark.parametrize(
    ("policy", "first", "second", "expected"),
    [
        pytest.param("binpack", (0, 10), (0, 20), True, id=case("TestDeviceUsageList_Less", "Binpack policy with same Numa")),
        pytest.param("binpack", (1, 10), (0, 20), True, id=case("TestDeviceUsageList_Less", "Binpack policy with different Numa true")),
        pytest.param("binpack", (0, 10), (1, 20), False, id=case("TestDeviceUsageList_Less", "Binpack policy with different Numa false")),
        pytest.param("spread", (0, 10), (0, 20), False, id=case("TestDeviceUsageList_Less", "Spread policy with same Numa")),
        pytest.param("spread", (1, 10), (0, 20), False, id=case("TestDeviceUsageList_Less", "Spread policy with different Numa false")),
        pytest.param("spread", (0, 10), (1, 20), True, id=case("TestDeviceUsageList_Less", "Spread policy with different Numa true")),
    ],
)  # fmt: skip
def test_device_usage_list_less(policy, first, second, expected):
    assert h.less(policy, first, second) is expected


# the device of every TestComputeScore case (no type: the v2.8.3 score does not read it)
DEVICE = {"count": 10, "totalcore": 4, "totalmem": 8192, "used": 2, "usedcores": 1, "usedmem": 2048}


@pytest.mark.parametrize(
    ("requests", "expected"),
    [
        pytest.param({}, 7.0, id=case("TestComputeScore", "ContainerDeviceRequests has no data")),
        pytest.param({"container1": request("type1", 1, 1024, 0, 1), "container2": request("type2", 2, 0, 50, 2)},
                     18.75, id=case("TestComputeScore", "ContainerDeviceRequests has  data")),
        pytest.param({"container1": request("type1", 1, 1024, 30, 1), "container2": request("type2", 2, 200, 101, 3)},
                     20.24414, id=case("TestComputeScore", "ContainerDeviceRequests has  data#01")),
        pytest.param({"container1": request("type1", 1, 1024, 30, 1), "container2": request("type2", 2, 200, 30, 3)},
                     20.0, id=case("TestComputeScore", "ContainerDeviceRequests has  data#02")),
    ],
)  # fmt: skip
def test_compute_score(requests, expected):
    assert h.compute_score(usage("test-device", **DEVICE), requests) == pytest.approx(expected, rel=1e-6)
