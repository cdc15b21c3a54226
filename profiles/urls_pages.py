"""The profiles app's pages (names in the ``dashboard`` namespace: ``dashboard/urls.py`` includes them)."""

from django.urls import path

from . import views

urlpatterns = [
    path("node-groups/", views.node_group_list, name="node-groups"),
    path("node-groups/<path:name>/profiles/<int:pk>/compare/", views.profile_compare, name="profile-compare"),
    path("node-groups/<path:name>/", views.node_group_detail, name="node-group"),  # CA ids may hold "/"
    path("drift/", views.drift_list, name="drift"),
]
