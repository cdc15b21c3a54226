"""What nginx tells the application about a request, believed only when nginx sent it.

In production gunicorn binds a unix socket that only the nginx container of the pod reaches
(``hami_sim.server.nginx``); nginx has terminated TLS, verified the client certificate and read the
whole request. It passes on three facts as headers, always overwriting any a client sent:
``X-Client-Cert`` (the verified certificate, URL-encoded PEM), ``X-Real-IP`` (the client's address:
throttles and the login lockout count per address) and ``X-Forwarded-Proto``.

``from_nginx`` wraps the WSGI application: for a request that arrived on a unix socket it moves those
facts where the application reads them (``REMOTE_ADDR``, ``wsgi.url_scheme`` and the certificate's
names under ``clientcert.IDENTITIES_KEY``); from anywhere else (the demo's TCP listener, a test
client) the headers are dropped unread, so a client can never claim a certificate.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable
from typing import Any

from .clientcert import IDENTITIES_KEY, identities_from_pem

__all__ = ["from_nginx", "via_nginx", "CERT_HEADER", "ADDRESS_HEADER", "SCHEME_HEADER"]

CERT_HEADER = "HTTP_X_CLIENT_CERT"
ADDRESS_HEADER = "HTTP_X_REAL_IP"
SCHEME_HEADER = "HTTP_X_FORWARDED_PROTO"

WSGIApp = Callable[[dict, Callable], Iterable[bytes]]


def via_nginx(environ: dict[str, Any]) -> bool:
    """The request came in on gunicorn's unix socket, which only nginx reaches."""
    sock = environ.get("gunicorn.socket")
    return sock is not None and getattr(sock, "family", None) == socket.AF_UNIX


def apply(environ: dict[str, Any]) -> None:
    """Take nginx's headers out of ``environ``; when nginx sent them, put what they say in place."""
    cert = environ.pop(CERT_HEADER, "")
    address = environ.pop(ADDRESS_HEADER, "")
    scheme = environ.pop(SCHEME_HEADER, "")
    environ.pop(IDENTITIES_KEY, None)  # only ever set here
    if not via_nginx(environ):
        return
    if address:
        environ["REMOTE_ADDR"] = address
    if scheme in ("http", "https"):
        environ["wsgi.url_scheme"] = scheme
    if cert:
        environ[IDENTITIES_KEY] = identities_from_pem(cert)


def from_nginx(app: WSGIApp) -> WSGIApp:
    """``app`` seeing each request as nginx received it (see the module)."""

    def application(environ: dict, start_response: Callable) -> Iterable[bytes]:
        apply(environ)
        return app(environ, start_response)

    return application
