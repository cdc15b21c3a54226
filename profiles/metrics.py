"""Prometheus: open drift findings by node group and kind, read from the database at scrape time.

A collector (not a Gauge set by the worker) because the worker's process is not the one scraped:
every web replica reports the same numbers from the shared database, one grouped query per scrape.
"""

from __future__ import annotations

import logging

from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily

__all__ = ["DriftCollector", "register"]

log = logging.getLogger("hami_sim.profiles")
_registered = False


class DriftCollector:
    def collect(self):
        gauge = GaugeMetricFamily(
            "hami_sim_drift_findings",
            "Open drift findings by node group and kind",
            labels=["node_group", "kind"],
        )
        try:
            from django.db.models import Count

            from .models import DriftFinding

            rows = (
                DriftFinding.objects.filter(resolved_at__isnull=True)
                .values("node_group__name", "kind")
                .annotate(n=Count("id"))
            )
            for row in rows:
                gauge.add_metric([row["node_group__name"] or "", row["kind"]], row["n"])
        except Exception as exc:  # a scrape must not fail because the database is away
            log.debug("drift gauge unavailable: %s", exc)
        yield gauge

    def describe(self):
        return []  # no describe-time collection (which would query the database at import)


def register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(DriftCollector())
        _registered = True
