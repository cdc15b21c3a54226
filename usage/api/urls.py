"""This app's REST routes; ``hami_sim/project/urls.py`` registers every app's routes on the one router."""

from .views import BlindSpotViewSet

__all__ = ["routes"]

# (prefix under /api/v1/, viewset, basename)
routes = [
    ("blind-spot", BlindSpotViewSet, "blindspot"),
]
