"""The diagnostics page's table of the extender's caches: what /metrics reports, per cache of the worker.
The overview is for operators and shows none of it."""

from __future__ import annotations

import pytest

from hami_sim.engine.simulate import EngineConfig, Simulator
from tests.engine.test_cache import gpu_node, gpu_pod

pytestmark = [pytest.mark.django_db]


def test_diagnostics_shows_each_cache_with_entries_hits_and_evictions(client, staff):
    sim = Simulator(EngineConfig(cache_bytes=1 << 20))
    ctx = sim.pod_context(gpu_pod())
    for _ in range(2):  # the second call is answered from memory
        sim.filter_nodes(ctx, [gpu_node("template-node-for-g-0")])
    client.force_login(staff)
    assert 'id="cache-health"' not in client.get("/").content.decode()  # not on the overview
    html = client.get("/diagnostics/").content.decode()
    assert 'id="cache-health"' in html
    for name in ("registrations", "registration templates", "node bytes"):
        assert f"<td>{name}</td>" in html, name
    assert "% hits" in html
