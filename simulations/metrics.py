"""Prometheus metrics of the simulation verbs (exported at /metrics with django-prometheus)."""

from prometheus_client import Counter, Gauge, Histogram

__all__ = [
    "EXTENDER_REQUESTS",
    "EXTENDER_LATENCY",
    "EXTENDER_NODE_VERDICTS",
    "EXPANDER_REQUESTS",
    "EXPANDER_UNJUDGED_OPTIONS",
    "EXPANDER_WIRE_MISMATCH",
    "EXPANDER_REFUSED",
    "EXPANDER_INFLIGHT_BYTES",
    "EXPANDER_CALLS",
]

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
EXPANDER_REQUESTS = Counter(
    "hami_sim_expander_requests_total",
    "gRPC expander calls by the wire form CA used (objects: CA <= 1.34.1, both: 1.34.2+, bytes: 1.35+)",
    ["wire"],
)
EXPANDER_UNJUDGED_OPTIONS = Counter(
    "hami_sim_expander_unjudged_options_total",
    "Scale-up options the gRPC expander could not judge (kept unless EXPANDER_UNJUDGED=drop)",
    ["reason"],
)
EXPANDER_WIRE_MISMATCH = Counter(
    "hami_sim_expander_wire_mismatch_total",
    "gRPC expander calls whose wire form is not the one CA_VERSION sends (CA runs another version)",
    ["wire", "expected"],
)
EXPANDER_REFUSED = Counter(
    "hami_sim_expander_refused_total",
    "gRPC expander calls refused or abandoned, by reason (simulations.grpcexpander.admission.REASONS)",
    ["reason"],
)
EXPANDER_INFLIGHT_BYTES = Gauge(
    "hami_sim_expander_inflight_bytes",
    "Request bytes the gRPC expander is working on (bounded by EXPANDER_MAX_INFLIGHT_BYTES)",
    multiprocess_mode="livesum",
)
EXPANDER_CALLS = Gauge(
    "hami_sim_expander_calls",
    "gRPC expander calls in progress (receiving their request or being judged)",
    multiprocess_mode="livesum",
)
