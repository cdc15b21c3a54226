"""The project package as an app: system checks, the database metrics collector, log context."""

from __future__ import annotations

from django.apps import AppConfig

__all__ = ["HamiSimConfig"]


class HamiSimConfig(AppConfig):
    """Registers what must exist in every process: deploy checks, scrape-time metrics, log binding."""

    name = "hami_sim"
    verbose_name = "hami-sim"

    def ready(self) -> None:
        from . import checks, metrics  # noqa: F401  (checks register themselves on import)

        metrics.register()
        try:
            from simulations.api.views import add_filter_observer
        except ImportError:  # the extender app is optional for the checks and metrics above
            return
        from .logcontext import bind_filter_verdict

        add_filter_observer(bind_filter_verdict)
