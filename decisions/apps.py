from django.apps import AppConfig


class DecisionsConfig(AppConfig):
    name = "decisions"
    default_auto_field = "django.db.models.BigAutoField"
