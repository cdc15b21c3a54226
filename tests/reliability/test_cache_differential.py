"""Proof by difference: the cached path answers exactly as a fresh simulator with no memo at all
(``differential.check_cached_against_fresh`` says what is generated). Seeded and CI-sized
(``differential.PROOF``); ``test_differential_catches_bugs.py`` checks that it fails when a cache
is wrong."""

from __future__ import annotations

import pytest
from hypothesis import event, given

from hami_sim.engine.simulate import Simulator
from tests.reliability.differential import (
    ALL_VENDORS,
    PROOF,
    UUID_SHARING,
    check_cached_against_fresh,
    proof_arguments,
    resource_roles,
    vendor_nodes,
    vendor_pod,
)


@pytest.mark.engine
@pytest.mark.parametrize("vendor", ALL_VENDORS)
@PROOF
@given(**proof_arguments())
def test_the_cached_path_answers_as_a_fresh_simulator(vendor, data, budget):
    outcomes = check_cached_against_fresh(vendor, data, budget)
    event(f"fits: {sorted(outcomes)}")


def _fits_and_fails(vendor: str) -> tuple[set[bool], bool]:
    """Over a fixed set of requests: the outcomes on ``vendor``'s registrations, and whether a
    registration's zero-usage verdict was shared with another of its shape (UUIDs differ)."""
    nodes = vendor_nodes(vendor)
    outcomes: set[bool] = set()
    shared = False
    for i, amounts in enumerate(
        ({"count": 1}, {"count": 1, "mem": 1, "core": 10}, {"count": 1, "mem": 10**6}, {"count": 64})
    ):
        sim = Simulator()
        ctx = sim.pod_context(vendor_pod(resource_roles(sim, vendor), [amounts], {}, i))
        outcomes |= {v.fits for v in sim.filter_nodes(ctx, nodes[:1])}
        before = sim.cache.lru.hits
        outcomes |= {v.fits for v in sim.filter_nodes(ctx, nodes[1:2])}
        shared |= sim.cache.lru.hits > before  # (g-b is new: a hit is its shape's verdict)
        outcomes |= {v.fits for v in sim.filter_nodes(ctx, nodes[2:3])}
    return outcomes, shared


@pytest.mark.engine
@pytest.mark.parametrize("vendor", ALL_VENDORS)
def test_every_vendor_has_pods_that_fit_and_pods_that_fail_and_shares_where_it_may(vendor):
    """The property test above reaches both outcomes on every vendor, and the UUID-only sharing
    applies exactly to the vendors listed (a vendor added to or dropped from it is a decision)."""
    outcomes, shared = _fits_and_fails(vendor)
    assert outcomes == {True, False}
    assert shared == (vendor in UUID_SHARING)
