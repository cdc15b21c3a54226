"""Roles for REST writes (a login alone may not write): reading stays as the API's default permission says,
writing a model needs that model's Django permission (the ``operators`` group has them). The
extender verbs' allow-list (``ExtenderClientCertificate``). And the caller of a request
(``caller_of``): simulation sessions belong to the identity that made them, and only an operator
acts on other identities' sessions.

Before this, any logged-in user or token holder, with no permission at all, created, edited and
deleted node groups and profiles; a login is identity, the group membership is the role.
"""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import SAFE_METHODS, BasePermission, DjangoModelPermissions

from .clientcert import NOT_ALLOWED, ClientCertificate, allowed_identities, client_policy
from .middleware import token_user

__all__ = [
    "ModelWritePermissions",
    "ExtenderClientCertificate",
    "Caller",
    "caller_of",
    "OPERATOR_PERMISSION",
    "ANONYMOUS",
]


class ModelWritePermissions(DjangoModelPermissions):
    """``DjangoModelPermissions`` for unsafe methods only; reads are left to the other classes."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return super().has_permission(request, view)


class ExtenderClientCertificate(BasePermission):
    """On the extender listener, only a client certificate naming an allowed identity: the TLS
    handshake proves "signed by the client CA", this proves "issued to Cluster Autoscaler" (its CN
    or a DNS SAN is in ``HAMI_SIM_CLIENT_IDENTITIES``): ``client_policy().refuses`` of the names
    ``ClientCertificateAuthentication`` read, the question ``ClientIdentityMiddleware`` asks for the
    other simulation endpoints. The other
    listeners let the verbs through (``ListenerMiddleware`` guards the web one).

    Refuses with ``PermissionDenied`` itself: DRF would turn a denial without a successful
    authenticator into a ``NotAuthenticated`` and lose the message that names the setting.
    """

    message = NOT_ALLOWED

    def has_permission(self, request, view) -> bool:
        admitted = request.auth if type(request.user) is ClientCertificate else ()
        if not client_policy().refuses(request._request.META, admitted):
            return True
        raise PermissionDenied(self.message)


# -- who is calling: the owner of what a request creates (simulation sessions) -----------------------------

#: the permission that makes a user an operator of every session (the ``operators`` group holds it)
OPERATOR_PERMISSION = "simulations.change_simulationsession"
ANONYMOUS = "anonymous"


@dataclass(frozen=True, slots=True)
class Caller:
    """The identity a request acts as, and whether it may act on what other identities own.

    ``identity`` is ``cert:<name>`` for a client certificate whose CN or SAN is an allowed identity
    (Cluster Autoscaler on the extender listener), ``user:<username>`` for a logged-in user or an API
    token, else ``anonymous`` (only the ``all`` listener of the demo lets one through).
    """

    identity: str
    operator: bool = False

    @property
    def certificate(self) -> bool:
        """A client certificate (CA): its sessions come out of the share reserved for certificates."""
        return self.identity.startswith("cert:")


def caller_of(request) -> Caller:
    """The ``Caller`` of a Django or DRF request: certificate first, then session login, then token.

    The certificate names come from the TLS handshake nginx made (``hami_sim.client_identities`` in
    the WSGI environ, put there by ``hami_sim.project.proxied``), never from a client's header; only names on the allow-list
    (``HAMI_SIM_CLIENT_IDENTITIES``) count, the first of them in sorted order.
    """
    django_request = getattr(request, "_request", request)
    allowed = allowed_identities(django_request.META)
    if allowed:
        return Caller(f"cert:{allowed[0]}")
    user = getattr(django_request, "user", None)
    if user is None or not user.is_authenticated:
        user = token_user(django_request)
    if user is None:
        return Caller(ANONYMOUS)
    return Caller(f"user:{user.get_username()}", operator=user.has_perm(OPERATOR_PERMISSION))
