"""Who may use the gRPC expander now: calls in progress, per-peer shares, the receive deadline, and
every refusal counted and logged.

A call is in one of two stages. **Receiving**: grpc has opened it and the request is still arriving;
this costs a thread and nothing else, and lasts at most ``EXPANDER_RECEIVE_SECONDS`` (a client that
sends slowly is cut off then). **Working**: the request is whole and is being judged; this holds one
of ``EXPANDER_MAX_CONCURRENT`` work slots. A work slot is taken only once the request is whole, so a
slow sender never holds one. Shares are per peer address (the client's IP: one pod, one peer):

- calls in progress: at most ``4 x EXPANDER_MAX_CONCURRENT`` in all and at most
  ``EXPANDER_MAX_CONCURRENT`` per peer (grpc's own limit stays twice as high, a backstop whose
  refusals a server interceptor counts);
- work slots: at most ``EXPANDER_MAX_CONCURRENT - 1`` per peer (at least one), so one peer never
  holds them all.

Every refusal is an error status, on which CA keeps all its options, and is counted as
``hami_sim_expander_refused_total{reason}`` and logged with the peer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import grpc

from ..metrics import EXPANDER_CALLS, EXPANDER_REFUSED

__all__ = ["Admission", "Refused", "CallInterceptor", "peer_of", "receive", "refuse", "REASONS"]

log = logging.getLogger("hami_sim.expander")

#: why a call was refused (the ``reason`` label of ``hami_sim_expander_refused_total``)
REASONS = {
    "calls": "more calls in progress than the process admits (4 x EXPANDER_MAX_CONCURRENT)",
    "peer_calls": "this peer already has EXPANDER_MAX_CONCURRENT calls in progress",
    "busy": "no work slot free for this peer (EXPANDER_MAX_CONCURRENT, at most all but one per peer)",
    "inflight_bytes": "the request bytes in work would pass EXPANDER_MAX_INFLIGHT_BYTES",
    "too_large": "no request arrived: over EXPANDER_MAX_REQUEST_BYTES (refused by grpc's receive "
    "limit before it is read), or the client went away mid-request",
    "receive_timeout": "the request did not arrive within EXPANDER_RECEIVE_SECONDS",
    "deadline": "the client's deadline passed (or EXPANDER_MAX_CALL_SECONDS) before the answer",
    "invalid": "the bytes are no BestOptionsRequest",
}


@dataclass
class Refused(Exception):
    """A call this process will not answer: the status to end it with and the reason to count."""

    reason: str
    code: grpc.StatusCode
    message: str


def refuse(context, peer: str, refusal: Refused) -> None:
    """Count, log and end the call with ``refusal``'s status (raises, as ``context.abort`` does)."""
    count_refusal(peer, refusal.reason, refusal.message)
    context.abort(refusal.code, refusal.message)


def count_refusal(peer: str, reason: str, message: str) -> None:
    EXPANDER_REFUSED.labels(reason=reason).inc()
    log.warning("expander call from %s refused (%s): %s", peer or "unknown peer", reason, message)


def peer_of(context) -> str:
    """The client's address without its port (``ipv4:10.0.0.7:51234`` -> ``10.0.0.7``): one pod is
    one peer however many connections it opens."""
    peer = context.peer() or ""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        host = rest.rpartition(":")[0]
        return host.strip("[]") or rest
    return peer


class Admission:
    """The counts behind the shares (module docstring); every method is quick and never waits."""

    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        self.max_calls = 4 * self.slots
        self.per_peer_calls = self.slots
        self.per_peer_slots = max(1, self.slots - 1)
        #: grpc's own limit and the thread pool: beyond the admitted calls, room for as many more
        #: being refused at once (each takes microseconds), so grpc's refusal is a backstop only
        self.backstop = 2 * self.max_calls
        #: calls inside the handler (admitted or being refused), calls admitted, calls in work
        self.present = self.calls = self.working = 0
        self._peer_calls: Counter[str] = Counter()
        self._peer_working: Counter[str] = Counter()
        self._lock = threading.Lock()

    @contextmanager
    def call(self, peer: str) -> Iterator[None]:
        """The call counted in all and against its peer's share while it lasts, or ``Refused``."""
        with self._lock:
            self.present += 1
            refusal = self._refusal(peer)
            if refusal is None:
                self.calls += 1
                self._peer_calls[peer] += 1
        if refusal is not None:
            with self._lock:
                self.present -= 1
            raise refusal
        EXPANDER_CALLS.inc()
        try:
            yield
        finally:
            EXPANDER_CALLS.dec()
            with self._lock:
                self.present -= 1
                self.calls -= 1
                self._release(self._peer_calls, peer)

    def _refusal(self, peer: str) -> Refused | None:
        if self.calls >= self.max_calls:
            return Refused(
                "calls",
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"busy: {self.max_calls} calls in progress; CA keeps all its options",
            )
        if self._peer_calls[peer] >= self.per_peer_calls:
            return Refused(
                "peer_calls",
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"busy: {peer} already has {self.per_peer_calls} call(s) in progress; "
                "CA keeps all its options",
            )
        return None

    @contextmanager
    def work_slot(self, peer: str) -> Iterator[None]:
        """One of the work slots while the call is judged, or ``Refused`` at once (CA's 5 s are too
        short to queue behind another call)."""
        with self._lock:
            if self.working >= self.slots or self._peer_working[peer] >= self.per_peer_slots:
                raise Refused(
                    "busy",
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"busy: {self.working} of {self.slots} call(s) in work (EXPANDER_MAX_CONCURRENT), "
                    f"{self._peer_working[peer]} of them {peer}'s; CA keeps all its options",
                )
            self.working += 1
            self._peer_working[peer] += 1
        try:
            yield
        finally:
            with self._lock:
                self.working -= 1
                self._release(self._peer_working, peer)

    @staticmethod
    def _release(counts: Counter[str], peer: str) -> None:
        counts[peer] -= 1
        if counts[peer] <= 0:
            del counts[peer]


def receive(requests: Iterator[bytes], context, seconds: float) -> bytes:
    """The request's bytes, whole, within ``seconds`` of now; else ``Refused``. A client that is
    still sending then is cut off (the call is cancelled), so it holds a thread for ``seconds`` at most."""
    started = time.monotonic()
    timer = threading.Timer(seconds, context.cancel)
    timer.daemon = True
    timer.start()
    try:
        raw = next(requests, None)
    except grpc.RpcError:  # the call ended before the request arrived: cancelled or refused by grpc
        raw = None
        ended = True
    else:
        ended = False
    finally:
        timer.cancel()
    if raw is not None:
        return raw
    if time.monotonic() - started >= seconds:
        raise Refused(
            "receive_timeout",
            grpc.StatusCode.DEADLINE_EXCEEDED,
            f"the request did not arrive within {seconds:g} s (EXPANDER_RECEIVE_SECONDS)",
        )
    if not ended and not _ends_soon(context):  # a client that half-closed without a message
        raise Refused("invalid", grpc.StatusCode.INVALID_ARGUMENT, "no request message")
    if context.time_remaining() <= 0:
        raise Refused("deadline", grpc.StatusCode.DEADLINE_EXCEEDED, "the client's deadline passed")
    raise Refused("too_large", grpc.StatusCode.RESOURCE_EXHAUSTED, REASONS["too_large"])


def _ends_soon(context, seconds: float = 0.5) -> bool:
    """Whether grpc ends the call within ``seconds``: when it refuses a request over its receive
    limit, the handler may see "no message" before it sees the call cancelled."""
    ended = threading.Event()
    if not context.add_callback(ended.set):
        return True  # already over
    return ended.wait(seconds) or not context.is_active()


class CallInterceptor(grpc.ServerInterceptor):
    """Counts the calls grpc itself refuses at arrival (``Admission.backstop`` calls already inside the
    handler: grpc's ``maximum_concurrent_rpcs``), which never reach the handler. It runs on grpc's
    polling thread before grpc's own check, and changes nothing."""

    def __init__(self, admission: Admission, method: str) -> None:
        self.admission = admission
        self.method = method

    def intercept_service(self, continuation, handler_call_details):
        if handler_call_details.method == self.method and self.admission.present >= self.admission.backstop:
            count_refusal("", "calls", f"{self.admission.backstop} calls in progress (grpc's own limit)")
        return continuation(handler_call_details)
