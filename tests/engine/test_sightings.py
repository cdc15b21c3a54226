"""Nodes by their bytes (``engine.sightings``): a node sent again is neither decoded nor resolved
again, and answers exactly as on first sight whatever the cache or the resolver did in between."""

from __future__ import annotations

from collections.abc import Mapping

import orjson
import pytest

from hami_sim.engine.model import Inventory
from hami_sim.engine.sightings import SightedNodes
from hami_sim.engine.simulate import EngineConfig, Simulator
from tests.engine.test_cache import gpu_node, gpu_pod

pytestmark = pytest.mark.engine


def sent(sim: Simulator, nodes: list[dict]) -> SightedNodes:
    """``nodes`` as the extender's parser hands them to the filter."""
    raw = [orjson.dumps(n) for n in nodes]
    return SightedNodes(raw, [sim.sightings.get(r) for r in raw], [None] * len(raw))


def answers(sim: Simulator, nodes) -> list[tuple]:
    ctx = sim.pod_context(gpu_pod(mem=70000, gpus=2))
    return [(v.name, v.fits, v.reason, v.node_group) for v in sim.filter_nodes(ctx, nodes)]


NODES = [gpu_node("n-1", gpus=1), gpu_node("n-2", gpus=4), gpu_node("n-3", gpus=8, mem=40000)]


def expected() -> list[tuple]:
    return answers(Simulator(EngineConfig(cache_bytes=0)), NODES)


@pytest.mark.parametrize(
    ("between", "decoded_again"),
    [
        ("nothing", 0),  # the second call reads no node
        ("registrations cleared", 3),  # their inventories left the cache: decoded and resolved again
        ("all cleared", 3),
    ],
)
def test_a_node_sent_again_is_not_decoded_again_unless_its_registration_left(between, decoded_again):
    sim = Simulator(EngineConfig(cache_bytes=1 << 24))
    assert answers(sim, sent(sim, NODES)) == expected()
    if between == "registrations cleared":
        sim.cache.clear()
    elif between == "all cleared":
        sim.clear_caches()
    again = sent(sim, NODES)
    assert answers(sim, again) == expected()
    assert sum(d is not None for d in again._decoded) == decoded_again
    assert answers(sim, sent(sim, NODES)) == expected()  # remembered again


def test_with_the_cache_off_every_node_is_decoded_and_answers_the_same():
    sim = Simulator(EngineConfig(cache_bytes=0))
    for _ in range(2):
        nodes = sent(sim, NODES)
        assert answers(sim, nodes) == expected()
        assert all(d is not None for d in nodes._decoded)


class Groups:
    """A resolver that files every node under the current group name; ``state`` is the catalog."""

    def __init__(self, with_state: bool) -> None:
        self.catalog = Catalog("gpu-a")
        self.calls = 0
        if with_state:
            self.state = lambda: self.catalog

    def __call__(self, node: Mapping, sim: Simulator) -> Inventory:
        self.calls += 1
        return sim.tag_inventory(sim.annotation_inventory(node), self.catalog.group)


class Catalog:
    def __init__(self, group: str) -> None:
        self.group = group


@pytest.mark.parametrize(
    ("with_state", "reload", "calls_on_repeat", "group_after"),
    [
        (True, False, 0, "gpu-a"),  # same catalog: the sighting answers
        (True, True, 3, "gpu-b"),  # a new catalog object: every node resolved again, in the new group
        (False, False, 3, "gpu-a"),  # a resolver that says nothing of its state is asked every time
        (False, True, 3, "gpu-b"),
    ],
)
def test_a_resolvers_state_decides_whether_a_sighting_holds(with_state, reload, calls_on_repeat, group_after):
    groups = Groups(with_state)
    sim = Simulator(EngineConfig(cache_bytes=1 << 24), resolver=groups)
    assert {a[3] for a in answers(sim, sent(sim, NODES))} == {"gpu-a"}
    if reload:
        groups.catalog = Catalog("gpu-b")
    groups.calls = 0
    assert {a[3] for a in answers(sim, sent(sim, NODES))} == {group_after}
    assert groups.calls == calls_on_repeat


def test_a_pod_without_device_requests_names_sighted_nodes_without_decoding_them():
    sim = Simulator(EngineConfig(cache_bytes=1 << 24))
    answers(sim, sent(sim, NODES))
    again = sent(sim, NODES)
    plain = sim.pod_context({"metadata": {"name": "web"}, "spec": {"containers": [{"name": "c"}]}})
    assert [(v.name, v.fits) for v in sim.filter_nodes(plain, again)] == [
        ("n-1", True),
        ("n-2", True),
        ("n-3", True),
    ]
    assert all(d is None for d in again._decoded)


def test_the_sightings_are_reported_and_bounded_with_the_other_caches():
    sim = Simulator(EngineConfig(cache_bytes=1 << 20))
    answers(sim, sent(sim, NODES))
    stats = sim.sightings.lru.stats()
    assert stats["entries"] == 3 and stats["misses"] == 3
    answers(sim, sent(sim, NODES))
    assert sim.sightings.lru.stats()["hits"] == 3
    assert sim.cache_stats()["bytes"] <= 1 << 20
