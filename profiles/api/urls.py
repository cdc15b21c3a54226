"""This app's REST routes; ``hami_sim/project/urls.py`` registers every app's routes on the one router."""

from .views import (
    DeviceProfileViewSet,
    DriftFindingViewSet,
    NodeGroupViewSet,
    NodeInventoryViewSet,
    TaskRunViewSet,
)

__all__ = ["routes"]

# (prefix under /api/v1/, viewset, basename)
routes = [
    ("node-groups", NodeGroupViewSet, "nodegroup"),
    ("device-profiles", DeviceProfileViewSet, "deviceprofile"),
    ("node-inventories", NodeInventoryViewSet, "nodeinventory"),
    ("drift-findings", DriftFindingViewSet, "driftfinding"),
    ("task-runs", TaskRunViewSet, "taskrun"),
]
