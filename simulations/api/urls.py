"""This app's REST routes; ``hami_sim/project/urls.py`` registers every app's routes on the one router."""

from .estimate import EstimateViewSet
from .sessions import SessionViewSet

__all__ = ["routes"]

# (prefix under /api/v1/, viewset, basename)
routes = [
    ("sessions", SessionViewSet, "session"),
    ("estimate", EstimateViewSet, "estimate"),
]
