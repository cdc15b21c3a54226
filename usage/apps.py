from django.apps import AppConfig


class UsageConfig(AppConfig):
    """Live nodes' usage from HAMi's pod allocations (between ``profiles`` and ``simulations``)."""

    name = "usage"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from hami_sim.pages.panels import Panel, register

        from . import metrics, signals  # noqa: F401  (relist pods with every node sync; usage-age gauge)

        metrics.register()
        # this app's sections on other apps' pages
        register(Panel("node-group", "members", "usage/_group_members.html", "usage.views.group_members"))
        register(
            Panel("drift", "after_table", "usage/_usage_findings.html", "usage.views.drift_usage_findings")
        )
