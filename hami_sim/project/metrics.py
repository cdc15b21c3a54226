"""Prometheus metrics that belong to no single app, and the ``/metrics`` view that exports them all.

What lives where:
- per-request facts are counted in the process that serves the request: extender requests by verb
  and outcome and the latency histogram (``simulations.metrics``), decisions recorded/dropped
  (``decisions.recorder``), django-prometheus' request/database metrics;
- facts the database already holds are read at scrape time by collectors (``DatabaseSeries``), so
  work done in the Celery worker (which nobody scrapes) is visible: open drift findings by group and
  kind (``profiles.metrics``), live usage and the blind spot (``usage.metrics``), and here task runs
  and failures and the number of live simulation sessions. Only the web listener exports them
  (the expander's metrics port leaves them out: ``process_registry``), and every web replica
  exports the same values, so the alerts and panels read them with ``max by``, never ``sum``;
- the engine's in-process caches (``CacheCollector``: entries and bytes as gauges, hits, misses,
  evictions and refusals as counters, per cache, ``hami_sim.engine.cache.cache_metrics``), read at
  scrape time from the process scraped.

``metrics_view`` replaces django-prometheus' view because that one, in multiprocess mode
(``PROMETHEUS_MULTIPROC_DIR``, set by ``hami_sim.server.gunicorn_conf`` for several workers), exports only
the per-process files and silently drops every scrape-time collector.
"""

from __future__ import annotations

import logging
import os

import prometheus_client
from django.http import HttpRequest, HttpResponse
from prometheus_client import REGISTRY, CollectorRegistry, multiprocess
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics import MetricWrapperBase

__all__ = [
    "DatabaseSeries",
    "CacheCollector",
    "DatabaseCollector",
    "register",
    "metrics_view",
    "multiprocess_enabled",
    "process_registry",
    "scrape_collectors",
]

log = logging.getLogger("hami_sim.project.metrics")
_registered = False


class DatabaseSeries:
    """A collector of values read from the shared database at scrape time: the same in every process,
    so exported by the web listener only (``process_registry`` leaves them out) and read with
    ``max by`` across its replicas. Nothing is read at registration (``describe`` is empty)."""

    def collect(self):
        return iter(())

    def describe(self):
        return []


class DatabaseCollector(DatabaseSeries):
    """Task runs by task and outcome, last success per task, and live sessions: one query each."""

    def collect(self):
        runs = GaugeMetricFamily(
            "hami_sim_task_runs",
            "Recorded Celery task runs by task and outcome (failure = the run raised)",
            labels=["task", "outcome"],
        )
        last_success = GaugeMetricFamily(
            "hami_sim_task_last_success_timestamp_seconds",
            "Unix time the task last finished successfully",
            labels=["task"],
        )
        sessions = GaugeMetricFamily("hami_sim_sessions", "Simulation sessions that have not expired")
        try:
            from django.db.models import Count, Max

            from hami_sim.runtime.models import TaskRun

            for row in TaskRun.objects.values("task", "outcome").annotate(n=Count("id")).order_by():
                runs.add_metric([row["task"], row["outcome"]], row["n"])
            finished = (
                TaskRun.objects.filter(outcome=TaskRun.Outcome.SUCCESS, finished_at__isnull=False)
                .values("task")
                .annotate(last=Max("finished_at"))
                .order_by()
            )
            for row in finished:
                last_success.add_metric([row["task"]], row["last"].timestamp())
        except Exception as exc:  # a scrape must not fail because the database is away
            log.debug("task-run metrics unavailable: %s", exc)
        try:
            from django.apps import apps
            from django.utils import timezone

            # by name: this project-wide module does not import the simulations app
            model = apps.get_model("simulations", "SimulationSession")
            sessions.add_metric([], model.objects.filter(expires_at__gt=timezone.now()).count())
        except Exception as exc:
            log.debug("session gauge unavailable: %s", exc)
        yield runs
        yield last_success
        yield sessions


class CacheCollector:
    """The stores of this process, per store of ``hami_sim.engine.stores.STORES`` with a share of
    the one budget (``registrations``, ``node bytes``, ``pods``, ``node kinds``, ``registration
    templates``, the gRPC expander's ``expander pods``, ``expander nodes`` and ``expander
    packings``): ``hami_sim_cache_<fact>{cache=...}``. Per process: with several
    workers each scrape reports the worker that answered it."""

    GAUGES = {
        "entries": "Entries the cache holds",
        "bytes": "Bytes the cache has accounted (bounded by HAMI_SIM_CACHE_BYTES)",
    }
    #: only ever grow in a process: counters (``hami_sim_cache_<fact>_total``), so rate() reads them
    COUNTERS = {
        "hits": "Lookups the cache answered",
        "misses": "Lookups the cache could not answer",
        "evictions": "Entries evicted to stay within the byte budget",
        "refused": "Entries too large to keep",
    }

    def collect(self):
        from hami_sim.engine.cache import cache_metrics

        metrics = cache_metrics()
        for kind, facts in ((GaugeMetricFamily, self.GAUGES), (CounterMetricFamily, self.COUNTERS)):
            for fact, doc in facts.items():
                family = kind(f"hami_sim_cache_{fact}", doc, labels=["cache"])
                for name, values in metrics.items():
                    family.add_metric([name], values[fact])
                yield family

    def describe(self):
        return []


def register() -> None:
    """Register the scrape-time collectors once per process (called from ``HamiSimConfig.ready``)."""
    global _registered
    if not _registered:
        REGISTRY.register(DatabaseCollector())
        REGISTRY.register(CacheCollector())
        _registered = True


def multiprocess_enabled() -> bool:
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))


def scrape_collectors() -> list:
    """Collectors of the default registry that compute at scrape time (not per-process samples)."""
    skip = (
        MetricWrapperBase,
        prometheus_client.ProcessCollector,
        prometheus_client.PlatformCollector,
        prometheus_client.GCCollector,
    )
    collectors = list(getattr(REGISTRY, "_collector_to_names", {}))
    return [c for c in collectors if not isinstance(c, skip)]


def process_registry() -> _Combined:
    """What this process alone knows (its counters, its caches, its own figures), without the
    ``DatabaseSeries``: for a metrics port beside the web listener (the expander's)."""
    collectors = list(getattr(REGISTRY, "_collector_to_names", {}))
    return _Combined(*(c for c in collectors if not isinstance(c, DatabaseSeries)))


class _Combined:
    def __init__(self, *sources) -> None:
        self.sources = sources

    def collect(self):
        for source in self.sources:
            yield from source.collect()


def metrics_view(request: HttpRequest) -> HttpResponse:
    """``GET /metrics``: every worker's samples (multiprocess mode) plus the scrape-time collectors."""
    if multiprocess_enabled():
        per_process = CollectorRegistry()
        multiprocess.MultiProcessCollector(per_process)
        source = _Combined(per_process, *scrape_collectors())
    else:
        source = REGISTRY
    return HttpResponse(
        prometheus_client.generate_latest(source), content_type=prometheus_client.CONTENT_TYPE_LATEST
    )
