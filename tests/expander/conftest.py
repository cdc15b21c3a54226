"""The gRPC expander as deployed (TLS) and CA's channel to it."""

from __future__ import annotations

import grpc
import pytest
import trustme

from simulations.grpcexpander.server import build_server
from tests.expander.ca_clients import secure_channel


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory):
    """The expander's certificate (names of its Service and localhost) and the file CA trusts."""
    ca = trustme.CA()
    cert = ca.issue_cert("hami-sim-expander.hami-sim.svc", "localhost")
    path = tmp_path_factory.mktemp("expander-tls")
    cert.cert_chain_pems[0].write_to_path(path / "tls.crt")
    cert.private_key_pem.write_to_path(path / "tls.key")
    return str(path / "tls.crt"), str(path / "tls.key"), ca.cert_pem.bytes()


@pytest.fixture
def serve(tls_files):
    """Start ``build_server`` on TLS (as deployed); returns its port."""
    servers = []

    def start(**kwargs):
        server, port = build_server("127.0.0.1:0", tls_cert=tls_files[0], tls_key=tls_files[1], **kwargs)
        server.start()
        servers.append(server)
        return port

    yield start
    for server in servers:
        server.stop(None)


@pytest.fixture
def connect(tls_files):
    """A channel to a port as CA dials it (TLS, the --grpc-expander-cert file as the only root)."""
    channels = []

    def open_channel(port: int) -> grpc.Channel:
        channels.append(secure_channel(port, tls_files[2]))
        return channels[-1]

    yield open_channel
    for chan in channels:
        chan.close()


@pytest.fixture
def channel(serve, connect):
    return connect(serve())
