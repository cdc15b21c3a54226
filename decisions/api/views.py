"""Read-only REST endpoints: decisions, CA events, CA status snapshots."""

from __future__ import annotations

from rest_framework import viewsets

from ..filtersets import CAEventFilterSet, DecisionFilterSet
from ..models import AutoscalerStatus, CAEvent, Decision
from .serializers import (
    AutoscalerStatusSerializer,
    CAEventSerializer,
    DecisionListSerializer,
    DecisionSerializer,
)

__all__ = ["DecisionViewSet", "CAEventViewSet", "AutoscalerStatusViewSet"]


class DecisionViewSet(viewsets.ReadOnlyModelViewSet):
    """Folded filter decisions, newest first; the detail carries per-node and per-device verdicts."""

    queryset = Decision.objects.all()
    filterset_class = DecisionFilterSet

    def get_queryset(self):
        qs = super().get_queryset()
        return qs.defer("nodes", "request", "policies") if self.action == "list" else qs

    def get_serializer_class(self):
        return DecisionListSerializer if self.action == "list" else DecisionSerializer


class CAEventViewSet(viewsets.ReadOnlyModelViewSet):
    """CA and scheduler events about pods, parsed; join to decisions by ``pod_uid``."""

    queryset = CAEvent.objects.all()
    serializer_class = CAEventSerializer
    filterset_class = CAEventFilterSet


class AutoscalerStatusViewSet(viewsets.ReadOnlyModelViewSet):
    """Snapshots of CA's ``cluster-autoscaler-status`` ConfigMap (changes only)."""

    queryset = AutoscalerStatus.objects.all()
    serializer_class = AutoscalerStatusSerializer
