"""REST routes under /api/v1/ (included by ``hami_sim/urls.py``)."""

from django.urls import re_path
from rest_framework.routers import DefaultRouter

from .views import (
    DeviceProfileViewSet,
    DriftFindingViewSet,
    NodeGroupViewSet,
    NodeInventoryViewSet,
    TaskRunViewSet,
)

__all__ = ["router", "urlpatterns"]

router = DefaultRouter()
router.register("node-groups", NodeGroupViewSet, basename="nodegroup")
router.register("device-profiles", DeviceProfileViewSet, basename="deviceprofile")
router.register("node-inventories", NodeInventoryViewSet, basename="nodeinventory")
router.register("drift-findings", DriftFindingViewSet, basename="driftfinding")
router.register("task-runs", TaskRunViewSet, basename="taskrun")

# design.md: the template path has no trailing slash (the router's ".../template/" works too).
template_view = NodeGroupViewSet.as_view({"get": "template"}, **NodeGroupViewSet.template.kwargs)

urlpatterns = [
    re_path(r"^node-groups/(?P<name>[^/]+)/template$", template_view, name="nodegroup-template-noslash"),
    *router.urls,
]
