"""Decision records and CA events; the recorder is attached to the extender when the app loads."""

from django.apps import AppConfig


class DecisionsConfig(AppConfig):
    name = "decisions"
    verbose_name = "Decisions and autoscaler events"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from simulations.api.views import add_filter_observer

        from .recorder import observe_filter

        add_filter_observer(observe_filter)
