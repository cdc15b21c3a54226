"""Request-level policy that every view gets for free: request ids and access logs, body limits, listeners.

- ``RequestIdMiddleware``: a request id (the caller's ``X-Request-ID`` when it is sane, else a new
  one) bound into the log context and echoed in the response; one JSON access line per request.
- ``BodyLimitMiddleware``: refuses a request body larger than the limit *before* any view reads it.
  Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` only guards ``request.body``/``request.POST``; DRF's
  parsers and file uploads read the stream directly, so without this a REST client could post an
  unbounded body. Simulation paths (whole Node lists) get ``EXTENDER_MAX_BODY_BYTES`` instead.
- ``JsonHostMiddleware``: a ``Host`` header outside ``ALLOWED_HOSTS`` is a JSON 400 (``error_response``)
  for JSON clients (REST API, extender verbs, session verbs) instead of Django's HTML 400 page; the
  dashboard and admin keep Django's page. ``bad_request`` (``handler400``) does the same for the
  other requests Django refuses as suspicious (too many fields, ...).
- ``RequestSanityMiddleware``: a path holding a NUL character is a 400 before any view (PostgreSQL
  cannot compare text holding one: a lookup such as ``/api/v1/node-groups/%00/`` was a 500).
- ``ContentSecurityPolicyMiddleware``: the dashboard's pages carry a Content-Security-Policy; scripts
  and ``<style>`` blocks run only with the per-request nonce (``request.csp_nonce``).
- ``page_not_found``, ``permission_denied``, ``server_error``, ``csrf_failure``: Django's own 403,
  404 and 500 answers (and the CSRF refusal) in JSON on the JSON clients' paths, like ``bad_request``
  (they and the path patterns live in ``errorviews``, re-exported here).
- ``ListenerMiddleware``: one image serves two listeners (docs/production.md). The *extender* listener
  (mTLS, reachable only from Cluster Autoscaler's pods) serves the simulation endpoints and probes,
  nothing else. The *web* listener (dashboard, admin, REST) serves the simulation endpoints only to
  a logged-in user or an API token holder, because there no client certificate vouches for the
  caller. ``all`` (the default, for the demo and development) applies neither rule.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
import uuid
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import DisallowedHost, ImproperlyConfigured
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import CsrfViewMiddleware

from . import logconfig as log_context
from .clientcert import NOT_ALLOWED, client_policy
from .conf import LISTENERS, conf
from .errorviews import (  # re-exported: settings and urls name them as hami_sim.project.middleware.*
    EXTENDER_VERB_PATH,
    SIMULATION_PATH,
    bad_request,
    csrf_failure,
    error_response,
    is_json_client_path,
    is_simulation_path,
    page_not_found,
    permission_denied,
    server_error,
)

__all__ = [
    "SIMULATION_PATH",
    "EXTENDER_VERB_PATH",
    "is_simulation_path",
    "RequestIdMiddleware",
    "BodyLimitMiddleware",
    "JsonHostMiddleware",
    "ListenerMiddleware",
    "ClientIdentityMiddleware",
    "CookieCsrfMiddleware",
    "token_user",
    "is_json_client_path",
    "bad_request",
    "page_not_found",
    "permission_denied",
    "server_error",
    "csrf_failure",
    "RequestSanityMiddleware",
    "ContentSecurityPolicyMiddleware",
    "error_response",
]

access_log = logging.getLogger("hami_sim.access")
security_log = logging.getLogger("django.security.DisallowedHost")  # where Django itself reports it

_PROBE_PATHS = frozenset({"/healthz", "/readyz"})
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class RequestIdMiddleware:
    """Binds a request id for the logs, returns it as ``X-Request-ID``, writes one access line."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.enabled = conf().access_log

    def __call__(self, request: HttpRequest) -> HttpResponse:
        supplied = request.META.get("HTTP_X_REQUEST_ID", "")
        request_id = supplied if _REQUEST_ID.match(supplied) else uuid.uuid4().hex
        request.request_id = request_id  # type: ignore[attr-defined]
        log_context.clear()
        log_context.bind(request_id=request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = request_id
            if self.enabled and request.path not in _PROBE_PATHS:
                access_log.info(
                    "%s %s %s",
                    request.method,
                    request.path,
                    response.status_code,
                    extra={
                        "method": request.method,
                        "path": request.path,
                        "status": response.status_code,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
                        "client": request.META.get("REMOTE_ADDR", ""),
                    },
                )
            return response
        finally:
            log_context.clear()


class BodyLimitMiddleware:
    """413 with a JSON error for a declared body over the limit; 400 for a nonsense Content-Length."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        raw = request.META.get("CONTENT_LENGTH") or "0"
        try:
            length = int(raw)
            if length < 0:
                raise ValueError(raw)
        except ValueError:
            return error_response(400, request.path_info, f"invalid Content-Length header: {raw[:40]!r}")
        if is_simulation_path(request.path_info):
            limit = settings.EXTENDER_MAX_BODY_BYTES
            if EXTENDER_VERB_PATH.match(request.path_info):
                # The verbs answer in the extender's own shape (``{"error": ...}``): let the view do it.
                return self.get_response(request)
        else:
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and length > limit:
            message = f"request body of {length} bytes exceeds the limit of {limit} bytes"
            return error_response(413, request.path_info, message)
        return self.get_response(request)


class JsonHostMiddleware:
    """Validates ``Host`` up front for JSON clients, answering a disallowed one with a JSON 400.

    Django raises ``DisallowedHost`` lazily, from whichever middleware first calls ``get_host()``
    (``CommonMiddleware``), and renders it as an HTML page (or the debug page with ``DEBUG``); a
    JSON client could not parse either. Must sit before ``CommonMiddleware``. Nothing runs after the
    refusal, so nothing is written.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_json_client_path(request.path_info):
            try:
                request.get_host()
            except DisallowedHost as exc:
                security_log.error(str(exc), extra={"status_code": 400, "request": request})
                return error_response(400, request.path_info, str(exc))
        return self.get_response(request)


class RequestSanityMiddleware:
    """400 for a path no view can serve safely: one holding a NUL character (``%00``).

    PostgreSQL refuses text with NUL in any query (psycopg raises ``ValueError``), so a URL lookup
    such as ``/api/v1/node-groups/%00/`` became a 500. No name we store may hold one."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path_info:
            message = "the path must not contain NUL characters (%00)"
            if is_json_client_path(request.path_info):
                return error_response(400, request.path_info, message)
            return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class ContentSecurityPolicyMiddleware:
    """A Content-Security-Policy on the dashboard's HTML pages (not the admin's or ``/api/docs/``,
    which bring their own inline code).

    Scripts and ``<style>`` blocks need this request's nonce (templates write
    ``nonce="{{ request.csp_nonce }}"``), so injected markup cannot run script. Style *attributes*
    stay allowed (``style-src-attr``): Plotly sets some with ``setAttribute("style", ...)`` and the
    templates size bars with them; they cannot run code. Plotly writes its CSS rules into the
    nonced ``<style id="plotly.js-style-global">`` the base template provides.
    """

    EXEMPT = ("/admin/", "/api/")

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if EXTENDER_VERB_PATH.match(request.path_info):  # CA's hot path answers JSON only
            return self.get_response(request)
        nonce = secrets.token_urlsafe(16)
        request.csp_nonce = nonce  # type: ignore[attr-defined]
        response = self.get_response(request)
        if (
            response.get("Content-Type", "").startswith("text/html")
            and not request.path_info.startswith(self.EXEMPT)
            and "Content-Security-Policy" not in response
        ):
            response["Content-Security-Policy"] = (
                "default-src 'self'; "
                f"script-src 'self' 'nonce-{nonce}'; "
                f"style-src 'self' 'nonce-{nonce}'; style-src-attr 'unsafe-inline'; "
                "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
                "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
            )
        return response


def token_user(request: HttpRequest):
    """The user of a valid ``Authorization: Token <key>`` header, else None (DRF's token model).

    Looked up once per request (the listener check and the session owner both ask)."""
    if hasattr(request, "_hami_sim_token_user"):
        return request._hami_sim_token_user
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, key = header.partition(" ")
    user = None
    if scheme.lower() == "token" and key.strip():
        from rest_framework.authtoken.models import Token

        token = Token.objects.select_related("user").filter(key=key.strip()).first()
        user = token.user if token is not None and token.user.is_active else None
    request._hami_sim_token_user = user  # type: ignore[attr-defined]
    return user


class ListenerMiddleware:
    """Enforces what each listener serves (``HAMI_SIM_LISTENER``: ``all``, ``extender`` or ``web``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.listener = conf().hami_sim_listener
        if self.listener not in LISTENERS:  # fail closed: an unknown name must not serve everything
            raise ImproperlyConfigured(
                f"HAMI_SIM_LISTENER={self.listener!r} is not one of {', '.join(sorted(LISTENERS))}"
            )

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if self.listener == "extender":
            if not (is_simulation_path(path) or path in _PROBE_PATHS):
                return error_response(404, path, f"{path} is not served on the extender listener")
        elif self.listener == "web" and is_simulation_path(path):
            user = getattr(request, "user", None)
            if not (user is not None and user.is_authenticated) and token_user(request) is None:
                return error_response(
                    403,
                    path,
                    "simulation endpoints on the web listener need a logged-in user or an "
                    "API token; Cluster Autoscaler uses the mTLS extender listener",
                )
        return self.get_response(request)


class ClientIdentityMiddleware:
    """On the extender listener, serve the REST simulation endpoints (sessions, estimate) only to
    clients whose certificate names an allowed identity.

    The TLS handshake proves the certificate was signed by the client CA; this proves it was issued
    *to Cluster Autoscaler*: its subject CN or one of its SAN values must be in
    ``HAMI_SIM_CLIENT_IDENTITIES`` (``hami_sim.project.clientcert``). The names come from the certificate
    nginx verified and passed on (``hami_sim.project.proxied``: believed from nginx's unix socket
    only), never from a client's header. A request without them is refused: the check fails closed.
    Probes pass (kubelet has no certificate; it reaches nginx's probe port). The extender
    verbs pass too: their DRF views ask the same policy (``client_policy().refuses``) in a permission class
    (``hami_sim.project.permissions.ExtenderClientCertificate``), answering in the extender's own shape.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.enabled = client_policy().enforced

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if (
            self.enabled
            and path not in _PROBE_PATHS
            and not EXTENDER_VERB_PATH.match(path)
            and client_policy().refuses(request.META)
        ):
            return error_response(403, path, NOT_ALLOWED)
        return self.get_response(request)


class _CsrfCheck(CsrfViewMiddleware):
    """Django's CSRF check, reporting the reason instead of rendering its HTML 403 page."""

    def _reject(self, request: HttpRequest, reason: str) -> str:  # type: ignore[override]
        return reason


def _authenticated(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    return user is not None and user.is_authenticated


class CookieCsrfMiddleware:
    """Unsafe requests to the simulation endpoints that a session cookie authenticates need the CSRF
    token, as every other cookie-authenticated write does.

    The simulation views are CSRF-exempt because their real clients (Cluster Autoscaler over mTLS,
    tokens) send no cookie. But on the web listener a logged-in browser is let through
    (``ListenerMiddleware``), so a foreign page could have created sessions and placements with the
    operator's cookie. A request without a logged-in session (mTLS, token, anonymous demo) is
    unaffected.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.check = _CsrfCheck(get_response)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Only a session cookie can make ``request.user`` authenticated in this stack: without one,
        # the lazy user (a session read, and ``Vary: Cookie`` on the answer) is never touched, which
        # keeps Cluster Autoscaler's calls cheap.
        if (
            request.method not in ("GET", "HEAD", "OPTIONS", "TRACE")
            and settings.SESSION_COOKIE_NAME in request.COOKIES
            and is_simulation_path(request.path_info)
            and _authenticated(request)
        ):
            reason = self.check.process_view(request, None, (), {})  # type: ignore[arg-type]
            if reason is not None:
                return error_response(403, request.path_info, f"CSRF check failed: {reason}")
        return self.get_response(request)
