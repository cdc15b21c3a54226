"""REST routes under /api/v1/ (read-only): decisions, CA events, CA status snapshots."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from . import views

__all__ = ["router", "urlpatterns"]


class _OptionalSlashRouter(SimpleRouter):
    """With or without the trailing slash, like the other apps' routes."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.trailing_slash = "/?"


router = _OptionalSlashRouter()
router.register("decisions", views.DecisionViewSet, basename="decision")
router.register("ca-events", views.CAEventViewSet, basename="caevent")
router.register("autoscaler-status", views.AutoscalerStatusViewSet, basename="autoscalerstatus")

urlpatterns = [path("", include((router.urls, "decisions-api")))]
