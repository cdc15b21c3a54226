from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    """Node groups, device profiles, cluster inventory and drift."""

    name = "profiles"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import metrics, signals  # noqa: F401  (connect receivers, register the drift collector)

        metrics.register()
