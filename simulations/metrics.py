"""Prometheus metrics of the simulation verbs (exported at /metrics with django-prometheus)."""

from prometheus_client import Counter, Histogram

__all__ = ["EXTENDER_REQUESTS", "EXTENDER_LATENCY", "EXTENDER_NODE_VERDICTS"]

EXTENDER_REQUESTS = Counter(
    "hami_sim_extender_requests_total", "Extender requests by verb and outcome", ["verb", "outcome"]
)
EXTENDER_LATENCY = Histogram(
    "hami_sim_extender_latency_seconds",
    "Server-side extender latency by verb",
    ["verb"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
EXTENDER_NODE_VERDICTS = Counter(
    "hami_sim_extender_node_verdicts_total", "Per-node verdicts of filter-simulation", ["verdict"]
)
