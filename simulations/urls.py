"""Extender verbs at the root (CA's urlPrefix points at the server), the REST API under /api/v1/."""

from django.urls import re_path

from .api import sessions, views

urlpatterns = [
    re_path(r"^filter-simulation/?$", views.filter_simulation, name="filter-simulation"),
    re_path(r"^prioritize-simulation/?$", views.prioritize_simulation, name="prioritize-simulation"),
    re_path(
        r"^sessions/(?P<session_id>[^/]+)/filter-simulation/?$",
        sessions.session_filter_simulation,
        name="session-filter-simulation",
    ),
    re_path(
        r"^sessions/(?P<session_id>[^/]+)/prioritize-simulation/?$",
        sessions.session_prioritize_simulation,
        name="session-prioritize-simulation",
    ),
]
