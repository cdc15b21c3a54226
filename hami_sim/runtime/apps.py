"""The runtime layer as a Django app: it owns ``TaskRun``, the record every app's tasks leave, and
the objects the cluster syncs rejected (``hami_sim.runtime.rejects``)."""

from __future__ import annotations

from django.apps import AppConfig

__all__ = ["RuntimeConfig"]

_registered = False


class RuntimeConfig(AppConfig):
    name = "hami_sim.runtime"
    label = "runtime"
    verbose_name = "runtime"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Export the rejection totals (``/metrics`` reads them from the database at scrape time)."""
        global _registered
        if not _registered:
            from prometheus_client import REGISTRY

            from .rejects import RejectionCollector

            REGISTRY.register(RejectionCollector())
            _registered = True
