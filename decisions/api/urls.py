"""This app's REST routes (read-only); ``hami_sim/project/urls.py`` registers them on the one router."""

from . import views

__all__ = ["routes"]

# (prefix under /api/v1/, viewset, basename)
routes = [
    ("decisions", views.DecisionViewSet, "decision"),
    ("ca-events", views.CAEventViewSet, "caevent"),
    ("autoscaler-status", views.AutoscalerStatusViewSet, "autoscalerstatus"),
    ("upgrade", views.UpgradeViewSet, "upgrade"),
]
