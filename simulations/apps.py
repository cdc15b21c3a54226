from django.apps import AppConfig


class SimulationsConfig(AppConfig):
    name = "simulations"
    default_auto_field = "django.db.models.BigAutoField"
