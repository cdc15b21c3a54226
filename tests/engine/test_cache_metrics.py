"""Cache metrics: hits, misses, evictions and bytes per cache, in ``/metrics``."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
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
    for fact in ("entries", "bytes"):  # what the cache holds now: gauges
        assert f"# TYPE hami_sim_cache_{fact} gauge" in body
        assert f'hami_sim_cache_{fact}{{cache="registrations"}}' in body
    for fact in ("hits", "misses", "evictions", "refused"):  # what only grows: counters, for rate()
        assert f"# TYPE hami_sim_cache_{fact}_total counter" in body
        assert f'hami_sim_cache_{fact}_total{{cache="registrations"}}' in body
    assert 'hami_sim_cache_hits_total{cache="pods"}' in body


_OFF_SCRIPT = """
import orjson
from hami_sim.engine.cache import cache_metrics
from hami_sim.engine.simulate import Simulator
from tests.engine.test_cache import gpu_node, gpu_pod

sim = Simulator()
for _ in range(3):
    sim.filter_nodes(sim.pod_context(gpu_pod()), [gpu_node("a"), gpu_node("b")])
print(orjson.dumps(cache_metrics()).decode())
"""


def test_a_zero_byte_budget_turns_off_every_cache():
    """``HAMI_SIM_CACHE_BYTES=0``: nothing is remembered by any cache of the process (the registration
    templates, sized at import, included), so every call computes its answer afresh."""
    env = dict(os.environ, HAMI_SIM_CACHE_BYTES="0", PYTHONPATH=".")
    out = subprocess.run(
        [sys.executable, "-c", _OFF_SCRIPT], env=env, capture_output=True, text=True, check=True
    ).stdout
    metrics = orjson.loads(out)
    assert {"registrations", "pods", "node kinds", "registration templates"} <= set(metrics)
    for name, m in metrics.items():
        assert (m["entries"], m["bytes"], m["hits"]) == (0, 0, 0), name
