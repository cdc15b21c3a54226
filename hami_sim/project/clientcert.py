"""The client certificate identity: which allowed names a request's certificate carries.

One policy (``ClientCertificatePolicy``, the settings' one is ``client_policy()``) that the extender
verbs' authentication and permission classes (``hami_sim.project.authentication``,
``hami_sim.project.permissions``), the listener guard of the other simulation endpoints
(``hami_sim.project.middleware.ClientIdentityMiddleware``) and the session owner
(``hami_sim.project.permissions.caller_of``) share: the two refusing seams ask its ``refuses``, so
they cannot disagree on who is Cluster Autoscaler. No DRF here: the middleware imports it.

The certificate comes from the TLS handshake nginx made: nginx verifies it and passes it on
(``X-Client-Cert``, which it always overwrites), ``hami_sim.project.proxied`` believes that header
from nginx's unix socket only, and ``identities_from_pem`` reads it as names with
``certificate_identities`` (the one place a certificate is read as names) into the WSGI environ under
``IDENTITIES_KEY``, never from a client's own header. Only the certificate's parts
``HAMI_SIM_CLIENT_IDENTITY_FIELDS`` names count (the subject CN and DNS SANs by default: an email,
URI or IP SAN ``cluster-autoscaler`` does not make a certificate CA's), and of those only the names
on ``HAMI_SIM_CLIENT_IDENTITIES``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

from cryptography import x509
from cryptography.x509.oid import NameOID

from .conf import Conf, conf

__all__ = [
    "IDENTITIES_KEY",
    "NOT_ALLOWED",
    "IDENTITY_FIELDS",
    "ClientCertificate",
    "ClientCertificatePolicy",
    "allowed_identities",
    "client_policy",
    "certificate_identities",
    "decoded_certificate",
    "identities_from_pem",
    "log_refused",
]

#: the WSGI environ key ``hami_sim.project.proxied`` fills from the certificate nginx passed on
IDENTITIES_KEY = "hami_sim.client_identities"
#: the refusal of a certificate (or none) on the extender listener
NOT_ALLOWED = (
    "this client certificate is not allowed here; its CN or SAN must be one of HAMI_SIM_CLIENT_IDENTITIES"
)

identity_log = logging.getLogger("hami_sim.security")

#: the parts of a certificate that can name it: ``HAMI_SIM_CLIENT_IDENTITY_FIELDS`` picks among them,
#: by the names the standard library's decoded certificate uses for SAN types (``IP Address``: ``IP``)
IDENTITY_FIELDS = {"CN": "commonName", "DNS": "DNS", "email": "email", "URI": "URI", "IP": "IP Address"}


def certificate_identities(
    peercert: Mapping[str, object] | None, fields: frozenset[str] | None = None
) -> tuple[str, ...]:
    """The names a verified certificate gives its holder, in order, each once: its subject CNs and
    the SAN values of the types ``fields`` names (default ``HAMI_SIM_CLIENT_IDENTITY_FIELDS``: CN
    and DNS). ``peercert`` is the standard library's decoded form (``SSLSocket.getpeercert()``:
    ``subject`` as RDN tuples, ``subjectAltName`` as ``(type, value)`` pairs); no I/O, no state,
    so every server that hands us a certificate reads it the same way."""
    if not peercert:
        return ()
    wanted = conf().client_identity_fields() if fields is None else fields
    names = _common_names(peercert) if "CN" in wanted else []
    san_types = {IDENTITY_FIELDS[f] for f in wanted if f in IDENTITY_FIELDS and f != "CN"}
    sans: Iterable = peercert.get("subjectAltName") or ()  # type: ignore[assignment]
    names += [value for kind, value in sans if kind in san_types]
    return tuple(dict.fromkeys(str(n) for n in names))


def _common_names(peercert: Mapping[str, object]) -> list[str]:
    subject: Iterable = peercert.get("subject") or ()  # type: ignore[assignment]
    return [value for rdn in subject for key, value in rdn if key == "commonName"]


#: SAN types by the standard library's names for them in a decoded certificate
_SAN_NAMES = {
    x509.DNSName: "DNS",
    x509.RFC822Name: "email",
    x509.UniformResourceIdentifier: "URI",
    x509.IPAddress: "IP Address",
}


@lru_cache(maxsize=64)  # CA presents the same certificate on every call: decode it once
def decoded_certificate(escaped_pem: str) -> dict[str, tuple]:
    """nginx's ``$ssl_client_escaped_cert`` (URL-encoded PEM) in the standard library's decoded form
    (what ``SSLSocket.getpeercert()`` gives: ``subject`` as RDN tuples, ``subjectAltName`` as
    ``(type, value)`` pairs), the parts ``certificate_identities`` reads; empty for something that
    is not a certificate (nginx only sends one it verified)."""
    try:
        cert = x509.load_pem_x509_certificate(unquote(escaped_pem).encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        return {}
    subject = tuple(
        (("commonName", str(attr.value)),)
        for attr in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    )
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        sans = x509.SubjectAlternativeName([])
    alt = tuple((_SAN_NAMES[type(n)], str(n.value)) for n in sans if type(n) in _SAN_NAMES)
    return {"subject": subject, "subjectAltName": alt}


def identities_from_pem(escaped_pem: str) -> tuple[str, ...]:
    """The names the certificate nginx passed on gives its holder under the policy in force."""
    return client_policy().names(decoded_certificate(escaped_pem))


@dataclass(frozen=True, slots=True)
class ClientCertificatePolicy:
    """Which client certificates are Cluster Autoscaler's, in one place: the parts of a certificate
    that name it (``fields``: ``HAMI_SIM_CLIENT_IDENTITY_FIELDS``), the names allowed (``allowed``:
    ``HAMI_SIM_CLIENT_IDENTITIES``) and whether this listener demands one (``enforced``: the extender
    listener). Both seams that refuse a caller, the extender verbs' permission class and the
    middleware in front of the other simulation endpoints, ask ``refuses``; the authentication
    class and ``caller_of`` name a caller by ``allowed_names``."""

    allowed: frozenset[str]
    fields: frozenset[str] = frozenset({"CN", "DNS"})
    enforced: bool = True

    def names(self, peercert: Mapping[str, object] | None) -> tuple[str, ...]:
        """The names a verified certificate gives its holder under this policy's ``fields``."""
        return certificate_identities(peercert, self.fields)

    def allowed_names(self, presented: Iterable[str] | None) -> list[str]:
        """The allowed names among a certificate's ``presented`` ones, sorted; [] for none."""
        return sorted(self.allowed.intersection(presented)) if presented else []

    def admits(self, peercert: Mapping[str, object] | None) -> list[str]:
        """The allowed names a verified certificate carries under this policy, sorted."""
        return self.allowed_names(self.names(peercert))

    def refuses(self, meta: Mapping[str, object], admitted: Sequence[str] | None = None) -> bool:
        """A request (``META``) this listener must refuse: the policy is enforced and the request's
        certificate (as ``hami_sim.project.proxied`` read it) names no allowed identity. ``admitted``:
        the allowed names an authenticator already read for this request (DRF's ``request.auth``),
        read from ``meta`` when None. Logged."""
        if admitted is None:
            admitted = self.allowed_names(meta.get(IDENTITIES_KEY))  # type: ignore[arg-type]
        if not self.enforced or admitted:
            return False
        log_refused(meta)
        return True


# (the conf it was read from, its policy): built once per settings change, not per request
_policy: tuple[Conf | None, ClientCertificatePolicy] = (None, ClientCertificatePolicy(frozenset()))


def client_policy() -> ClientCertificatePolicy:
    """The policy the settings in force describe."""
    global _policy
    current = conf()
    if _policy[0] is not current:
        _policy = (
            current,
            ClientCertificatePolicy(
                allowed=current.client_identities(),
                fields=current.client_identity_fields(),
                enforced=current.hami_sim_listener == "extender",
            ),
        )
    return _policy[1]


def allowed_identities(meta: Mapping[str, object]) -> list[str]:
    """The allowed names a request's client certificate carries (``META``), sorted; [] for none."""
    return client_policy().allowed_names(meta.get(IDENTITIES_KEY))  # type: ignore[arg-type]


def log_refused(meta: Mapping[str, object]) -> None:
    """The security log line of a refused certificate (or a request without one)."""
    identity_log.warning(
        "client certificate identities %s are not allowed on the extender listener",
        list(meta.get(IDENTITIES_KEY) or ()),  # type: ignore[call-overload]
        extra={"status_code": 403},
    )


@dataclass(frozen=True, slots=True)
class ClientCertificate:
    """``request.user`` of a caller whose client certificate names an allowed identity (Cluster
    Autoscaler): not a database user, so it owns sessions as ``cert:<name>`` and has no model
    permissions."""

    name: str
    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False

    def get_username(self) -> str:
        return f"cert:{self.name}"

    def has_perm(self, perm: str, obj: object = None) -> bool:
        return False

    def __str__(self) -> str:
        return self.get_username()
