"""The gRPC server around ``service.best_options`` (``manage.py run_expander``).

Bounded so that no client can take the process past its memory limit or keep it busy for nothing:
``EXPANDER_MAX_REQUEST_BYTES`` is grpc's receive limit (a larger request is refused
RESOURCE_EXHAUSTED before it is read), ``EXPANDER_MAX_CONCURRENT`` calls run at once (more are
refused RESOURCE_EXHAUSTED at once), and ``EXPANDER_MAX_INFLIGHT_BYTES`` bounds the request bytes
being parsed and packed together (a call that does not fit is refused RESOURCE_EXHAUSTED rather than
queued past CA's 5 s). A call stops when its deadline passes or CA cancels it. On any error CA
keeps all its options, so a refusal fails open.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from concurrent import futures
from pathlib import Path

import grpc
from django.db import close_old_connections, connections
from google.protobuf.message import DecodeError

from hami_sim.project.conf import conf

from ..metrics import EXPANDER_INFLIGHT_BYTES, EXPANDER_REFUSED
from .protos import expander_pb2 as pb
from .service import CallAbandoned, Deadline, best_options

__all__ = ["ExpanderServicer", "ByteBudget", "build_server", "SERVICE", "METHOD"]

log = logging.getLogger("hami_sim.expander")
SERVICE = "grpcplugin.Expander"
METHOD = "BestOptions"
MAX_SEND_BYTES = 128 << 20  # CA's gRPCMaxRecvMsgSize (our answers are a few bytes per option)


class ByteBudget:
    """Request bytes in work at once; ``take`` never waits (CA's deadline is too short to queue)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def take(self, size: int) -> bool:
        with self._lock:
            if self.used and self.used + size > self.limit:
                return False  # (one call alone always fits: the request limit bounds it)
            self.used += size
        EXPANDER_INFLIGHT_BYTES.inc(size)
        return True

    def give(self, size: int) -> None:
        with self._lock:
            self.used -= size
        EXPANDER_INFLIGHT_BYTES.dec(size)


def _refuse(context, why: str, code: grpc.StatusCode, message: str):
    EXPANDER_REFUSED.labels(why=why).inc()
    log.warning("expander call refused (%s): %s", why, message)
    context.abort(code, message)


class ExpanderServicer:
    """``BestOptions`` on the request's raw bytes: sized and admitted before anything is parsed."""

    def __init__(self, daemon_pods: Sequence[Mapping] = (), budget: ByteBudget | None = None) -> None:
        self.daemon_pods = tuple(daemon_pods)  # the cluster's DaemonSet pods, when known
        self.budget = budget or ByteBudget(conf().expander_max_inflight_bytes)

    def BestOptions(self, raw: bytes, context):  # noqa: N802 (the gRPC method name)
        size = len(raw)
        if not self.budget.take(size):
            _refuse(
                context,
                "busy",
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"busy: {self.budget.used} request bytes in work, limit {self.budget.limit} "
                "(EXPANDER_MAX_INFLIGHT_BYTES); CA keeps all its options",
            )
        try:
            deadline = Deadline.of(context)
            try:
                request = pb.BestOptionsRequest.FromString(raw)
            except DecodeError as exc:
                _refuse(
                    context, "invalid", grpc.StatusCode.INVALID_ARGUMENT, f"not a BestOptionsRequest: {exc}"
                )
            del raw  # the parsed request holds what we need
            close_old_connections()  # worker threads live long; drop connections the database closed
            return best_options(request, daemon_pods=self.daemon_pods, deadline=deadline)
        except CallAbandoned as exc:
            _refuse(context, "deadline", grpc.StatusCode.DEADLINE_EXCEEDED, str(exc))
        finally:
            self.budget.give(size)
            # CA calls every scan interval (10 s): a connection per call costs little, and a pool thread
            # holding one open would keep it past the process's database's life (tests, failovers).
            connections.close_all()


def build_server(
    bind: str,
    *,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    workers: int | None = None,
    daemon_pods: Sequence[Mapping] = (),
    max_request_bytes: int | None = None,
    max_inflight_bytes: int | None = None,
) -> tuple[grpc.Server, int]:
    """A started-ready (not started) server and the bound port (``HOST:0`` picks a free one).

    With ``tls_cert``/``tls_key`` (PEM) it serves TLS: CA's ``--grpc-expander-cert`` is the file it
    verifies the server with (this certificate or its CA), and the certificate's names must match the
    host in ``--grpc-expander-url``. Upstream CA refuses plaintext; plaintext is for local use.
    ``workers`` (default ``EXPANDER_MAX_CONCURRENT``) calls run at once; more are refused.
    """
    settings = conf()
    workers = workers or settings.expander_max_concurrent
    options = [
        ("grpc.max_receive_message_length", max_request_bytes or settings.expander_max_request_bytes),
        ("grpc.max_send_message_length", MAX_SEND_BYTES),
    ]
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="expander"),
        options=options,
        maximum_concurrent_rpcs=workers,
    )
    budget = ByteBudget(max_inflight_bytes or settings.expander_max_inflight_bytes)
    servicer = ExpanderServicer(daemon_pods, budget)
    handler = grpc.unary_unary_rpc_method_handler(
        servicer.BestOptions, response_serializer=pb.BestOptionsResponse.SerializeToString
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {METHOD: handler}),))
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
