"""REST routes under /api/v1/ (included by ``hami_sim/urls.py``)."""

from rest_framework.routers import DefaultRouter

from .views import (
    DeviceProfileViewSet,
    DriftFindingViewSet,
    NodeGroupViewSet,
    NodeInventoryViewSet,
    TaskRunViewSet,
)

__all__ = ["OptionalSlashRouter", "router", "urlpatterns"]


class OptionalSlashRouter(DefaultRouter):
    """Routes answer with or without the trailing slash (design.md writes ``.../template`` bare)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.trailing_slash = "/?"


router = OptionalSlashRouter()
router.register("node-groups", NodeGroupViewSet, basename="nodegroup")
router.register("device-profiles", DeviceProfileViewSet, basename="deviceprofile")
router.register("node-inventories", NodeInventoryViewSet, basename="nodeinventory")
router.register("drift-findings", DriftFindingViewSet, basename="driftfinding")
router.register("task-runs", TaskRunViewSet, basename="taskrun")

urlpatterns = router.urls
