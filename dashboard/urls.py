"""The pages (login required unless DEMO_READ_ONLY): the dashboard's own, then each app's.

Every page name is in the ``dashboard`` namespace (``{% url 'dashboard:node-group' name %}``),
wherever its view lives: each app's ``urls_pages.py`` has no namespace of its own.
"""

from django.urls import include, path

from . import views

app_name = "dashboard"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("task-runs/", views.task_run_list, name="task-runs"),
    path("diagnostics/", views.diagnostics, name="diagnostics"),
    path("", include("decisions.urls_pages")),
    path("", include("profiles.urls_pages")),
    path("", include("usage.urls_pages")),
    path("", include("simulations.urls_pages")),
]
