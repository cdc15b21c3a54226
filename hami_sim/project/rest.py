"""DRF plumbing every ``/api/v1`` endpoint shares: one error shape, one router style.

The API used to have two styles (hand-parsed bodies answering ``{"error": ...}`` next to DRF views
answering ``{"detail": ...}``). Now every view parses and renders with orjson (``hami_sim.project.restjson``,
a module of its own because DRF imports renderers while it loads its views) and reports errors
through ``exception_handler``, so a client reads one shape:

- ``{"detail": "<what is wrong>"}`` for every refusal (400, 401, 403, 404, 405, 409, 412, 413, 415,
  422, 429, 503);
- plus the serializer's field errors beside ``detail`` when a request serializer fails
  (``{"detail": "ttlSeconds: ...", "ttlSeconds": ["..."]}``), and any extra fields the error carries
  (``reason`` on a 422, ``revision`` on a 412).

The extender verbs keep Go's wire format instead, as CA's Go client reads them: their views set
their own parser, renderer and exception handler (``simulations.api.extender_wire``).
"""

from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings
from rest_framework import exceptions, pagination
from rest_framework.routers import DefaultRouter
from rest_framework.views import exception_handler as drf_exception_handler

__all__ = ["ApiError", "OptionalSlashRouter", "LimitOffsetPagination", "exception_handler", "error_body"]


class ApiError(exceptions.APIException):
    """A refusal with any status and extra body fields, e.g. ``ApiError(422, "pod does not fit", reason=...)``."""

    def __init__(self, status_code: int, detail: str, **extra: object) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.extra = extra


class OptionalSlashRouter(DefaultRouter):
    """Routes answer with or without the trailing slash (clients write ``/api/v1/sessions`` bare).

    No format-suffix routes (``/api/v1/sessions.json``): the API answers JSON anyway, and those
    routes reached the views by paths the listener's guards did not recognise (and crashed with an
    HTML 500, the views take no ``format`` argument).
    """

    include_format_suffixes = False

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.trailing_slash = "/?"


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    """DRF's ``?limit=&offset=`` pages, never larger than ``API_MAX_PAGE_SIZE`` (a bigger ``limit``
    gets that many): ``?limit=1000000`` on decisions answered 15.8 MB to an anonymous client."""

    @property
    def max_limit(self) -> int:  # type: ignore[override]
        return settings.API_MAX_PAGE_SIZE


def _first_message(value: object) -> str:
    while isinstance(value, list | tuple) and value:
        value = value[0]
    if isinstance(value, Mapping) and value:
        key, inner = next(iter(value.items()))
        return _field_message(str(key), _first_message(inner))
    return str(value)


def _field_message(field: str, message: str) -> str:
    """``"ttlSeconds: must be ..."``; a message that already names its field stays as it is."""
    if field in ("non_field_errors", "detail") or message.startswith(field):
        return message
    return f"{field}: {message}"


def error_body(detail: object, extra: Mapping[str, object] | None = None) -> dict:
    """The one error shape: ``detail`` as text, then field errors or extra fields."""
    if isinstance(detail, Mapping):
        body: dict = {"detail": _first_message(detail)}
        body.update((k, v) for k, v in detail.items() if k != "detail")
    elif isinstance(detail, list | tuple):
        body = {"detail": "; ".join(_first_message(item) for item in detail) or "invalid request"}
    else:
        body = {"detail": str(detail)}
    if extra:
        body.update(extra)
    return body


def exception_handler(exc: Exception, context: dict):
    """DRF's handler (status, ``WWW-Authenticate``, ``Retry-After``, rollback), then the one body shape."""
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    detail = exc.detail if isinstance(exc, exceptions.APIException) else response.data.get("detail")
    response.data = error_body(detail, getattr(exc, "extra", None))
    return response
