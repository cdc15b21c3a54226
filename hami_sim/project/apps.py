"""The project package as an app: system checks and the database metrics collector."""

from __future__ import annotations

from django.apps import AppConfig

__all__ = ["HamiSimConfig"]


def _validate_vendor_config() -> None:
    """Stop start-up on a bad ``HAMI`` (e.g. ``HAMI_VENDORS_JSON`` naming an unknown vendor or field)
    instead of failing the first extender request. It only builds the vendors to check them; the
    process-wide simulator is built on first use."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    from hami_sim.runtime.simulator import build_vendors

    from .checks import vendor_config_problem

    problem = vendor_config_problem(settings.HAMI, build_vendors)
    if problem is not None:
        raise ImproperlyConfigured(f"Invalid HAMi vendor configuration: {problem}")


class HamiSimConfig(AppConfig):
    """Registers what must exist in every process: deploy checks, scrape-time metrics."""

    name = "hami_sim.project"
    label = "hami_sim"  # the label it had before the project moved into its own package
    verbose_name = "hami-sim"

    def ready(self) -> None:
        from . import checks, loginthrottle, metrics  # noqa: F401  (checks and receivers register on import)

        metrics.register()
        _validate_vendor_config()
