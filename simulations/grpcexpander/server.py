"""The gRPC server around ``service.best_options`` (``manage.py run_expander``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from concurrent import futures
from pathlib import Path

import grpc
from django.db import close_old_connections, connections

from .protos import expander_pb2_grpc
from .service import best_options

__all__ = ["ExpanderServicer", "build_server"]

log = logging.getLogger("hami_sim.expander")
MAX_MESSAGE_BYTES = 128 << 20  # CA's gRPCMaxRecvMsgSize; a big cluster's request is large too


class ExpanderServicer(expander_pb2_grpc.ExpanderServicer):
    def __init__(self, daemon_pods: Sequence[Mapping] = ()) -> None:
        self.daemon_pods = tuple(daemon_pods)  # the cluster's DaemonSet pods, when known

    def BestOptions(self, request, context):  # noqa: N802 (the gRPC method name)
        close_old_connections()  # worker threads live long; drop connections the database closed
        try:
            return best_options(request, daemon_pods=self.daemon_pods)
        finally:
            # CA calls every scan interval (10 s): a connection per call costs little, and a pool thread
            # holding one open would keep it past the process's database's life (tests, failovers).
            connections.close_all()


def build_server(
    bind: str,
    *,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    workers: int = 4,
    daemon_pods: Sequence[Mapping] = (),
) -> tuple[grpc.Server, int]:
    """A started-ready (not started) server and the bound port (``HOST:0`` picks a free one).

    With ``tls_cert``/``tls_key`` (PEM) it serves TLS: CA's ``--grpc-expander-cert`` is the file it
    verifies the server with (this certificate or its CA), and the certificate's names must match the
    host in ``--grpc-expander-url``. Upstream CA refuses plaintext; plaintext is for local use.
    """
    options = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers), options=options)
    expander_pb2_grpc.add_ExpanderServicer_to_server(ExpanderServicer(daemon_pods), server)
    if bool(tls_cert) != bool(tls_key):
        raise ValueError("--tls-cert and --tls-key go together")
    if tls_cert and tls_key:
        creds = grpc.ssl_server_credentials([(Path(tls_key).read_bytes(), Path(tls_cert).read_bytes())])
        port = server.add_secure_port(bind, creds)
    else:
        port = server.add_insecure_port(bind)
    if not port:
        raise ValueError(f"cannot bind {bind}")
    return server, port
