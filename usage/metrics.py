"""Prometheus: how old each live node's usage is, read from the usage store at scrape time.

A collector, not a Gauge the watcher sets, because the watcher is not the process Prometheus scrapes:
every web replica reports the same ages from the shared database (through the store's cache).
"""

from __future__ import annotations

import logging

from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily

__all__ = ["UsageAgeCollector", "BlindSpotCollector", "register"]

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


class BlindSpotCollector:
    """The pods upstream CA cannot see (``usage.blindspot``), per node group CA thinks takes them, and
    per live GPU node whether CA's scale-down view is wrong about re-placing its pods."""

    def collect(self):
        invisible = GaugeMetricFamily(
            "hami_sim_ca_invisible_pods",
            "Pending HAMi pods CA's filter places on an existing node by device count while no card can "
            "hold them (CA never scales for them), by the node group CA thinks takes them",
            labels=["node_group"],
        )
        oldest = GaugeMetricFamily(
            "hami_sim_ca_invisible_oldest_pod_age_seconds",
            "Age of the oldest pod counted in hami_sim_ca_invisible_pods, by node group",
            labels=["node_group"],
        )
        drain = GaugeMetricFamily(
            "hami_sim_node_scale_down_misjudged",
            "1 when CA's view re-places a live GPU node's pods on the other nodes and HAMi's cannot "
            "(CA may remove the node; its pods then stay pending), else 0",
            labels=["node", "node_group"],
        )
        try:
            from .blindspot import report

            result = report()
            if not result.stale:
                for name, answer in sorted(result.groups.items()):
                    invisible.add_metric([name], len(answer.pods))
                    oldest.add_metric([name], answer.oldest_seconds)
                groups = {v.name: v.node_group for v in result.nodes}
                for entry in result.drains:
                    drain.add_metric([entry.node, groups.get(entry.node, "")], float(entry.ca_wrong))
        except Exception as exc:  # a scrape must not fail because the database is away
            log.debug("blind spot unavailable: %s", exc)
        yield invisible
        yield oldest
        yield drain

    def describe(self):
        return []


def register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(UsageAgeCollector())
        REGISTRY.register(BlindSpotCollector())
        _registered = True
