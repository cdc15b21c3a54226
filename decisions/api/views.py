"""Read-only REST endpoints: decisions, CA events, CA status snapshots."""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from hami_sim.engine.hami_releases import SUPPORTED_RELEASES, HamiReleaseError, parse_release
from hami_sim.project.rest import ApiError
from simulations.api.serializers import ErrorSerializer

from ..filtersets import CAEventFilterSet, DecisionFilterSet
from ..models import AutoscalerStatus, CAEvent, Decision
from ..upgrade import Comparison, compare
from .serializers import (
    AutoscalerStatusSerializer,
    CAEventSerializer,
    DecisionListSerializer,
    DecisionSerializer,
    UpgradeSerializer,
)

__all__ = ["DecisionViewSet", "CAEventViewSet", "AutoscalerStatusViewSet", "UpgradeViewSet", "upgrade_json"]


class DecisionViewSet(viewsets.ReadOnlyModelViewSet):
    """Folded filter decisions, newest first; the detail carries per-node and per-device verdicts."""

    queryset = Decision.objects.all()
    filterset_class = DecisionFilterSet

    def get_queryset(self):
        qs = super().get_queryset()
        return qs.defer("nodes", "request", "policies", "pod_spec") if self.action == "list" else qs

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


def _rule(change) -> dict:
    return {"rule": change.name, "description": change.description, "pr": change.pr}


def upgrade_json(result: Comparison) -> dict:
    """A comparison as ``GET /api/v1/upgrade`` answers it (``UpgradeSerializer``)."""
    return {
        "current": result.current,
        "release": result.other,
        "differences": [_rule(r) for r in result.differences],
        "judged": result.judged,
        "cap": result.cap,
        "capped": result.capped,
        "changes": [
            {
                "pod": {
                    "namespace": c.subject.namespace,
                    "name": c.subject.name,
                    "uid": c.subject.uid,
                    "source": c.subject.source,
                    "decision": c.subject.decision_id,
                },
                "changed": list(c.changed),
                "current": c.current.as_dict(),
                "other": c.other.as_dict(),
                "rules": [_rule(r) for r in c.rules],
                "together": c.together,
                "sentence": c.sentence,
            }
            for c in result.changes
        ],
        "unjudged": [{"namespace": s.namespace, "name": s.name, "error": e} for s, e in result.unjudged],
    }


def requested_release(value: object) -> str:
    """The ``release`` query parameter as a supported release, or a 400 naming the supported ones."""
    if not isinstance(value, str) or not value.strip():
        raise ApiError(400, f"release: required, one of {', '.join(SUPPORTED_RELEASES)}")
    try:
        return parse_release(value)
    except HamiReleaseError as exc:
        raise ApiError(400, f"release: {exc}") from None


class _OneAnswer(AutoSchema):
    """The schema of a ``list`` route that answers one object (a comparison), not an array of them."""

    def _is_list_view(self, serializer=None) -> bool:
        return False


class UpgradeViewSet(viewsets.GenericViewSet):
    """What another HAMi release would change: the pending pods and the pods of recent decisions
    judged under both releases, each pod whose verdict, node group or devices change with the rule
    that changes it (``decisions.upgrade``)."""

    serializer_class = UpgradeSerializer
    schema = _OneAnswer()
    #: one computed answer, not a list of rows: bounded by the comparison's own cap on pods
    #: (``decisions.upgrade``), so no page size applies
    one_answer = True
    pagination_class = None
    filter_backends: list = []

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "release",
                str,
                required=True,
                enum=list(SUPPORTED_RELEASES),
                description="the HAMi release to compare with (2.8, 2.9, 2.10; v2.9.0 reads as 2.9)",
            )
        ],
        responses={200: UpgradeSerializer, 400: ErrorSerializer},
        summary="What another HAMi release would change for the pending and recent pods",
    )
    def list(self, request: Request) -> Response:
        release = requested_release(request.query_params.get("release"))
        return Response(upgrade_json(compare(release)))
