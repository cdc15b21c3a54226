"""Prometheus: open drift findings by node group and kind, and whether the cluster's HAMi release is
the one hami-sim follows, read from the database at scrape time.

A collector (not a Gauge set by the worker) because the worker's process is not the one scraped:
every web replica reports the same numbers from the shared database, one grouped query per scrape.
"""

from __future__ import annotations

import logging

from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily

from hami_sim.project.metrics import DatabaseSeries

__all__ = ["DriftCollector", "HamiReleaseCollector", "register"]

log = logging.getLogger("hami_sim.profiles")
_registered = False


class DriftCollector(DatabaseSeries):
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


class HamiReleaseCollector(DatabaseSeries):
    """``hami_sim_hami_release_mismatch{detected, configured}``: 1 when the HAMi release the cluster
    sync last read differs from ``HAMI_VERSION``, 0 when they agree; no sample while it is unknown."""

    def collect(self):
        gauge = GaugeMetricFamily(
            "hami_sim_hami_release_mismatch",
            "1 when the HAMi release the cluster runs (its scheduler's image) is not HAMI_VERSION, else 0",
            labels=["detected", "configured"],
        )
        try:
            from .hami_install import configured_release, current, finding

            install = current()
            if install is not None and install.release:
                configured = configured_release()
                found = finding(install, configured)
                gauge.add_metric([install.release, configured], 1.0 if found else 0.0)
        except Exception as exc:  # a scrape must not fail because the database is away
            log.debug("HAMi release gauge unavailable: %s", exc)
        yield gauge

    def describe(self):
        return []


def register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(DriftCollector())
        REGISTRY.register(HamiReleaseCollector())
        _registered = True
