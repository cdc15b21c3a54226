"""DRF authentication classes of the extender verbs: who a call comes from, in ``caller_of``'s order.

- ``ClientCertificateAuthentication``: a client certificate naming an allowed identity (Cluster
  Autoscaler on the mTLS extender listener; ``hami_sim.project.clientcert``). ``request.user`` is then a
  ``ClientCertificate`` and ``request.auth`` the allowed names it carries.
- ``LoginSessionAuthentication``: a logged-in user, read only when the request carries a session
  cookie. CA sends none, so its calls never load a session (nor get ``Vary: Cookie``); the CSRF
  check of a cookie-authenticated write runs before the view (``CookieCsrfMiddleware``) and again
  here, as DRF's session authentication does.
- ``TokenUserAuthentication``: an ``Authorization: Token`` user, from the lookup the listener guard
  already made (``hami_sim.project.middleware.token_user``). An unknown token is no identity, not a refusal:
  on the web listener ``ListenerMiddleware`` has refused it before.

None of them refuses a request: the allow-list is the permission class
``hami_sim.project.permissions.ExtenderClientCertificate``. No authentication header is offered, so a
refusal is a 403, as it was from the middleware.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.authentication import BaseAuthentication, SessionAuthentication

from .clientcert import ClientCertificate, allowed_identities
from .middleware import token_user

__all__ = ["ClientCertificateAuthentication", "LoginSessionAuthentication", "TokenUserAuthentication"]


class ClientCertificateAuthentication(BaseAuthentication):
    """The client certificate's first allowed name (sorted) is the caller; None without one."""

    def authenticate(self, request) -> tuple[ClientCertificate, tuple[str, ...]] | None:
        names = allowed_identities(request._request.META)
        if not names:
            return None
        return ClientCertificate(names[0]), tuple(names)


class LoginSessionAuthentication(SessionAuthentication):
    """DRF's session authentication, skipped without a session cookie (the lazy user stays unread)."""

    def authenticate(self, request):
        django_request = request._request
        if not django_request.META.get("HTTP_COOKIE"):
            return None
        if settings.SESSION_COOKIE_NAME not in django_request.COOKIES:
            return None
        return super().authenticate(request)


class TokenUserAuthentication(BaseAuthentication):
    """The user of a valid API token (``token_user``, looked up once per request), else None."""

    def authenticate(self, request):
        django_request = request._request
        if "HTTP_AUTHORIZATION" not in django_request.META:  # CA's calls: no lookup at all
            return None
        user = token_user(django_request)
        return None if user is None else (user, None)
