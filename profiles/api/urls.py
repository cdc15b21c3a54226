"""REST routes under /api/v1/ (included by ``hami_sim/urls.py``)."""

from rest_framework.routers import DefaultRouter

from .views import (
    DeviceProfileViewSet,
    DriftFindingViewSet,
    NodeGroupViewSet,
    NodeInventoryViewSet,
    TaskRunViewSet,
)

__all__ = ["router", "urlpatterns"]

router = DefaultRouter(trailing_slash="/?")
router.register("node-groups", NodeGroupViewSet, basename="nodegroup")
router.register("device-profiles", DeviceProfileViewSet, basename="deviceprofile")
router.register("node-inventories", NodeInventoryViewSet, basename="nodeinventory")
router.register("drift-findings", DriftFindingViewSet, basename="driftfinding")
router.register("task-runs", TaskRunViewSet, basename="taskrun")

urlpatterns = router.urls
