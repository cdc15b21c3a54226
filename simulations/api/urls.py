"""REST routes under /api/v1/: simulation sessions and the scale-up estimate."""

from django.urls import path

from .estimate import EstimateView
from .sessions import (
    SessionCommitView,
    SessionDetailView,
    SessionForkView,
    SessionListView,
    SessionPlacementDetailView,
    SessionPlacementsView,
    SessionRevertView,
)

urlpatterns = [
    path("sessions", SessionListView.as_view(), name="session-list"),
    path("sessions/<str:session_id>", SessionDetailView.as_view(), name="session-detail"),
    path("sessions/<str:session_id>/placements", SessionPlacementsView.as_view(), name="session-placements"),
    path(
        "sessions/<str:session_id>/placements/<path:pod_uid>",
        SessionPlacementDetailView.as_view(),
        name="session-placement-detail",
    ),
    path("sessions/<str:session_id>/fork", SessionForkView.as_view(), name="session-fork"),
    path("sessions/<str:session_id>/revert", SessionRevertView.as_view(), name="session-revert"),
    path("sessions/<str:session_id>/commit", SessionCommitView.as_view(), name="session-commit"),
    path("estimate", EstimateView.as_view(), name="estimate"),
]
