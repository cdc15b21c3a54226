"""The expander's packing key is its declaration (``PackingKey``), and an option's template is
resolved once per call."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from hami_sim.engine.simulate import EngineConfig, Simulator
from profiles.inventory import catalog
from simulations.grpcexpander.caches import CallCache, ExpanderCaches, PackingKey
from simulations.grpcexpander.options import evaluate
from simulations.grpcexpander.protos import expander_pb2 as pb
from tests.expander.ca_clients import NEWEST, encode
from tests.expander.test_grpc_expander import cold, pods, warm_a10
from tests.factories.models import NodeGroupFactory
from tests.profiles.conftest import A10

BASE = PackingKey(
    node_count=2, pods="ab", labels={"node.kubernetes.io/instance-type": "g5"}, annotations={},
    devices=(("'NVIDIA-A10'", "23028"),), inventory_error="", pair_scores="{}", cordoned=(),
    spec=None, status={"capacity": {"cpu": "8"}}, daemons="", rules="rules",
)  # fmt: skip


@pytest.mark.parametrize(
    ("field", "other"),
    [
        ("node_count", 3),
        ("pods", "cd"),
        ("labels", {"node.kubernetes.io/instance-type": "g6"}),
        ("annotations", {"team": "ml"}),
        ("devices", (("'NVIDIA-A10'", "24000"),)),
        ("inventory_error", "no devices registered"),
        ("cordoned", ("GPU-0",)),
        ("status", {"capacity": {"cpu": "16"}}),
        ("daemons", "[{}]"),
        ("rules", "other rules"),
    ],
)
def test_every_declared_field_keys_the_packing(field, other):
    assert dataclasses.replace(BASE, **{field: other}).digest() != BASE.digest()
    assert dataclasses.replace(BASE).digest() == BASE.digest()


def test_a_field_added_to_the_declaration_keys_packings_by_it():
    """No hand-kept list: a wider declaration (even with a default value) is another key."""
    wider = dataclasses.make_dataclass(
        "Wider", [("zone", str, dataclasses.field(default=""))], bases=(PackingKey,), frozen=True
    )
    same = {f.name: getattr(BASE, f.name) for f in dataclasses.fields(PackingKey)}
    assert wider(**same).digest() != BASE.digest()
    assert wider(**same).digest() != wider(**same, zone="eu-1a").digest()


class Counting(Simulator):
    """A simulator that counts how often each template (by name) is resolved."""

    def __init__(self) -> None:
        super().__init__(EngineConfig(cache_bytes=1 << 24))
        self.resolved: Counter[str] = Counter()

    def annotation_inventory(self, node):
        self.resolved[node["metadata"]["name"]] += 1
        return super().annotation_inventory(node)

    def inventory(self, node):
        return self.annotation_inventory(node)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("why", "template", "resolutions"),
    [
        ("a registered template: its registration is its inventory", warm_a10("warm"), 1),
        ("an unregistered one: its registration checked, the profile's merge resolved", cold("cold"), 2),
    ],
)
def test_an_option_template_is_resolved_once_per_call(why, template, resolutions):
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    request = pb.BestOptionsRequest.FromString(
        encode(NEWEST, [("gpu-a10", 2, pods(3, 12000))], {"gpu-a10": template})
    )
    sim = Counting()
    cache = CallCache(sim, shared=ExpanderCaches(sim.budgets))
    (verdict,) = evaluate(cache, request, catalog.current())
    assert verdict.placed == 3, verdict.reason
    assert sum(sim.resolved.values()) == resolutions, sim.resolved


@pytest.mark.api
def test_the_expanders_stores_are_in_metrics_by_name(client):
    """Counted in the simulator's one budget, reported beside its stores (counters as counters)."""
    sim = Simulator(EngineConfig(cache_bytes=1 << 22))
    kept = ExpanderCaches(sim.budgets)  # (the metrics see live stores only)
    body = client.get("/metrics").content.decode()
    for name in ("expander pods", "expander nodes", "expander packings"):
        assert f'hami_sim_cache_bytes{{cache="{name}"}}' in body
        assert f'hami_sim_cache_hits_total{{cache="{name}"}}' in body
    assert kept.packed.max_bytes > 0
