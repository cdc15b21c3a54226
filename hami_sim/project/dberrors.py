"""A database that cannot be reached is a 503 with a JSON error, not a 500 HTML page.

Why: the extender's warm path answers without the database (inventories come from the template's
annotations), but sessions, the REST API and the admin need it. When PostgreSQL is down, a load
balancer and CA's tooling should see "unavailable, retry" (503 + ``Retry-After``), and operators a
clear reason, instead of an internal error that looks like a bug. Only connection-level errors
(``OperationalError``, ``InterfaceError``) are mapped: a failing query is still a 500 (a bug to fix).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse

from .middleware import error_response

__all__ = ["DatabaseUnavailableMiddleware", "RETRY_AFTER_SECONDS"]

log = logging.getLogger("hami_sim.db")
RETRY_AFTER_SECONDS = 5


class DatabaseUnavailableMiddleware:
    """Turns an unreachable database, raised by any view, into ``503 {"detail": "database unavailable: ..."}``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        log.warning("database unavailable for %s %s: %s", request.method, request.path, exception)
        message = f"database unavailable: {exception.__class__.__name__}; retry later"
        response = error_response(503, request.path_info, message)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
