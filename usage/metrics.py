"""Prometheus: how old each live node's usage is, read from the usage store at scrape time.

A collector, not a Gauge the watcher sets, because the watcher is not the process Prometheus scrapes:
every web replica reports the same ages from the shared database (through the store's cache).
"""

from __future__ import annotations

import logging

from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily

from hami_sim.project.metrics import DatabaseSeries

__all__ = ["UsageAgeCollector", "BlindSpotCollector", "register"]

log = logging.getLogger("hami_sim.usage")
_registered = False


class UsageAgeCollector(DatabaseSeries):
    def collect(self):
        per_node = GaugeMetricFamily(
            "hami_sim_node_usage_age_seconds",
            "Seconds since the cluster source last confirmed a live node's HAMi usage",
            labels=["node"],
        )
        confirmed = GaugeMetricFamily(
            "hami_sim_usage_confirmed_age_seconds",
            "Seconds since the watcher or a relist last confirmed all usage (absent: never)",
        )
        missing = GaugeMetricFamily(
            "hami_sim_live_nodes_without_usage",
            "Nodes the cluster sync knows whose pods were never read (evaluated as empty until they are)",
        )
        try:
            from django.utils import timezone

            from profiles.models import NodeInventory

            from .models import NodeUsage
            from .store import get_store

            store = get_store()
            now = timezone.now()
            confirmed_at = store.confirmed_at
            for name, usage in sorted(store.snapshot().items()):
                per_node.add_metric([name], usage.age_seconds(confirmed_at, now))
            if confirmed_at is not None:
                confirmed.add_metric([], max(0.0, (now - confirmed_at).total_seconds()))
            with_usage = NodeUsage.objects.filter(gone=False).values("name")
            missing.add_metric(
                [], NodeInventory.objects.filter(gone_at__isnull=True).exclude(name__in=with_usage).count()
            )
        except Exception as exc:  # a scrape must not fail because the database is away
            log.debug("usage age unavailable: %s", exc)
        yield per_node
        yield confirmed
        yield missing

    def describe(self):
        return []


#: the blind spot's series: (name, help, label names)
BLIND_SPOT_SERIES = (
    (
        "hami_sim_ca_invisible_pods",
        "Pending HAMi pods CA's filter places on an existing node by device count while no card can "
        "hold them (CA never scales for them), by the node group CA thinks takes them",
        ("node_group",),
    ),
    (
        "hami_sim_ca_invisible_oldest_pod_age_seconds",
        "Age of the oldest pod counted in hami_sim_ca_invisible_pods, by node group (when last computed)",
        ("node_group",),
    ),
    (
        "hami_sim_node_scale_down_misjudged",
        "1 when CA's view re-places a live GPU node's pods on the other nodes and HAMi's cannot "
        "(CA may remove the node; its pods then stay pending), else 0",
        ("node", "node_group"),
    ),
)


def blind_spot_series(result) -> dict[str, list]:
    """A ``usage.blindspot.Report`` as the samples of ``BLIND_SPOT_SERIES`` (none while it is stale)."""
    invisible, oldest, drain = [], [], []
    if not result.stale:
        for name, answer in sorted(result.groups.items()):
            invisible.append([[name], len(answer.pods)])
            oldest.append([[name], answer.oldest_seconds])
        groups = {v.name: v.node_group for v in result.nodes}
        for entry in result.drains:
            drain.append([[entry.node, groups.get(entry.node, "")], float(entry.ca_wrong)])
    return dict(zip((name for name, _, _ in BLIND_SPOT_SERIES), (invisible, oldest, drain), strict=True))


def refresh_blind_spot() -> dict:
    """Compute the blind spot now and store its series (the Celery task ``refresh_blind_spot``);
    a failure is stored too, and the last good series stay."""
    import time

    from django.utils import timezone

    from .blindspot import compute
    from .models import BlindSpotSnapshot

    started = time.perf_counter()
    try:
        series = blind_spot_series(compute())
    except Exception as exc:
        log.exception("blind spot not computed")
        BlindSpotSnapshot.objects.update_or_create(pk=1, defaults={"error": f"{type(exc).__name__}: {exc}"})
        raise
    seconds = time.perf_counter() - started
    BlindSpotSnapshot.objects.update_or_create(
        pk=1, defaults={"series": series, "computed_at": timezone.now(), "seconds": seconds, "error": ""}
    )
    return {"invisible_pods": sum(value for _labels, value in series["hami_sim_ca_invisible_pods"])}


class BlindSpotCollector(DatabaseSeries):
    """The pods upstream CA cannot see (``usage.blindspot``), per node group CA thinks takes them, and
    per live GPU node whether CA's scale-down view is wrong about re-placing its pods: as the worker
    last computed them (``refresh_blind_spot``, every minute), one row read per scrape, and when."""

    def collect(self):
        families = [
            GaugeMetricFamily(name, doc, labels=list(labels)) for name, doc, labels in BLIND_SPOT_SERIES
        ]
        computed = GaugeMetricFamily(
            "hami_sim_blind_spot_computed_timestamp_seconds",
            "Unix time the blind spot's series were last computed (absent: never)",
        )
        try:
            from .models import BlindSpotSnapshot

            row = BlindSpotSnapshot.objects.filter(pk=1, computed_at__isnull=False).first()
            if row is not None:
                for family in families:
                    for labels, value in row.series.get(family.name, ()):
                        family.add_metric(labels, value)
                computed.add_metric([], row.computed_at.timestamp())
        except Exception as exc:  # a scrape must not fail because the database is away
            log.debug("blind spot unavailable: %s", exc)
        yield from families
        yield computed


def register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(UsageAgeCollector())
        REGISTRY.register(BlindSpotCollector())
        _registered = True
