"""REST routes under /api/v1/."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("decisions", views.DecisionViewSet, basename="decision")
router.register("ca-events", views.CAEventViewSet, basename="caevent")
router.register("autoscaler-status", views.AutoscalerStatusViewSet, basename="autoscalerstatus")

urlpatterns = [path("", include((router.urls, "decisions-api")))]
