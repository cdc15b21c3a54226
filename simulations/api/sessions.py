"""``/api/v1/sessions`` (REST) and the session-scoped extender verbs ``/sessions/<id>/...``.

The REST views are thin: parse, call ``simulations.sessions``, map ``SessionError`` to its 4xx JSON.
The extender verbs reuse ``run_filter``/``run_prioritize`` with the session's node states, and answer
an unknown or expired session the way the extender protocol expects (HTTP 200; ``Error`` or ``[]``).
"""

from __future__ import annotations

import time

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from hami_sim.logcontext import bind_rejected

from .. import sessions as svc
from ..extender import filter_result
from ..metrics import EXTENDER_LATENCY, EXTENDER_REQUESTS
from .base import JsonAPIView, parse_json_body
from .serializers import (
    ErrorSerializer,
    PlacementRequestSerializer,
    PlacementSerializer,
    RevisionSerializer,
    SessionCreateSerializer,
    SessionSerializer,
)
from .views import BodyTooLarge, read_body, run_filter, run_prioritize

__all__ = [
    "SessionListView",
    "SessionDetailView",
    "SessionPlacementsView",
    "SessionPlacementDetailView",
    "SessionForkView",
    "SessionRevertView",
    "SessionCommitView",
    "session_filter_simulation",
    "session_prioritize_simulation",
]

IF_MATCH = OpenApiParameter(
    "If-Match",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="expected session revision; 412 on mismatch",
)


def _answer(body: dict, status: int, revision: int | None = None) -> Response:
    response = Response(body, status=status)
    if revision is not None:
        response["ETag"] = f'"{revision}"'
    return response


def _error(exc: svc.SessionError) -> Response:
    return Response(exc.body(), status=exc.status)


def _if_match(request) -> int | None:
    return svc.parse_if_match(request.headers.get("If-Match"))


class SessionListView(JsonAPIView):
    @extend_schema(
        request=SessionCreateSerializer,
        responses={201: SessionSerializer, 400: ErrorSerializer, 413: ErrorSerializer},
        summary="Create a simulation session",
    )
    def post(self, request):
        try:
            body = svc.create_session(parse_json_body(request, allow_empty=True, stored=True))
        except svc.SessionError as exc:
            return _error(exc)
        return _answer(body, 201, body["revision"])


class SessionDetailView(JsonAPIView):
    @extend_schema(responses={200: SessionSerializer, 404: ErrorSerializer}, summary="A session's full state")
    def get(self, request, session_id: str):
        try:
            body = svc.session_state(session_id)
        except svc.SessionError as exc:
            return _error(exc)
        return _answer(body, 200, body["revision"])

    @extend_schema(responses={204: None, 404: ErrorSerializer}, summary="Delete a session")
    def delete(self, request, session_id: str):
        try:
            svc.delete_session(session_id)
        except svc.SessionError as exc:
            return _error(exc)
        return Response(status=204)


class SessionPlacementsView(JsonAPIView):
    @extend_schema(
        request=PlacementRequestSerializer,
        parameters=[IF_MATCH],
        responses={
            201: PlacementSerializer,
            200: PlacementSerializer,
            400: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
            412: ErrorSerializer,
            413: ErrorSerializer,
            422: ErrorSerializer,
        },
        summary="Place a pod with HAMi's device choice",
    )
    def post(self, request, session_id: str):
        try:
            status, body = svc.place_pod(
                session_id, parse_json_body(request, stored=True), _if_match(request)
            )
        except svc.SessionError as exc:
            return _error(exc)
        return _answer(body, status, body["revision"])


class SessionPlacementDetailView(JsonAPIView):
    @extend_schema(
        parameters=[IF_MATCH],
        responses={200: RevisionSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 412: ErrorSerializer},
        summary="Remove a placement",
    )
    def delete(self, request, session_id: str, pod_uid: str):
        try:
            body = svc.remove_placement(session_id, pod_uid, _if_match(request))
        except svc.SessionError as exc:
            return _error(exc)
        return _answer(body, 200, body["revision"])


class _CheckpointView(JsonAPIView):
    operation = staticmethod(svc.fork)

    @extend_schema(
        request=None,
        parameters=[IF_MATCH],
        responses={
            200: RevisionSerializer,
            400: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
            412: ErrorSerializer,
        },
    )
    def post(self, request, session_id: str):
        try:
            body = self.operation(session_id, _if_match(request))
        except svc.SessionError as exc:
            return _error(exc)
        return _answer(body, 200, body["revision"])


class SessionForkView(_CheckpointView):
    """Push a checkpoint (CA ``ClusterSnapshot.Fork``)."""

    operation = staticmethod(svc.fork)


class SessionRevertView(_CheckpointView):
    """Restore the last checkpoint exactly and pop it (CA ``Revert``)."""

    operation = staticmethod(svc.revert)


class SessionCommitView(_CheckpointView):
    """Pop the last checkpoint and keep the changes (CA ``Commit``)."""

    operation = staticmethod(svc.commit)


# -- session-scoped extender verbs ---------------------------------------------------------------------


def _unknown(session_id: str) -> str:
    return f"unknown or expired session {session_id}"


@csrf_exempt
@require_POST
def session_filter_simulation(request: HttpRequest, session_id: str) -> HttpResponse:
    started = time.perf_counter()
    try:
        body = read_body(request)
    except BodyTooLarge as exc:
        bind_rejected("too_large")
        EXTENDER_REQUESTS.labels("session-filter", "too_large").inc()
        return HttpResponse(
            filter_result(None, {}, {}, str(exc)), content_type="application/json", status=413
        )
    states = svc.node_states(session_id)
    if states is None:
        bind_rejected("unknown_session", body=body)
        content, outcome = filter_result(None, {}, {}, _unknown(session_id)), "unknown_session"
    else:
        content, outcome = run_filter(body, caller=f"session:{session_id}", states=states)
    EXTENDER_REQUESTS.labels("session-filter", outcome).inc()
    EXTENDER_LATENCY.labels("session-filter").observe(time.perf_counter() - started)
    return HttpResponse(content, content_type="application/json")


@csrf_exempt
@require_POST
def session_prioritize_simulation(request: HttpRequest, session_id: str) -> HttpResponse:
    started = time.perf_counter()
    try:
        body = read_body(request)
    except BodyTooLarge:
        bind_rejected("too_large")
        EXTENDER_REQUESTS.labels("session-prioritize", "too_large").inc()
        return HttpResponse(b"[]", content_type="application/json", status=413)
    states = svc.node_states(session_id)
    if states is None:
        bind_rejected("unknown_session", body=body)
        content, outcome = b"[]", "unknown_session"
    else:
        content, outcome = run_prioritize(body, states=states)
    EXTENDER_REQUESTS.labels("session-prioritize", outcome).inc()
    EXTENDER_LATENCY.labels("session-prioritize").observe(time.perf_counter() - started)
    return HttpResponse(content, content_type="application/json")
