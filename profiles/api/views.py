"""REST views: CRUD for node groups and profiles, read-only inventories, findings and task runs."""

from __future__ import annotations

import yaml
from django.db.models import Count, Prefetch, Q
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import renderers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from hami_sim.project.permissions import ModelWritePermissions
from hami_sim.runtime.models import TaskRun

from ..filtersets import (
    DeviceProfileFilterSet,
    DriftFindingFilterSet,
    NodeGroupFilterSet,
    NodeInventoryFilterSet,
    TaskRunFilterSet,
)
from ..models import DeviceProfile, DeviceRow, DriftFinding, NodeGroup, NodeInventory
from ..nodetemplates import group_template
from .serializers import (
    DeviceProfileSerializer,
    DriftFindingSerializer,
    NodeGroupSerializer,
    NodeInventorySerializer,
    TaskRunSerializer,
)

__all__ = [
    "NodeGroupViewSet",
    "DeviceProfileViewSet",
    "NodeInventoryViewSet",
    "DriftFindingViewSet",
    "TaskRunViewSet",
    "KwokYAMLRenderer",
]


class KwokYAMLRenderer(renderers.BaseRenderer):
    """``?format=kwok``: the template node as kwok-ready YAML (``kubectl apply -f``)."""

    media_type = "application/yaml"
    format = "kwok"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        return yaml.safe_dump(data, sort_keys=False, default_flow_style=False).encode()


def _profiles_prefetch() -> Prefetch:
    return Prefetch(
        "profiles",
        queryset=DeviceProfile.objects.select_related("node_group").prefetch_related(
            Prefetch("devices", queryset=DeviceRow.objects.order_by("position", "id"))
        ),
    )


class NodeGroupViewSet(viewsets.ModelViewSet):
    """Node groups by CA id (``/api/v1/node-groups/<name>/``); writes need the model permission (``operators``)."""

    permission_classes = [*viewsets.ModelViewSet.permission_classes, ModelWritePermissions]

    serializer_class = NodeGroupSerializer
    filterset_class = NodeGroupFilterSet
    lookup_field = "name"
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        return (
            NodeGroup.objects.prefetch_related(_profiles_prefetch())
            .annotate(open_findings=Count("findings", filter=Q(findings__resolved_at__isnull=True)))
            .order_by("name")
        )

    @extend_schema(
        parameters=[
            OpenApiParameter("format", str, enum=["json", "kwok"], description="kwok: kwok-ready YAML")
        ],
        responses={200: dict},
    )
    @action(
        detail=True,
        methods=["get"],
        renderer_classes=[renderers.JSONRenderer, KwokYAMLRenderer],
        url_path="template",
    )
    def template(self, request: Request, name: str | None = None) -> Response:
        """A complete template Node for the group (labels, capacity incl. devices, registration)."""
        group = self.get_object()
        kwok = getattr(request.accepted_renderer, "format", "") == "kwok"
        return Response(group_template(group, kwok=kwok))

    @extend_schema(
        parameters=[OpenApiParameter("provider", str, enum=["aws", "azure", "clusterapi"], required=True)],
        responses={200: dict},
    )
    @action(detail=True, methods=["get"], url_path="ca-template")
    def ca_template(self, request: Request, name: str | None = None) -> Response:
        """The tags (aws, azure) or annotations (clusterapi) that make CA's template of this group,
        when it has no nodes, advertise HAMi's resources, labels and taints (scale-from-zero)."""
        from django.shortcuts import get_object_or_404

        from ..ca_template_tags import PROVIDERS, ca_template

        # not self.get_object(): the list filters would read ?provider= as NodeGroup.provider
        group = get_object_or_404(self.get_queryset(), name=name)
        provider = request.query_params.get("provider", "")
        if provider not in PROVIDERS:
            return Response({"detail": f"provider must be one of {', '.join(PROVIDERS)}"}, status=400)
        return Response(ca_template(group, provider))

    @extend_schema(responses={200: dict})
    @action(detail=True, methods=["get"], url_path="dra-slices")
    def dra_slices(self, request: Request, name: str | None = None) -> Response:
        """The group's profile as DRA template ResourceSlices: what HAMi's DRA driver publishes on a
        fresh node (``hami``) and, for a clusterapi group, what CA builds itself (``clusterapi``)."""
        from ..dra_templates import dra_template_slices

        return Response(dra_template_slices(self.get_object()))

    def handle_exception(self, exc: Exception) -> Response:
        # Errors are JSON even under ?format=kwok: the YAML renderer cannot dump DRF's ErrorDetail
        # (an unknown group was a 500), and clients read errors as JSON everywhere else.
        response = super().handle_exception(exc)
        if isinstance(getattr(self.request, "accepted_renderer", None), KwokYAMLRenderer):
            self.request.accepted_renderer = renderers.JSONRenderer()
            self.request.accepted_media_type = renderers.JSONRenderer.media_type
        return response


class DeviceProfileViewSet(viewsets.ModelViewSet):
    permission_classes = [*viewsets.ModelViewSet.permission_classes, ModelWritePermissions]
    serializer_class = DeviceProfileSerializer
    filterset_class = DeviceProfileFilterSet

    def get_queryset(self):
        return (
            DeviceProfile.objects.select_related("node_group")
            .prefetch_related(Prefetch("devices", queryset=DeviceRow.objects.order_by("position", "id")))
            .order_by("node_group__name", "vendor")
        )


class NodeInventoryViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = NodeInventorySerializer
    filterset_class = NodeInventoryFilterSet

    def get_queryset(self):
        return (
            NodeInventory.objects.select_related("node_group")
            .annotate(open_findings=Count("findings", filter=Q(findings__resolved_at__isnull=True)))
            .order_by("name")
        )


class DriftFindingViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = DriftFindingSerializer
    filterset_class = DriftFindingFilterSet
    queryset = DriftFinding.objects.select_related("inventory", "node_group").order_by("-opened_at", "id")


class TaskRunViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = TaskRunSerializer
    filterset_class = TaskRunFilterSet
    queryset = TaskRun.objects.order_by("-started_at", "-id")
