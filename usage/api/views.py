"""``GET /api/v1/blind-spot``: the pods upstream CA cannot see, filterable and paginated."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.response import Response

from hami_sim.project.rest import ApiError, LimitOffsetPagination

from .. import blindspot
from ..invisible import invisible_rows
from .serializers import BlindSpotFilterSerializer, InvisiblePodSerializer

__all__ = ["BlindSpotViewSet"]


class BlindSpotPagination(LimitOffsetPagination):
    """The usual ``count``/``next``/``previous``/``results`` page, plus when the report was computed
    and, when the usage is too old to judge, why nothing is listed (``stale``)."""

    def paginate_report(self, rows: list, request, view, report: blindspot.Report) -> Response:
        page = self.paginate_queryset(rows, request, view=view) or []
        response = self.get_paginated_response(InvisiblePodSerializer(page, many=True).data)
        response.data["computed_at"] = report.computed_at
        response.data["stale"] = report.stale
        return response


class BlindSpotViewSet(viewsets.GenericViewSet):
    """Pending HAMi pods upstream CA's count-only view places on an existing node while HAMi's device
    rules place them on no card: CA never scales for them. Oldest first."""

    serializer_class = InvisiblePodSerializer
    pagination_class = BlindSpotPagination
    filter_backends: list = []

    @extend_schema(
        parameters=[
            OpenApiParameter("node_group", str, description="the node group CA thinks takes the pod"),
            OpenApiParameter("namespace", str),
            OpenApiParameter("q", str, description="part of the pod's name"),
        ],
        summary="The pods upstream Cluster Autoscaler cannot see",
    )
    def list(self, request):
        filters = BlindSpotFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        report = blindspot.report_or_none()
        if report is None:
            raise ApiError(503, "the blind-spot report cannot be computed now (see the service's log)")
        rows = invisible_rows(report, **filters.validated_data)
        return self.paginator.paginate_report(rows, request, self, report)
