"""The runtime layer as a Django app: it owns ``TaskRun``, the record every app's tasks leave."""

from __future__ import annotations

from django.apps import AppConfig

__all__ = ["RuntimeConfig"]


class RuntimeConfig(AppConfig):
    name = "hami_sim.runtime"
    label = "runtime"
    verbose_name = "runtime"
    default_auto_field = "django.db.models.BigAutoField"
