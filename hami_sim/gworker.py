"""gunicorn's threaded worker with a buffering front: no slow client can hold a thread (issue 16 item 4).

Why: gunicorn's ``gthread`` worker hands a connection to a pool thread as soon as its first byte
arrives; the thread then reads the TLS handshake and the request head with blocking reads. Four
connections sending one header line every 2 s held every thread of the web listener, so ``/healthz``
went unanswered for 40 s and the kubelet took the pod out of its Services.

What this worker changes, nothing else:

- **The head is read in the event loop.** The TLS handshake and the request line and headers (and a
  body of known length up to ``FRONT_BODY_BYTES``, while the worker's front holds less than
  ``FRONT_BUDGET_BYTES`` in all) are read without blocking in the worker's main loop, like a
  buffering proxy would; a pool thread only gets a connection whose request is complete, so it
  parses from memory and runs the view at once.
- **A deadline for the head.** ``HAMI_SIM_HEADER_TIMEOUT`` seconds (default 10) from the moment the
  connection (or the next keep-alive request) starts; a client still sending by then gets
  ``408 Request Timeout`` and is closed.
- **A deadline for larger bodies.** A body the front did not buffer is read by the thread within
  ``HAMI_SIM_BODY_TIMEOUT`` seconds in total (default 30), not per read, so a trickle cannot hold it.
- **The client certificate per request.** On TLS listeners every request's WSGI environ carries
  ``hami_sim.client_identities`` (the peer certificate's CN and SAN values), for the allow-list in
  ``hami_sim.middleware.ClientIdentityMiddleware`` (item 7). gunicorn itself does not pass the peer
  certificate to the application.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import selectors
import ssl
import threading
import time
from dataclasses import dataclass, field
from functools import partial

from gunicorn import http
from gunicorn import sock as gsock
from gunicorn.workers.gthread import ThreadWorker

__all__ = ["HardenedThreadWorker", "client_identities", "IDENTITIES_ENVIRON_KEY"]

IDENTITIES_ENVIRON_KEY = "hami_sim.client_identities"
FRONT_BODY_BYTES = 16 * 1024 * 1024  # bodies up to this size are read by the front, bigger ones by the thread
FRONT_BUDGET_BYTES = 128 * 1024 * 1024  # all connections of a worker together; beyond it heads go on at once
MAX_HEAD_BYTES = 128 * 1024  # beyond this gunicorn's own limits (431 / 400) will refuse the head anyway
_HEAD_END = b"\r\n\r\n"
_CONTENT_LENGTH = re.compile(rb"^content-length[ \t]*:[ \t]*(\d{1,15})[ \t]*$", re.I | re.M)
_TRANSFER_ENCODING = re.compile(rb"^transfer-encoding[ \t]*:", re.I | re.M)
_TIMEOUT_408 = b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"


def _seconds(name: str, default: float) -> float:
    return float(os.environ.get(name) or default)


def _ip(client: object) -> str:
    return str(client[0]) if isinstance(client, tuple) and client else str(client)


def client_identities(peercert: dict | None) -> tuple[str, ...]:
    """The subject CNs and the SAN values (DNS, URI, email, IP) of a certificate from ``getpeercert``."""
    if not peercert:
        return ()
    names = [value for rdn in peercert.get("subject", ()) for key, value in rdn if key == "commonName"]
    names += [value for _kind, value in peercert.get("subjectAltName", ())]
    return tuple(dict.fromkeys(names))


@dataclass
class _Head:
    """A connection the front is still reading: its deadline and the bytes received so far."""

    deadline: float
    buf: bytearray = field(default_factory=bytearray)
    handshaking: bool = False

    def head_end(self) -> int:
        """Where the head ends (-1: not yet); stray CRLFs before a request line are allowed."""
        start = len(self.buf) - len(self.buf.lstrip(b"\r\n"))
        return self.buf.find(_HEAD_END, start)

    def complete(self, over_budget: bool = False) -> bool:
        """The head has arrived, and with it the whole body when it is small and of known length
        (with ``over_budget``, the head alone is enough: the thread reads the body)."""
        end = self.head_end()
        if end < 0:
            return len(self.buf) > MAX_HEAD_BYTES  # let gunicorn's parser refuse it
        if over_budget:
            return True
        head = bytes(self.buf[:end])
        if _TRANSFER_ENCODING.search(head):
            return True
        match = _CONTENT_LENGTH.search(head)
        length = int(match.group(1)) if match else 0
        return length > FRONT_BODY_BYTES or len(self.buf) >= end + len(_HEAD_END) + length


class _BodyDeadline:
    """The socket as the request parser sees it: every ``recv`` bounded by one total deadline."""

    def __init__(self, sock: ssl.SSLSocket, deadline: float) -> None:
        self.sock = sock
        self.deadline = deadline

    def recv(self, size: int) -> bytes:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the request body was not received in time")
        self.sock.settimeout(remaining)
        try:
            return self.sock.recv(size)
        finally:
            self.sock.settimeout(None)


class HardenedThreadWorker(ThreadWorker):
    """``gthread`` with the request head (and small bodies) read in the event loop; see the module."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = _seconds("HAMI_SIM_HEADER_TIMEOUT", 10.0)
        self.body_timeout = _seconds("HAMI_SIM_BODY_TIMEOUT", 30.0)
        self._heads: dict = {}
        self._front_bytes = 0  # bytes the front holds for all its connections
        self._local = threading.local()
        self._ssl_context: ssl.SSLContext | None = None

    # -- the front: read heads without a thread --------------------------------------------------------

    def enqueue_req(self, conn) -> None:
        if getattr(conn, "hami_complete", False):
            conn.hami_complete = False
            super().enqueue_req(conn)
            return
        state = _Head(deadline=time.monotonic() + self.header_timeout)
        conn.sock.setblocking(False)
        if conn.parser is not None:  # keep-alive: bytes read ahead belong to this request
            state.buf += conn.parser.unreader.take_buffered()
            self._front_bytes += len(state.buf)
        elif self.cfg.is_ssl:
            conn.sock = self._context().wrap_socket(
                conn.sock,
                server_side=True,
                do_handshake_on_connect=False,
                suppress_ragged_eofs=self.cfg.suppress_ragged_eofs,
            )
            state.handshaking = True
        self._heads[conn] = state
        if not state.handshaking and state.complete(self._front_bytes > FRONT_BUDGET_BYTES):
            self._hand_over(conn)
            return
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_readable, conn))

    def _context(self) -> ssl.SSLContext:
        if self._ssl_context is None:  # read once per worker, like gunicorn's own per-connection reads
            self._ssl_context = gsock.ssl_context(self.cfg)
        return self._ssl_context

    def _on_readable(self, conn, _fileobj) -> None:
        state = self._heads.get(conn)
        if state is None:
            return
        try:
            if state.handshaking:
                conn.sock.do_handshake()
                state.handshaking = False
            if not self._read_available(conn, state):  # the client closed (or half-closed) its side
                if state.buf:  # what did arrive gets gunicorn's usual answer (a broken body, a 400)
                    self._hand_over(conn)
                else:
                    self._drop(conn)
                return
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        except ssl.SSLError as exc:  # a failed handshake: no or a foreign client certificate, old TLS
            self.log.warning("Invalid request from ip=%s: %s", _ip(conn.client), exc)  # as gunicorn logs it
            self._drop(conn)
            return
        except OSError:  # a reset
            self._drop(conn)
            return
        if state.complete(self._front_bytes > FRONT_BUDGET_BYTES):
            self._hand_over(conn)

    def _read_available(self, conn, state: _Head) -> bool:
        """Read what the socket (and TLS buffer) holds now; False once the client has gone."""
        while not state.complete(self._front_bytes > FRONT_BUDGET_BYTES):
            try:
                data = conn.sock.recv(65536)
            except (ssl.SSLWantReadError, BlockingIOError, InterruptedError):
                return True
            if not data:
                return False
            state.buf += data
            self._front_bytes += len(data)
        return True

    def _hand_over(self, conn) -> None:
        state = self._heads.pop(conn)
        self._front_bytes -= len(state.buf)
        with contextlib.suppress(KeyError, ValueError, OSError):  # unregistered: complete at once
            self.poller.unregister(conn.sock)
        if conn.parser is None:
            conn.parser = http.get_parser(self.cfg, conn.sock, conn.client)
        conn.initialized = conn.data_ready = True
        conn.parser.unreader.unread(bytes(state.buf))
        conn.parser.unreader.sock = _BodyDeadline(conn.sock, time.monotonic() + self.body_timeout)
        conn.hami_complete = True
        self.enqueue_req(conn)

    def _drop(self, conn, answer: bytes = b"") -> None:
        state = self._heads.pop(conn, None)
        self._front_bytes -= len(state.buf) if state is not None else 0
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(conn.sock)
        if answer:
            try:
                conn.sock.send(answer)  # best effort: the socket is non-blocking
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EPIPE, errno.ECONNRESET, None):
                    self.log.debug("408 not sent: %s", exc)
        self.nr_conns -= 1
        conn.close()

    def murder_keepalived(self, force: bool = False) -> None:
        """gunicorn's keep-alive reaper, plus: heads past their deadline get a 408 and are closed."""
        super().murder_keepalived(force)
        now = time.monotonic()
        for conn, state in list(self._heads.items()):
            if force or state.deadline <= now:
                self._drop(conn, b"" if state.handshaking or not state.buf else _TIMEOUT_408)

    # -- the client certificate, per request -----------------------------------------------------------

    def handle(self, conn):
        peer = conn.sock.getpeercert() if isinstance(conn.sock, ssl.SSLSocket) else None
        self._local.identities = client_identities(peer) if peer is not None else None
        return super().handle(conn)

    def load_wsgi(self) -> None:
        super().load_wsgi()
        app, local = self.wsgi, self._local

        def with_client_identities(environ, start_response):
            identities = getattr(local, "identities", None)
            if identities is not None:
                environ[IDENTITIES_ENVIRON_KEY] = identities
            return app(environ, start_response)

        self.wsgi = with_client_identities
