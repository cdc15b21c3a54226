"""Decision records and CA events; the recorder listens to ``simulations.signals.filter_answered``."""

from django.apps import AppConfig


class DecisionsConfig(AppConfig):
    name = "decisions"
    verbose_name = "Decisions and autoscaler events"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from simulations.signals import filter_answered

        from .recorder import observe_filter

        filter_answered.connect(observe_filter, dispatch_uid="decisions.recorder.observe_filter")
