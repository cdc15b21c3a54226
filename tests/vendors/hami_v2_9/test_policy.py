"""HAMi v2.9.0 ``pkg/scheduler/policy/gpu_policy_test.go`` as data, run under the v2.9 rules.

Ported: ``TestDeviceUsageList_Less`` (through the engine's device sort: NUMA node first, then score,
under every policy at v2.9.0) and ``TestComputeScore`` (the device score, by request type since
v2.9.0, a card without slots, cores or memory scoring 0).

Not ported: ``TestDeviceUsageListLen``, ``TestSwap``, ``TestDeviceUsageListDeepCopy`` and
``TestDeviceListsScoreDeepCopy`` (Go container helpers, no rule).
"""

from __future__ import annotations

import pytest

from tests.vendors.harness import for_release, request, usage

h = for_release("2.9")
GO = "pkg/scheduler/policy/gpu_policy_test.go"


def case(test: str, name: str) -> str:
    return f"{GO}::{test}/{name}"


# (policy, first device (NUMA, score), second device, first sorts before second)
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


def dev(*, count, totalcore, totalmem, used=0, usedcores=0, usedmem=0, type="type1"):
    return usage("test-device", type=type, count=count, totalcore=totalcore, totalmem=totalmem,
                 used=used, usedcores=usedcores, usedmem=usedmem)  # fmt: skip


USED = {"count": 10, "totalcore": 4, "totalmem": 8192, "used": 2, "usedcores": 1, "usedmem": 2048}
EMPTY10 = {"count": 10, "totalcore": 10, "totalmem": 10000}


@pytest.mark.parametrize(
    ("device", "requests", "expected"),
    [
        pytest.param({"count": 0, "totalcore": 0, "totalmem": 0}, {}, 0.0,
                     id=case("TestComputeScore", "Zero capacity device returns score 0 without panic")),
        pytest.param({"count": 0, "totalcore": 8, "totalmem": 4096}, {}, 0.0,
                     id=case("TestComputeScore", "Partial zero capacity (Count=0) returns score 0 without panic")),
        pytest.param(USED, {}, 7.0, id=case("TestComputeScore", "ContainerDeviceRequests has no data")),
        pytest.param(USED, {"type1": request("type1", 4, 1024, 0, 1), "type2": request("type2", 2, 4096, 50, 2)},
                     11.75, id=case("TestComputeScore", "Filter other device types and ignore Nums for slots")),
        pytest.param(EMPTY10, {"type1": request("type1", 1, 0, 50, 2)}, 8.0,
                     id=case("TestComputeScore", "MemPercentagereq calculation evaluates correctly")),
        pytest.param(EMPTY10, {"container1": request("type1", 1, 0, 10, 1), "container2": request("type1", 1, 0, 20, 2),
                               "container3": request("type2", 1, 1000, 50, 5)},
                     8.0, id=case("TestComputeScore", "Filter other device types and aggregate same device types")),
    ],
)  # fmt: skip
def test_compute_score(device, requests, expected):
    assert h.compute_score(dev(**device), requests) == pytest.approx(expected, rel=1e-6)
