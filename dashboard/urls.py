"""Dashboard pages (login required unless DEMO_READ_ONLY)."""

from django.urls import path, re_path

from . import views

app_name = "dashboard"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("decisions/", views.decision_list, name="decisions"),
    path("decisions/<int:pk>/", views.decision_detail, name="decision"),
    # a pod name as CA sent it: it may hold "/" (and be empty), the page must still link and open
    re_path(r"^pods/(?P<namespace>[^/]*)/(?P<name>.*)/$", views.pod, name="pod"),
    path("events/", views.event_list, name="events"),
    path("node-groups/", views.node_group_list, name="node-groups"),
    path("node-groups/<path:name>/profiles/<int:pk>/compare/", views.profile_compare, name="profile-compare"),
    path("node-groups/<path:name>/", views.node_group_detail, name="node-group"),  # CA ids may hold "/"
    path("nodes/", views.node_list, name="nodes"),
    path("nodes/<str:name>/", views.node_detail, name="node"),
    path("drift/", views.drift_list, name="drift"),
    path("task-runs/", views.task_run_list, name="task-runs"),
    path("sessions/", views.session_list, name="sessions"),
    path("sessions/<uuid:pk>/", views.session_detail, name="session"),
    path("sessions/<uuid:pk>/<str:action>/", views.session_action, name="session-action"),
    path("what-if/", views.what_if, name="what-if"),
]
