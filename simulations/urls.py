"""Extender verbs at the root (CA's urlPrefix points at the server); the REST API is ``hami_sim.project.urls``'s router."""

from django.urls import re_path

from .api.sessions import SessionFilterSimulationView, SessionPrioritizeSimulationView
from .api.views import FilterSimulationView, PrioritizeSimulationView

urlpatterns = [
    re_path(r"^filter-simulation/?$", FilterSimulationView.as_view(), name="filter-simulation"),
    re_path(r"^prioritize-simulation/?$", PrioritizeSimulationView.as_view(), name="prioritize-simulation"),
    re_path(
        r"^sessions/(?P<session_id>[^/]+)/filter-simulation/?$",
        SessionFilterSimulationView.as_view(),
        name="session-filter-simulation",
    ),
    re_path(
        r"^sessions/(?P<session_id>[^/]+)/prioritize-simulation/?$",
        SessionPrioritizeSimulationView.as_view(),
        name="session-prioritize-simulation",
    ),
]
