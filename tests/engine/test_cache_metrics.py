"""Cache metrics: hits, misses, evictions and bytes per cache, in ``/metrics``."""

from __future__ import annotations

import pytest

from hami_sim.engine.cache import cache_metrics
from hami_sim.engine.simulate import EngineConfig, Simulator
from tests.engine.test_cache import gpu_node, gpu_pod


def test_a_repeat_is_a_hit_and_a_small_budget_evicts():
    sim = Simulator(EngineConfig(cache_bytes=1 << 20))
    ctx = sim.pod_context(gpu_pod())
    before = cache_metrics().get("registrations", {}).get("hits", 0)
    nodes = [gpu_node(f"template-node-for-g-{i}") for i in range(400)]
    sim.filter_nodes(ctx, nodes)
    sim.filter_nodes(ctx, nodes[-2:])
    stats = sim.cache.lru.stats()
    assert stats["misses"] >= 400 and stats["hits"] >= 2 and stats["evictions"] > 0
    assert 0 < stats["bytes"] <= sim.cache.lru.max_bytes
    assert cache_metrics()["registrations"]["hits"] >= before + 2


@pytest.mark.api
def test_metrics_endpoint_reports_each_cache(client):
    sim = Simulator(EngineConfig(cache_bytes=1 << 20))
    sim.filter_nodes(sim.pod_context(gpu_pod()), [gpu_node("template-node-for-g-0")])
    body = client.get("/metrics").content.decode()
    for fact in ("entries", "bytes", "hits", "misses", "evictions"):
        assert f'hami_sim_cache_{fact}{{cache="registrations"}}' in body
    assert 'hami_sim_cache_hits{cache="pods"}' in body
