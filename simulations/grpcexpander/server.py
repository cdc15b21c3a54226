"""The gRPC server around ``service.best_options`` (``manage.py run_expander``).

Bounded so that no client can take the process past its memory limit, keep it busy for nothing, or
crowd CA out (``admission``: who may call now, and how every refusal is counted and logged):
``EXPANDER_MAX_REQUEST_BYTES`` is grpc's receive limit (a larger request is refused
RESOURCE_EXHAUSTED before it is read), a request must arrive whole within ``EXPANDER_RECEIVE_SECONDS``,
``EXPANDER_MAX_CONCURRENT`` calls are judged at once and no peer holds all of them (more are refused
RESOURCE_EXHAUSTED at once), and ``EXPANDER_MAX_INFLIGHT_BYTES`` bounds the request bytes being
parsed and packed together. A call stops when its deadline passes (the client's, or
``EXPANDER_MAX_CALL_SECONDS`` without one) or CA cancels it. On any error CA keeps all its options,
so a refusal fails open.

The method is served as a client-streaming handler on the wire of CA's unary call (gRPC does not tell
them apart): grpc opens it before the request has arrived, so the receive deadline and the per-peer
shares apply while a slow client is still sending.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent import futures
from contextlib import contextmanager
from pathlib import Path

import grpc
from django.db import close_old_connections, connections
from google.protobuf.message import DecodeError

from hami_sim.project.conf import conf

from ..metrics import EXPANDER_INFLIGHT_BYTES
from .admission import Admission, CallInterceptor, Refused, peer_of, receive, refuse
from .protos import expander_pb2 as pb
from .service import CallAbandoned, Deadline, best_options

__all__ = ["ExpanderServicer", "ByteBudget", "build_server", "SERVICE", "METHOD", "FULL_METHOD"]

log = logging.getLogger("hami_sim.expander")
SERVICE = "grpcplugin.Expander"
METHOD = "BestOptions"
FULL_METHOD = f"/{SERVICE}/{METHOD}"
MAX_SEND_BYTES = 128 << 20  # CA's gRPCMaxRecvMsgSize (our answers are a few bytes per option)


class ByteBudget:
    """Request bytes in work at once; ``take`` never waits (CA's deadline is too short to queue)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    @contextmanager
    def hold(self, size: int) -> Iterator[None]:
        """``size`` bytes counted while the call is in work, or ``Refused`` (``inflight_bytes``)."""
        with self._lock:
            if self.used and self.used + size > self.limit:  # one call alone always fits
                raise Refused(
                    "inflight_bytes",
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"busy: {self.used} request bytes in work, limit {self.limit} "
                    "(EXPANDER_MAX_INFLIGHT_BYTES); CA keeps all its options",
                )
            self.used += size
        EXPANDER_INFLIGHT_BYTES.inc(size)
        try:
            yield
        finally:
            with self._lock:
                self.used -= size
            EXPANDER_INFLIGHT_BYTES.dec(size)


class ExpanderServicer:
    """``BestOptions`` on the request's raw bytes: admitted, received and sized before anything is parsed."""

    def __init__(
        self,
        daemon_pods: Sequence[Mapping] = (),
        budget: ByteBudget | None = None,
        admission: Admission | None = None,
    ) -> None:
        settings = conf()
        self.daemon_pods = tuple(daemon_pods)  # the cluster's DaemonSet pods, when known
        self.budget = budget or ByteBudget(settings.expander_max_inflight_bytes)
        self.admission = admission or Admission(settings.expander_max_concurrent)

    def BestOptions(self, requests: Iterator[bytes], context):  # noqa: N802 (the gRPC method name)
        peer = peer_of(context)
        settings = conf()
        try:
            with self.admission.call(peer):
                raw = receive(requests, context, settings.expander_receive_seconds)
                with self.admission.work_slot(peer), self.budget.hold(len(raw)):
                    return self._answer(raw, Deadline.of(context, settings.expander_max_call_seconds))
        except Refused as refusal:
            refuse(context, peer, refusal)

    def _answer(self, raw: bytes, deadline: Deadline) -> pb.BestOptionsResponse:
        try:
            request = pb.BestOptionsRequest.FromString(raw)
        except DecodeError as exc:
            raise Refused(
                "invalid", grpc.StatusCode.INVALID_ARGUMENT, f"not a BestOptionsRequest: {exc}"
            ) from None
        del raw  # the parsed request holds what we need
        close_old_connections()  # worker threads live long; drop connections the database closed
        try:
            return best_options(request, daemon_pods=self.daemon_pods, deadline=deadline)
        except CallAbandoned as exc:
            raise Refused("deadline", grpc.StatusCode.DEADLINE_EXCEEDED, str(exc)) from None
        finally:
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
    ``workers`` (default ``EXPANDER_MAX_CONCURRENT``) calls are judged at once; more are refused.
    """
    settings = conf()
    admission = Admission(workers or settings.expander_max_concurrent)
    options = [
        ("grpc.max_receive_message_length", max_request_bytes or settings.expander_max_request_bytes),
        ("grpc.max_send_message_length", MAX_SEND_BYTES),
    ]
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=admission.backstop, thread_name_prefix="expander"),
        options=options,
        interceptors=[CallInterceptor(admission, FULL_METHOD)],
        maximum_concurrent_rpcs=admission.backstop,
    )
    budget = ByteBudget(max_inflight_bytes or settings.expander_max_inflight_bytes)
    servicer = ExpanderServicer(daemon_pods, budget, admission)
    handler = grpc.stream_unary_rpc_method_handler(
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
