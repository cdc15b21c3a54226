"""The simulations app's pages (names in the ``dashboard`` namespace: ``dashboard/urls.py`` includes them).

``simulations/urls.py`` holds the extender verbs at the root, which are not pages."""

from django.urls import path

from . import views

urlpatterns = [
    path("sessions/", views.session_list, name="sessions"),
    path("sessions/<uuid:pk>/", views.session_detail, name="session"),
    path("sessions/<uuid:pk>/placements/", views.session_place, name="session-place"),
    path("sessions/<uuid:pk>/<str:action>/", views.session_action, name="session-action"),
]
