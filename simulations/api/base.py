"""The base of the simulation REST views (``/api/v1/sessions``, ``/api/v1/estimate``).

They are protected by mTLS and the NetworkPolicy, not tokens (docs/production.md, "Threat model"):
CA's clients cannot send a token, so no permission class or throttle applies
(``hami_sim.project.middleware.ListenerMiddleware`` decides who reaches them). A session login or a
token is still read, when present, because it names the caller that owns a session
(``hami_sim.project.permissions.caller_of``); DRF authenticates lazily, so a request without either
costs nothing. Bodies are JSON only (``OrjsonParser``); service errors (``SessionError``,
``EstimateError``) become ``ApiError`` and so the one error shape of
``hami_sim.project.rest.exception_handler``.
"""

from __future__ import annotations

import orjson
from django.conf import settings
from rest_framework import exceptions
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.viewsets import GenericViewSet

from hami_sim.engine.estimate import EstimateError
from hami_sim.project.rest import ApiError
from hami_sim.project.restjson import OrjsonParser, OrjsonRenderer

from ..sessions import SessionError

__all__ = ["SimulationViewSet", "json_object", "check_storable", "capped"]


def json_object(request: Request, *, allow_empty: bool = False) -> dict:
    """The body as a JSON object; an empty body is ``{}`` when ``allow_empty``, else a 400."""
    data = request.data
    empty = data is None or (data == {} and not int(request.META.get("CONTENT_LENGTH") or 0))
    if empty and allow_empty:
        return {}
    if empty or not isinstance(data, dict):
        raise exceptions.ParseError("request body must be a JSON object")
    return data


def check_storable(data: object) -> None:
    """PostgreSQL cannot store NUL characters (text or jsonb): a body holding one is a 400, not a 500."""
    if b"\\u0000" in orjson.dumps(data):
        raise exceptions.ParseError("strings must not contain NUL characters (\\u0000)")


_RENDERER = OrjsonRenderer()


def capped(data: object) -> orjson.Fragment:
    """``data`` encoded once (the renderer passes the fragment through), or a 413 naming the limit
    when the answer would be larger than ``MAX_ANSWER_BYTES``: an estimate or a session state of
    hundreds of MiB held a worker for seconds and took it past its memory limit."""
    body = _RENDERER.render(data)
    check_answer_size(len(body))
    return orjson.Fragment(body)


def check_answer_size(size: int, *, at_least: bool = False) -> None:
    """The 413 of ``capped`` for an answer of ``size`` bytes (``at_least``: counted so far, the answer
    is not finished), so a large answer can be refused before it is all built."""
    limit = settings.MAX_ANSWER_BYTES
    if size > limit:
        raise ApiError(
            413,
            f"the answer would be {'more than ' if at_least else ''}{size} bytes, over the limit of "
            f"{limit} bytes (MAX_ANSWER_BYTES); ask about fewer pods or node groups",
            limit=limit,
        )


class SimulationViewSet(GenericViewSet):
    authentication_classes = [SessionAuthentication, TokenAuthentication]
    permission_classes: list = []
    throttle_classes: list = []
    parser_classes = [OrjsonParser]

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, SessionError):
            exc = ApiError(exc.status, exc.error, **exc.extra)
        elif isinstance(exc, EstimateError):
            exc = ApiError(400, str(exc))
        return super().handle_exception(exc)
