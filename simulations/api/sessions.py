"""``/api/v1/sessions`` (REST) and the session-scoped extender verbs ``/sessions/<id>/...``.

The REST viewset is thin: validate the body (``PlacementRequestSerializer``, ...), call
``simulations.sessions``; a ``SessionError`` becomes its 4xx in the one error shape
(``{"detail": ...}``, plus ``reason`` on a 422 and ``revision`` on a 412). The extender verbs are the
plain verbs' views (``simulations.api.views``) answering with the session's node states, and answer
an unknown or expired session the way the extender protocol expects (HTTP 200; ``Error`` or ``[]``).

Every call acts as its caller (``hami_sim.project.permissions.caller_of``): a session belongs to the
identity that created it, and another identity gets 403 on it and never sees it listed, unless it
is an operator.
"""

from __future__ import annotations

import orjson
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from hami_sim.project.logcontext import bind_rejected
from hami_sim.project.permissions import caller_of

from .. import sessions as svc
from ..extender import ExtenderArgs, ExtenderArgsError, FilterResult
from ..models import SimulationSession
from .base import SimulationViewSet, capped, check_storable, json_object
from .serializers import (
    ErrorSerializer,
    PlacementRequestSerializer,
    PlacementSerializer,
    RevisionSerializer,
    SessionCreateSerializer,
    SessionSerializer,
    SessionSummarySerializer,
)
from .views import ExtenderVerbView, PrioritizeSimulationView, filter_answer, prioritize_answer

__all__ = ["SessionViewSet", "SessionFilterSimulationView", "SessionPrioritizeSimulationView"]

IF_MATCH = OpenApiParameter(
    "If-Match",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="expected session revision; 412 on mismatch",
)
SESSION_ID = OpenApiParameter("session_id", str, OpenApiParameter.PATH, description="the session's id")
_CHECKPOINT_RESPONSES = {
    200: RevisionSerializer,
    400: ErrorSerializer,
    403: ErrorSerializer,
    404: ErrorSerializer,
    409: ErrorSerializer,
    412: ErrorSerializer,
}


def _answer(body: dict | orjson.Fragment, status: int, revision: int | None = None) -> Response:
    response = Response(body, status=status)
    if revision is not None:
        response["ETag"] = f'"{revision}"'
    return response


def _if_match(request) -> int | None:
    return svc.parse_if_match(request.headers.get("If-Match"))


def _validated(serializer_class, data: dict) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return data


class SessionViewSet(SimulationViewSet):
    """Simulation sessions (docs/sessions.md): CA's ClusterSnapshot with HAMi's device choice."""

    serializer_class = SessionSummarySerializer
    lookup_url_kwarg = "session_id"
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular building the schema
            return SimulationSession.objects.none()
        return svc.visible_sessions(caller_of(self.request))

    @extend_schema(summary="Live sessions of this caller (an operator: all), newest first (paginated)")
    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(SessionSummarySerializer(page, many=True).data)

    @extend_schema(
        request=SessionCreateSerializer,
        responses={201: SessionSerializer, 400: ErrorSerializer, 413: ErrorSerializer, 429: ErrorSerializer},
        summary="Create a simulation session",
    )
    def create(self, request):
        data = json_object(request, allow_empty=True)
        check_storable(data)
        body = svc.create_session(_validated(SessionCreateSerializer, data), caller=caller_of(request))
        return _answer(body, 201, body["revision"])

    @extend_schema(
        parameters=[SESSION_ID],
        responses={200: SessionSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
        summary="A session's full state",
    )
    def retrieve(self, request, session_id: str):
        body = svc.session_state(session_id, caller=caller_of(request))
        # only a read is capped: a write's answer is small, and a refusal after it would hide the write
        return _answer(capped(body), 200, body["revision"])

    @extend_schema(
        parameters=[SESSION_ID],
        responses={204: None, 403: ErrorSerializer, 404: ErrorSerializer},
        summary="Delete a session",
    )
    def destroy(self, request, session_id: str):
        svc.delete_session(session_id, caller=caller_of(request))
        return Response(status=204)

    @extend_schema(
        request=PlacementRequestSerializer,
        parameters=[SESSION_ID, IF_MATCH],
        responses={
            201: PlacementSerializer,
            200: PlacementSerializer,
            400: ErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
            412: ErrorSerializer,
            413: ErrorSerializer,
            422: ErrorSerializer,
        },
        summary="Place a pod with HAMi's device choice",
    )
    @action(detail=True, methods=["post"])
    def placements(self, request, session_id: str):
        data = json_object(request)
        check_storable(data)
        status, body = svc.place_pod(
            session_id,
            _validated(PlacementRequestSerializer, data),
            _if_match(request),
            caller=caller_of(request),
        )
        return _answer(body, status, body["revision"])

    @extend_schema(
        request=None,
        parameters=[SESSION_ID, OpenApiParameter("pod_uid", str, OpenApiParameter.PATH), IF_MATCH],
        responses={
            200: RevisionSerializer,
            400: ErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
            412: ErrorSerializer,
        },
        summary="Remove a placement",
    )
    @action(detail=True, methods=["delete"], url_path=r"placements/(?P<pod_uid>.+)", url_name="placement")
    def placement(self, request, session_id: str, pod_uid: str):
        body = svc.remove_placement(session_id, pod_uid, _if_match(request), caller=caller_of(request))
        return _answer(body, 200, body["revision"])

    def _checkpoint(self, operation, request, session_id: str) -> Response:
        body = operation(session_id, _if_match(request), caller=caller_of(request))
        return _answer(body, 200, body["revision"])

    @extend_schema(request=None, parameters=[SESSION_ID, IF_MATCH], responses=_CHECKPOINT_RESPONSES)
    @action(detail=True, methods=["post"])
    def fork(self, request, session_id: str):
        """Push a checkpoint (CA ``ClusterSnapshot.Fork``)."""
        return self._checkpoint(svc.fork, request, session_id)

    @extend_schema(request=None, parameters=[SESSION_ID, IF_MATCH], responses=_CHECKPOINT_RESPONSES)
    @action(detail=True, methods=["post"])
    def revert(self, request, session_id: str):
        """Restore the last checkpoint exactly and pop it (CA ``Revert``)."""
        return self._checkpoint(svc.revert, request, session_id)

    @extend_schema(request=None, parameters=[SESSION_ID, IF_MATCH], responses=_CHECKPOINT_RESPONSES)
    @action(detail=True, methods=["post"])
    def commit(self, request, session_id: str):
        """Pop the last checkpoint and keep the changes (CA ``Commit``)."""
        return self._checkpoint(svc.commit, request, session_id)


# -- session-scoped extender verbs ---------------------------------------------------------------------


class SessionVerbView(ExtenderVerbView):
    """A session-scoped verb: the session's node states for the caller, then the plain verb's answer.

    An unknown session, or one the caller may not use, is named before a malformed body (as when
    the session was looked up first), and answered the way the extender protocol expects."""

    def answer(self, request, **kwargs: str) -> tuple[object, str]:
        session_id = kwargs["session_id"]
        try:
            args: ExtenderArgs | None = self.extender_args(request)
        except ExtenderArgsError as exc:
            args, malformed = None, exc
        try:
            states = svc.node_states(session_id, caller=caller_of(request))
        except svc.SessionError as exc:
            outcome = _refused(exc, args.body if args is not None else malformed.body)
            return self.refused(exc.error), outcome
        if args is None:
            raise malformed
        return self.answer_args(args, session_id, states)

    def refused(self, error: str) -> object:
        raise NotImplementedError

    def answer_args(self, args: ExtenderArgs, session_id: str, states) -> tuple[object, str]:
        raise NotImplementedError


class SessionFilterSimulationView(SessionVerbView):
    verb = "session-filter"

    def refused(self, error: str) -> object:
        return FilterResult(error=error)

    def answer_args(self, args: ExtenderArgs, session_id: str, states) -> tuple[object, str]:
        return filter_answer(args, caller=f"session:{session_id}", states=states, started=self.started)


class SessionPrioritizeSimulationView(SessionVerbView, PrioritizeSimulationView):
    verb = "session-prioritize"

    def refused(self, error: str) -> object:
        return []

    def answer_args(self, args: ExtenderArgs, session_id: str, states) -> tuple[object, str]:
        return prioritize_answer(args, states=states)


def _refused(exc: svc.SessionError, body: bytes) -> str:
    """The log outcome of a session verb on a session the caller cannot use (unknown or not its own)."""
    outcome = "foreign_session" if exc.status == 403 else "unknown_session"
    bind_rejected(outcome, body=body)
    return outcome
