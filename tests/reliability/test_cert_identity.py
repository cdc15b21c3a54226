"""Only a client certificate's subject CN and DNS SANs name its holder (``HAMI_SIM_CLIENT_IDENTITY_FIELDS``).

Reported: a certificate the cluster CA signed with SAN ``email:cluster-autoscaler`` was taken for
Cluster Autoscaler and could read and delete CA's session. An email, URI or IP SAN is not a
workload's name. ``certificate_identities`` is the one reader of a certificate as names (a pure
function of the decoded certificate); the end-to-end case sends real certificates over mTLS to the
extender listener."""

from __future__ import annotations

import http.client
import ssl
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from hami_sim.project.clientcert import certificate_identities
from hami_sim.server.serve import start_server, stop_server
from tests.deploy.conftest import Pki, server_database_url  # noqa: F401 (a fixture, used by name)


def _decoded(cn: str, *sans: tuple[str, str]) -> dict:
    """A certificate as ``SSLSocket.getpeercert()`` decodes it."""
    return {"subject": ((("organizationName", "x"),), (("commonName", cn),)), "subjectAltName": sans}


# (certificate, fields, the names it gives)
CASES = [
    (_decoded("cluster-autoscaler"), None, ("cluster-autoscaler",)),
    (_decoded("mallory", ("DNS", "cluster-autoscaler")), None, ("mallory", "cluster-autoscaler")),
    (_decoded("mallory", ("email", "cluster-autoscaler")), None, ("mallory",)),
    (_decoded("mallory", ("URI", "cluster-autoscaler")), None, ("mallory",)),
    (_decoded("mallory", ("IP Address", "10.0.0.1")), None, ("mallory",)),
    (_decoded("mallory", ("email", "ca"), ("URI", "u")), frozenset({"email"}), ("ca",)),
    (
        _decoded("mallory", ("DNS", "d"), ("IP Address", "10.0.0.1")),
        frozenset({"DNS", "IP"}),
        ("d", "10.0.0.1"),
    ),
    (_decoded("a", ("DNS", "a"), ("DNS", "b")), frozenset({"CN", "DNS"}), ("a", "b")),
    ({}, None, ()),
    (None, None, ()),
]


@pytest.mark.parametrize(("cert", "fields", "names"), CASES)
def test_only_the_configured_parts_of_a_certificate_name_it(cert, fields, names):
    assert certificate_identities(cert, fields) == names


def _client_pem(ca: trustme.CA, directory: Path, cn: str, san: x509.GeneralName) -> str:
    """A client certificate the cluster CA signs: subject ``cn``, one SAN."""
    ca_key = serialization.load_pem_private_key(ca.private_key_pem.bytes(), password=None)
    ca_cert = x509.load_pem_x509_certificate(ca.cert_pem.bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([san]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    path = directory / f"{cn}-{abs(hash(str(san)))}.pem"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        + cert.public_bytes(serialization.Encoding.PEM)
    )
    return str(path)


def _create_session(port: int, pki: Pki, client_pem: str) -> int:
    ctx = ssl.create_default_context(cafile=pki.ca_cert)
    ctx.load_cert_chain(client_pem)
    conn = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=30)
    try:
        conn.request("POST", "/api/v1/sessions", body=b"{}", headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


SANS = {  # SAN -> what the extender listener answers CA's session create
    "email": (x509.RFC822Name("cluster-autoscaler"), 403),
    "URI": (x509.UniformResourceIdentifier("cluster-autoscaler"), 403),
    "DNS": (x509.DNSName("cluster-autoscaler"), 201),
}


@pytest.mark.slow
def test_an_email_or_uri_san_is_not_cluster_autoscaler_over_mtls(
    tmp_path,
    transactional_db,
    server_database_url,  # noqa: F811
):
    pki = Pki(tmp_path)
    env = {
        "SECRET_KEY": "test-" + "k" * 60,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "HAMI_SIM_CLIENT_IDENTITIES": "cluster-autoscaler",
        "HAMI_SIM_LISTENER": "extender",
        "DATABASE_URL": server_database_url,
        "DECISION_RECORDING": "off",
        "LOG_LEVEL": "ERROR",
    }
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    proc, url = start_server(
        cert=pki.server_cert, key=pki.server_key, client_ca=pki.ca_cert, env=env, **quiet
    )
    try:
        port = int(url.rsplit(":", 1)[1])
        answers = {
            kind: _create_session(port, pki, _client_pem(pki.ca, tmp_path, "mallory", san))
            for kind, (san, _want) in SANS.items()
        }
    finally:
        stop_server(proc)
    assert answers == {kind: want for kind, (_san, want) in SANS.items()}
