"""The decisions app's pages (names in the ``dashboard`` namespace: ``dashboard/urls.py`` includes them)."""

from django.urls import path, re_path

from . import views

urlpatterns = [
    path("decisions/", views.decision_list, name="decisions"),
    path("decisions/<int:pk>/", views.decision_detail, name="decision"),
    # a pod name as CA sent it: it may hold "/" (and be empty), the page must still link and open
    re_path(r"^pods/(?P<namespace>[^/]*)/(?P<name>.*)/$", views.pod, name="pod"),
    path("events/", views.event_list, name="events"),
    path("what-if/", views.what_if, name="what-if"),
    path("upgrade/", views.upgrade_page, name="upgrade"),
]
