"""The documented openssl steps for the gRPC expander (clusters without cert-manager) produce Secrets CA
can use: run as written, the certificate in ``hami-sim-expander-tls`` serves the real expander, and a
client trusting only ``hami-sim-expander-ca``'s ``ca.crt`` (CA's ``--grpc-expander-cert``) completes
the TLS handshake under every name of the expander's Service, as CA does when it dials
``--grpc-expander-url``.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import grpc
import pytest
from cryptography import x509

from simulations.grpcexpander.server import build_server
from tests.deploy.conftest import REPO
from tests.deploy.test_sources import _commands

pytestmark = pytest.mark.django_db
DOC = REPO / "docs" / "cluster-autoscaler.md"
SERVICE_NAMES = [
    "hami-sim-expander",
    "hami-sim-expander.hami-sim",
    "hami-sim-expander.hami-sim.svc",
    "hami-sim-expander.hami-sim.svc.cluster.local",
]


def _steps() -> list[str]:
    """The shell block of the doc that creates ``hami-sim-expander-tls``: its lines, continuations joined."""
    blocks = re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S)
    (block,) = [b for b in blocks if "openssl" in b and "hami-sim-expander-tls" in b]
    return _commands(f"```sh\n{block}```")


def _secrets(lines: list[str], workdir: Path) -> dict[tuple[str, str], dict[str, bytes]]:
    """What each ``kubectl -n NS create secret generic NAME --from-file=KEY=PATH`` line would store."""
    secrets = {}
    for line in lines:
        words = shlex.split(line)
        if words[:1] != ["kubectl"]:
            continue
        namespace = words[words.index("-n") + 1]
        name = words[words.index("generic") + 1]
        data = {}
        for word in words:
            if word.startswith("--from-file="):
                key, path = word.removeprefix("--from-file=").split("=", 1)
                data[key] = (workdir / path).read_bytes()
        secrets[(namespace, name)] = data
    return secrets


@pytest.fixture(scope="module")
def documented_secrets(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    workdir = tmp_path_factory.mktemp("expander-steps")
    lines = _steps()
    openssl = [line for line in lines if line.startswith("openssl ")]
    assert len(openssl) == 3  # the CA, the key and request, the signed certificate
    for line in openssl:
        subprocess.run(["bash", "-c", line], cwd=workdir, check=True, capture_output=True, timeout=60)
    return workdir, _secrets(lines, workdir)


def test_the_steps_create_the_secrets_the_manifests_mount(documented_secrets):
    _workdir, secrets = documented_secrets
    assert set(secrets) == {("hami-sim", "hami-sim-expander-tls"), ("kube-system", "hami-sim-expander-ca")}
    assert {"tls.crt", "tls.key"} <= set(secrets["hami-sim", "hami-sim-expander-tls"])
    assert set(secrets["kube-system", "hami-sim-expander-ca"]) == {"ca.crt"}
    cert = x509.load_pem_x509_certificate(secrets["hami-sim", "hami-sim-expander-tls"]["tls.crt"])
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == SERVICE_NAMES


@pytest.mark.parametrize("name", SERVICE_NAMES)
def test_ca_completes_the_handshake_under_each_service_name(documented_secrets, name):
    workdir, secrets = documented_secrets
    tls = secrets["hami-sim", "hami-sim-expander-tls"]
    (workdir / "served.crt").write_bytes(tls["tls.crt"])
    (workdir / "served.key").write_bytes(tls["tls.key"])
    server, port = build_server(
        "127.0.0.1:0", tls_cert=str(workdir / "served.crt"), tls_key=str(workdir / "served.key")
    )
    server.start()
    creds = grpc.ssl_channel_credentials(
        root_certificates=secrets["kube-system", "hami-sim-expander-ca"]["ca.crt"]
    )
    channel = grpc.secure_channel(
        f"127.0.0.1:{port}", creds, options=[("grpc.ssl_target_name_override", name)]
    )
    try:
        grpc.channel_ready_future(channel).result(timeout=30)
    finally:
        channel.close()
        server.stop(None)
