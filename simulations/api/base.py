"""A DRF base view whose every error, DRF's own included, is ``{"error": ...}`` JSON."""

from __future__ import annotations

import orjson
from rest_framework import exceptions, permissions
from rest_framework.response import Response
from rest_framework.views import APIView

from .views import BodyTooLarge, read_body

__all__ = ["JsonAPIView", "BadBody", "parse_json_body"]


class BadBody(Exception):
    """An unreadable request body: (status, message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def parse_json_body(request, *, allow_empty: bool = False, stored: bool = False) -> object:
    """Parse the raw body with orjson (bounded by ``EXTENDER_MAX_BODY_BYTES``), not DRF's parsers.

    ``stored``: the body's strings end up in the database, and PostgreSQL cannot store NUL
    characters (text or jsonb), so a body containing one is a 400 rather than a database error.
    """
    try:
        raw = read_body(request._request if hasattr(request, "_request") else request)
    except BodyTooLarge as exc:
        raise BadBody(413, str(exc)) from None
    if not raw.strip():
        if allow_empty:
            return None
        raise BadBody(400, "request body must be a JSON object")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadBody(400, f"malformed JSON: {exc}") from None
    if stored and (b"\\u0000" in raw or b"\x00" in raw):
        raise BadBody(400, "strings must not contain NUL characters (\\u0000)")
    return data


class JsonAPIView(APIView):
    """Simulation endpoints: protected by mTLS and the NetworkPolicy, not tokens (design.md 8).

    CA's clients cannot send a token, so no authentication or CSRF applies here.
    """

    authentication_classes: list = []
    permission_classes = [permissions.AllowAny]

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, BadBody):
            return Response({"error": exc.message}, status=exc.status)
        if isinstance(exc, exceptions.APIException):
            detail = exc.detail
            text = detail if isinstance(detail, str) else orjson.dumps(detail).decode()
            response = Response({"error": str(text)}, status=exc.status_code)
            if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
                response["Retry-After"] = str(int(exc.wait))
            return response
        return super().handle_exception(exc)
