"""Prometheus: how old each live node's usage is, read from the usage store at scrape time.

A collector, not a Gauge the watcher sets, because the watcher is not the process Prometheus scrapes:
every web replica reports the same ages from the shared database (through the store's cache).
"""

from __future__ import annotations

import logging

from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily

__all__ = ["UsageAgeCollector", "register"]

log = logging.getLogger("hami_sim.usage")
_registered = False


class UsageAgeCollector:
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


def register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(UsageAgeCollector())
        _registered = True
