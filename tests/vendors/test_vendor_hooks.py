"""What a backend declares beside HAMi's Devices interface, for the rest of hami-sim: the limits that
ask again for what a drained pod holds (the blind spot), whether its cards' capacity may be summed
(aggregate mode), and what live usage counts beside the allocated annotation (NVIDIA's MIG)."""

from __future__ import annotations

import pytest

from hami_sim.engine.blindspot import AGGREGATE_VENDORS
from hami_sim.engine.vendors import NvidiaConfig, NvidiaVendor, ResourceGetter, reservation_rules
from hami_sim.engine.vendors.nvidia_mig import MIG_ALLOCATIONS

from .helpers import VENDORS


@pytest.mark.parametrize(
    ("factor", "held", "asked"),
    [
        (1, (2, 12000, 30), (2, 12000, 30)),  # what a pod holds is what it asks again
        (1, (1, 0, 100), (1, 0, 100)),
        (3, (1, 3000, 0), (1, 3000, 0)),  # gpumem in memoryFactor units: 1000 x 3
        (3, (1, 3001, 0), (1, 3003, 0)),  # rounded up: never asks for less than it held
    ],
)
def test_nvidia_asks_again_for_what_a_pod_holds(factor, held, asked):
    vendor = NvidiaVendor(NvidiaConfig(memory_factor=factor))
    request = vendor.container_request(ResourceGetter(vendor.holding_limits(*held), {}))
    assert request is not None
    assert (request.nums, request.memreq, request.coresreq) == asked


def test_only_nvidia_re_asks_sums_capacity_and_counts_reservations():
    nvidia = [v for v in VENDORS if v.holding_limits(1, 1024, 10)]
    assert [v.common_word for v in nvidia] == ["NVIDIA"]
    assert {"NVIDIA"} == set(AGGREGATE_VENDORS)
    assert [rule.annotation for rule in reservation_rules()] == [MIG_ALLOCATIONS]
