"""What nginx tells the application is believed from nginx's unix socket only.

``hami_sim.project.proxied.apply`` on WSGI environs as gunicorn builds them: a request that came in
on the unix socket (only the pod's nginx reaches it) gets the certificate's names, the client's
address and the scheme from nginx's headers; one from a TCP port (the demo, a client that found
another way in) has the same headers dropped unread.
"""

from __future__ import annotations

import socket
import ssl
from urllib.parse import quote

import pytest
import trustme

from hami_sim.project.clientcert import IDENTITIES_KEY, decoded_certificate, identities_from_pem
from hami_sim.project.proxied import apply

CA = trustme.CA()
CLIENT = CA.issue_cert("cluster-autoscaler.kube-system", "ca@example.com", common_name="cluster-autoscaler")
ESCAPED = quote(CLIENT.cert_chain_pems[0].bytes().decode())


@pytest.fixture(params=["unix", "tcp"])
def sock(request):
    family = socket.AF_UNIX if request.param == "unix" else socket.AF_INET
    with socket.socket(family) as s:
        yield s


def _environ(sock: socket.socket, **headers: str) -> dict:
    return {"gunicorn.socket": sock, "REMOTE_ADDR": "", "wsgi.url_scheme": "http", **headers}


def test_the_headers_are_believed_from_nginxs_socket_only(sock):
    environ = _environ(
        sock,
        HTTP_X_CLIENT_CERT=ESCAPED,
        HTTP_X_REAL_IP="10.1.2.3",
        HTTP_X_FORWARDED_PROTO="https",
    )
    apply(environ)
    assert not {"HTTP_X_CLIENT_CERT", "HTTP_X_REAL_IP", "HTTP_X_FORWARDED_PROTO"} & set(environ)
    if sock.family == socket.AF_UNIX:
        # the subject CN and the DNS SAN (HAMI_SIM_CLIENT_IDENTITY_FIELDS), not the email SAN
        assert environ[IDENTITIES_KEY] == ("cluster-autoscaler", "cluster-autoscaler.kube-system")
        assert (environ["REMOTE_ADDR"], environ["wsgi.url_scheme"]) == ("10.1.2.3", "https")
    else:
        assert IDENTITIES_KEY not in environ
        assert (environ["REMOTE_ADDR"], environ["wsgi.url_scheme"]) == ("", "http")


@pytest.mark.parametrize(
    ("what", "environ"),
    [
        ("no certificate passed on", {}),
        ("names set by anything but nginx's header", {IDENTITIES_KEY: ("cluster-autoscaler",)}),
        ("not a certificate", {"HTTP_X_CLIENT_CERT": "not%20a%20certificate"}),
        ("a scheme nginx never sends", {"HTTP_X_FORWARDED_PROTO": "gopher"}),
    ],
)
def test_nothing_else_claims_an_identity(what, environ):
    with socket.socket(socket.AF_UNIX) as s:
        env = _environ(s, **environ)
        apply(env)
    assert not env.get(IDENTITIES_KEY), what
    assert env["wsgi.url_scheme"] == "http"


def test_a_certificate_is_decoded_as_the_standard_library_decodes_it(tmp_path):
    """The same ``subject`` and ``subjectAltName`` as ``ssl`` gives ``certificate_identities``."""
    pem = tmp_path / "client.pem"
    pem.write_bytes(CLIENT.cert_chain_pems[0].bytes())
    stdlib = ssl._ssl._test_decode_cert(str(pem))  # the decoder behind SSLSocket.getpeercert()
    ours = decoded_certificate(ESCAPED)
    assert [rdn for rdn in stdlib["subject"] if rdn[0][0] == "commonName"] == list(ours["subject"])
    assert tuple(stdlib["subjectAltName"]) == ours["subjectAltName"]


def test_a_certificate_is_decoded_once_per_text():
    decoded_certificate.cache_clear()
    for _ in range(3):
        identities_from_pem(ESCAPED)
    assert decoded_certificate.cache_info().hits == 2
