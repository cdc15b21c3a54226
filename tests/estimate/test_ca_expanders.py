"""CA's expanders (``expander/waste``, ``mostpods``, ``priority``, ``random``, ``factory``): their
test tables in our words, plus the GPU-aware least-waste under its own name."""

from __future__ import annotations

import pytest

from hami_sim.engine.estimate import (
    EstimateError,
    GroupOption,
    GroupTemplate,
    PendingPods,
    choose,
    estimate,
    expander_filter,
    parse_expander,
)
from hami_sim.engine.simulate import Simulator

from .helpers import ca_node, ca_pod, gpu_node

CPU_PER_POD = 500
MEM_PER_POD = 1000 * 1024 * 1024


def _least_waste(groups: list[tuple[str, int, int]], expander: str = "least-waste") -> str | None:
    """One pod of CA's least-waste test on one new node of each group (cpu, memory per pod units)."""
    templates = [
        GroupTemplate(name, ca_node(name, cpu * CPU_PER_POD, str(mem * MEM_PER_POD), pods=100))
        for name, cpu, mem in groups
    ]
    pods = [PendingPods(ca_pod("p", CPU_PER_POD, MEM_PER_POD), 1)]
    return estimate(Simulator(), pods, templates, parse_expander(expander)).chosen


@pytest.mark.parametrize(
    ("groups", "chosen"),
    [
        ([("balanced", 16, 16)], "balanced"),
        ([("balanced", 16, 16), ("highmem", 16, 32)], "balanced"),
        ([("balanced", 16, 16), ("highmem", 16, 32), ("lowcpu", 8, 16)], "lowcpu"),
    ],
)
def test_least_waste(groups, chosen):
    assert _least_waste(groups) == chosen


def test_least_waste_is_cpu_and_memory_only_and_the_gpu_aware_one_has_its_own_name():
    """Two GPU groups with the same cpu/memory: CA's least-waste ties them (the first wins here);
    least-waste-gpu picks the one whose device memory the pods use best."""
    one_card = gpu_node("one", cards=1)
    four_cards = gpu_node("four", cards=4)
    groups = [GroupTemplate("four", four_cards), GroupTemplate("one", one_card)]
    pods = [PendingPods(ca_pod("g", 1000, 2**30, gpu_count=1, gpumem=20000), 1)]
    plain = estimate(Simulator(), pods, groups, parse_expander("least-waste"))
    assert plain.chosen == "four" and plain.candidates == ["four", "one"]
    gpu = estimate(Simulator(), pods, groups, parse_expander("least-waste-gpu"))
    assert gpu.chosen == "one" and gpu.candidates == []


def _options(*specs: tuple[str, int, int]) -> list[GroupOption]:
    """(group, new nodes, pods scheduled) as expander options."""
    return [
        GroupOption(name, node_count=nodes, scheduled=[f"{name}/{i}" for i in range(pods)])
        for name, nodes, pods in specs
    ]


def test_most_pods():
    options = _options(("a", 1, 2), ("b", 2, 4), ("c", 3, 4))
    assert [o.node_group for o in expander_filter("most-pods", options, parse_expander("most-pods"))] == [
        "b",
        "c",
    ]


T2_MICRO, T2_LARGE, T3_LARGE, M4 = (
    "my-asg.t2.micro",
    "my-asg.t2.large",
    "my-asg.t3.large",
    "my-asg.m4.4xlarge",
)
CONFIG = {"5": [r".*t2\.micro.*"], "10": [r".*t2\.large.*", r".*t3\.large.*"], "50": [r".*m4\.4xlarge.*"]}
WILDCARD = {"5": [".*"], "10": [r".t2\.large.*"]}


@pytest.mark.parametrize(
    ("priorities", "groups", "kept"),
    [
        (CONFIG, [T2_LARGE], [T2_LARGE]),
        (CONFIG, [T2_LARGE, M4], [M4]),
        (WILDCARD, [T2_LARGE, T2_MICRO], [T2_LARGE]),
        (CONFIG, [T2_LARGE, T3_LARGE, T2_MICRO], [T2_LARGE, T3_LARGE]),
        ({"10": [r".*t2\.large.*"]}, [T2_LARGE, T3_LARGE, M4], [T2_LARGE]),
        ({"5": [r".*t\.micro.*"], "10": [r".*t\.large.*"]}, [T2_LARGE, T3_LARGE], [T2_LARGE, T3_LARGE]),
        # CA starts from priority -1: -1 counts, anything lower is as if not listed
        ({"-1": ["a"], "-5": ["b"]}, ["a", "b"], ["a"]),
        ({"-5": ["a"], "-7": ["b"]}, ["a", "b"], ["a", "b"]),
        ({"-5": ["a"]}, ["a", "b"], ["a", "b"]),
    ],
)
def test_priority(priorities, groups, kept):
    expander = parse_expander("priority", priorities)
    options = _options(*[(g, 1, 1) for g in groups])
    assert [o.node_group for o in expander_filter("priority", options, expander)] == kept


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("least-waste,least-waste", "specified multiple times"),
        (["priority", "most-pods", "priority"], "specified multiple times"),
        ("random,least-waste", "comes after random"),
        ("cheapest", "unknown expander"),
        ([], "expander must be"),
    ],
)
def test_the_expander_factory_refuses_what_ca_refuses(value, error):
    with pytest.raises(EstimateError, match=error):
        parse_expander(value, {"1": [".*"]})


def test_a_chain_narrows_filter_by_filter_and_random_breaks_the_tie():
    options = _options(("a", 2, 4), ("b", 1, 4), ("c", 1, 4), ("d", 1, 1))
    chosen, candidates, text = choose(options, parse_expander(["most-pods", "least-nodes"]))
    assert chosen is not None and chosen.node_group == "b" and candidates == ["b", "c"]
    assert "most-pods kept 3 of 4; least-nodes kept 2 of 3" in text and "at random" in text
    chosen, candidates, _ = choose(options, parse_expander("most-pods,least-nodes", seed=7))
    assert chosen is not None and chosen.node_group in {"b", "c"} and candidates == ["b", "c"]
    again, _, _ = choose(options, parse_expander("most-pods,least-nodes", seed=7))
    assert again is chosen  # a seed makes the pick repeatable
    chosen, candidates, _ = choose(options, parse_expander("priority,least-nodes", {"10": ["^a$"]}))
    assert chosen is not None and chosen.node_group == "a" and candidates == []  # one left: no random


def test_random_answers_its_candidate_set():
    options = _options(("a", 1, 1), ("b", 1, 1), ("c", 2, 2))
    chosen, candidates, _ = choose(options, parse_expander("random"))
    assert chosen is not None and chosen.node_group == "a" and candidates == ["a", "b", "c"]
    chosen, _, _ = choose(options, parse_expander("least-nodes,random"))
    assert chosen is not None and chosen.node_group == "a"
