"""The HAMi release a simulator follows (``hami_sim/engine/hami_releases.py``): which releases are
read, what each rule is under each release, and what differs between two of them."""

from __future__ import annotations

import dataclasses

import pytest

from hami_sim.engine.hami_releases import (
    DEFAULT_RELEASE,
    INIT_APART,
    INIT_IGNORED,
    INIT_SUMMED,
    SUPPORTED_RELEASES,
    HamiReleaseError,
    HamiRules,
    parse_release,
    rule_differences,
    rules_for,
)
from hami_sim.engine.simulate import EngineConfig, Simulator
from tests.factories import container, gpu_node, pod


@pytest.mark.parametrize(
    ("text", "release"),
    [
        ("2.10", "2.10"),
        ("v2.10.0", "2.10"),
        ("2.9", "2.9"),
        ("2.9.0", "2.9"),
        ("v2.9.0", "2.9"),
        ("v2.8.3", "2.8"),
        ("2.8", "2.8"),
        (" 2.9 ", "2.9"),
    ],
)
def test_a_release_is_read_in_every_common_spelling(text, release):
    assert parse_release(text) == release


@pytest.mark.parametrize("text", ["2.7", "v2.11.0", "3.0", "latest", "", "2", "2.9.0.1", "v2.x"])
def test_an_unsupported_release_is_refused_naming_the_supported_ones(text):
    with pytest.raises(HamiReleaseError) as caught:
        parse_release(text)
    assert "2.8 (v2.8.3), 2.9 (v2.9.0), 2.10 (v2.10.0)" in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_the_default_is_the_newest_release():
    assert SUPPORTED_RELEASES == ("2.8", "2.9", "2.10")
    assert DEFAULT_RELEASE == "2.10" and rules_for(DEFAULT_RELEASE) == HamiRules()


@pytest.mark.parametrize(
    ("release", "init_containers"), [("2.8", INIT_IGNORED), ("2.9", INIT_SUMMED), ("v2.10.0", INIT_APART)]
)
def test_each_release_counts_init_containers_its_own_way(release, init_containers):
    assert rules_for(release).init_containers == init_containers


def test_the_differences_between_two_releases_name_the_rule_and_the_pull_request():
    [change] = [c for c in rule_differences("2.9", "2.10") if c.name == "init_containers"]
    assert change.pr == 1773 and "#1773" in change.description
    # both ways round, the same rules
    assert rule_differences("2.10", "2.9") == rule_differences("2.9", "2.10")
    # a rule that changed twice names both changes, the newer pull request first in ``pr``
    [twice] = [c for c in rule_differences("2.8", "2.10") if c.name == "init_containers"]
    assert twice.pr == 1773 and "#1650" in twice.description
    assert rule_differences("2.9", "2.9") == ()


def test_one_rule_taken_from_another_release_is_the_only_difference():
    mixed = dataclasses.replace(rules_for("2.9"), init_containers=rules_for("2.10").init_containers)
    assert "init_containers" not in {c.name for c in rule_differences(mixed, "2.10")}
    assert [c.name for c in rule_differences(mixed, "2.9")] == ["init_containers"]


# A pod whose init container (20000 MiB) is larger than its main container (10000 MiB), on one
# A10 of 23028 MiB: v2.10 runs the init container alone first, v2.9 adds the two up, v2.8 never
# counts the init container.
BIG_INIT = pod(containers=[container(gpumem=10000)], init=[container("init", gpumem=20000)])


@pytest.mark.parametrize(
    ("release", "fits", "reason", "usedmem"),
    [
        ("2.10", True, "", 20000),
        ("2.9", False, "1/1 CardInsufficientMemory", None),
        ("2.8", True, "", 10000),
    ],
)
def test_an_init_container_larger_than_the_main_one_on_a_full_card(release, fits, reason, usedmem):
    sim = Simulator(EngineConfig(hami_release=release, cache_bytes=0))
    ctx = sim.pod_context(BIG_INIT)
    [verdict] = sim.filter_nodes(ctx, [gpu_node("n", 1)])
    assert (verdict.fits, verdict.reason) == (fits, reason)
    if fits:
        state = sim.annotation_inventory(gpu_node("n", 1)).state("n")
        fit = sim.evaluate(ctx, "n", state)
        assert [d.usedmem for d in fit.device_fit.usage_after] == [usedmem]


def test_v2_9_adds_init_and_main_containers_up_when_they_fit_together():
    small = pod(containers=[container(gpumem=3000)], init=[container("init", gpumem=5000)])
    for release, usedmem in (("2.9", 8000), ("2.10", 5000), ("2.8", 3000)):
        sim = Simulator(EngineConfig(hami_release=release, cache_bytes=0))
        state = sim.annotation_inventory(gpu_node("n", 1)).state("n")
        fit = sim.evaluate(sim.pod_context(small), "n", state)
        assert fit.fits and [d.usedmem for d in fit.device_fit.usage_after] == [usedmem], release


def test_a_mixed_rule_set_overrides_the_release():
    mixed = dataclasses.replace(rules_for("2.9"), init_containers=INIT_APART)
    sim = Simulator(EngineConfig(hami_release="2.9", hami_rules=mixed, cache_bytes=0))
    [verdict] = sim.filter_nodes(sim.pod_context(BIG_INIT), [gpu_node("n", 1)])
    assert verdict.fits
