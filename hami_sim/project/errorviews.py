"""Which paths JSON clients use, and Django's own refusals answered in JSON on them.

The REST API and the extender and session verbs are read by programs (CA's Go client decodes the
extender's ``{"error": ...}``); Django's 400, 403, 404, 500 and CSRF pages are HTML. The handlers
here (``handler400`` ... in ``urls.py``, ``CSRF_FAILURE_VIEW``) answer those paths in the API's
error shape and leave the dashboard's and admin's pages to Django. The path patterns also decide
which requests the listener and body-limit middleware treat as simulation calls.
"""

from __future__ import annotations

import re

import orjson
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from django.views import defaults

__all__ = [
    "EXTENDER_VERB_PATH",
    "SIMULATION_PATH",
    "JSON_CLIENT_PATH",
    "is_simulation_path",
    "is_json_client_path",
    "error_response",
    "bad_request",
    "page_not_found",
    "permission_denied",
    "server_error",
    "csrf_failure",
]

# The extender verbs, plain or session-scoped (with or without the trailing slash).
EXTENDER_VERB_PATH = re.compile(r"^/(?:sessions/[^/]+/)?(?:filter|prioritize)-simulation/?$")
# Everything the extender listener protects with mTLS instead of tokens: the verbs, sessions and estimate. Any
# suffix after the name counts ("sessions.json", "estimate.api"): a route that reaches a simulation
# view must never slip past the listener's guards (the router serves no format suffixes either).
SIMULATION_PATH = re.compile(
    r"^/(?:(?:sessions/[^/]+/)?(?:filter|prioritize)-simulation/?|api/v1/(?:sessions|estimate)(?:[/.].*)?)$",
    re.DOTALL,
)
# Paths whose clients read JSON: the REST API and the extender and session verbs
# (not the dashboard's own /sessions/ pages).
JSON_CLIENT_PATH = re.compile(r"^/(?:api/|(?:sessions/[^/]+/)?(?:filter|prioritize)-simulation/?$)")
_JSON = "application/json"


def is_simulation_path(path: str) -> bool:
    """A path the listener rules guard as a simulation call (extender verbs, sessions, estimate)."""
    return SIMULATION_PATH.match(path) is not None


def is_json_client_path(path: str) -> bool:
    """A path whose clients read JSON (the REST API, the extender and session verbs)."""
    return JSON_CLIENT_PATH.match(path) is not None


def _json(status: int, payload: dict) -> HttpResponse:
    return HttpResponse(orjson.dumps(payload), content_type=_JSON, status=status)


def error_response(status: int, path: str, message: str) -> HttpResponse:
    """A refusal before any view: ``{"detail": ...}`` as every ``/api/v1`` view answers
    (``hami_sim.project.rest``), ``{"error": ...}`` on the extender verbs (Go decodes it as ``Error``)."""
    key = "error" if EXTENDER_VERB_PATH.match(path) else "detail"
    return _json(status, {key: message})


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler400``: Django's 400 for a suspicious request (too many fields, a bad Host reached past
    ``JsonHostMiddleware``), as JSON (``error_response``) for JSON clients, Django's page elsewhere."""
    if is_json_client_path(request.path_info):
        message = (
            str(exception) if isinstance(exception, SuspiciousOperation) and str(exception) else "bad request"
        )
        return error_response(400, request.path_info, message)
    return defaults.bad_request(request, exception)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: JSON on the JSON clients' paths (an unknown ``/api/v1/...`` route), Django's page elsewhere."""
    if is_json_client_path(request.path_info):
        return error_response(404, request.path_info, f"{request.path_info} not found")
    return defaults.page_not_found(request, exception)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler403``: JSON on the JSON clients' paths, Django's page elsewhere."""
    if is_json_client_path(request.path_info):
        return error_response(403, request.path_info, str(exception or "") or "permission denied")
    return defaults.permission_denied(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: JSON on the JSON clients' paths (the request id finds the logged traceback)."""
    if is_json_client_path(request.path_info):
        request_id = getattr(request, "request_id", "")
        return error_response(500, request.path_info, f"internal server error (request id {request_id})")
    return defaults.server_error(request)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: the refusal in JSON on the JSON clients' paths, Django's page elsewhere."""
    if is_json_client_path(request.path_info):
        return error_response(403, request.path_info, f"CSRF check failed: {reason}")
    from django.views.csrf import csrf_failure as django_csrf_failure

    return django_csrf_failure(request, reason)
