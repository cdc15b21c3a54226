from django.apps import AppConfig


class UsageConfig(AppConfig):
    """Live nodes' usage from HAMi's pod allocations (between ``profiles`` and ``simulations``)."""

    name = "usage"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import metrics, signals  # noqa: F401  (relist pods with every node sync; usage-age gauge)

        metrics.register()
