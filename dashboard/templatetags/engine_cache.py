"""The extender's caches on the dashboard's overview: one line per cache of this worker process
(the same numbers ``/metrics`` reports as ``hami_sim_cache_*{cache}``)."""

from __future__ import annotations

from django import template

from hami_sim.engine.cache import cache_metrics

register = template.Library()


@register.simple_tag
def cache_health() -> list[dict]:
    """Per cache: entries, MiB accounted, the share of lookups answered from memory, evictions."""
    rows = []
    for name, m in cache_metrics().items():
        lookups = m["hits"] + m["misses"]
        rows.append(
            {
                "name": name,
                "entries": m["entries"],
                "mib": m["bytes"] / 2**20,
                "hit_rate": round(100 * m["hits"] / lookups) if lookups else None,
                "evictions": m["evictions"],
            }
        )
    return rows
