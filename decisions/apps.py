"""Decision records and CA events; the recorder listens to ``simulations.signals`` (filter answers,
expander calls)."""

from django.apps import AppConfig


class DecisionsConfig(AppConfig):
    name = "decisions"
    verbose_name = "Decisions and autoscaler events"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from hami_sim.pages.panels import Panel, register
        from simulations.signals import expander_answered, filter_answered

        from .expander_calls import observe_expander
        from .recorder import observe_filter

        filter_answered.connect(observe_filter, dispatch_uid="decisions.recorder.observe_filter")
        expander_answered.connect(observe_expander, dispatch_uid="decisions.expander_calls.observe_expander")
        # this app's sections on other apps' pages
        register(
            Panel(
                "node-group",
                "related",
                "decisions/_group_decisions.html",
                "decisions.views.group_decisions",
                order=1,
            )
        )
        register(
            Panel(
                "node-group",
                "related",
                "decisions/_group_events.html",
                "decisions.views.group_events",
                order=2,
            )
        )
