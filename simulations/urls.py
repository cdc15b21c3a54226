"""Extender verbs at the root (CA's urlPrefix points at the server), the REST API under /api/v1/."""

from django.urls import path, re_path

from .api import views

urlpatterns = [
    re_path(r"^filter-simulation/?$", views.filter_simulation, name="filter-simulation"),
    re_path(r"^prioritize-simulation/?$", views.prioritize_simulation, name="prioritize-simulation"),
]
