"""The usage app's pages (names in the ``dashboard`` namespace: ``dashboard/urls.py`` includes them)."""

from django.urls import path

from . import views

urlpatterns = [
    path("nodes/", views.node_list, name="nodes"),
    path("nodes/<str:name>/", views.node_detail, name="node"),
    path("dra/", views.dra_page, name="dra"),
    path("blind-spot/", views.blind_spot_list, name="blind-spot"),
]
