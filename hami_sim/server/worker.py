"""gunicorn's threaded worker with a buffering front: no slow client can hold a thread.

Why: gunicorn's ``gthread`` worker hands a connection to a pool thread as soon as its first byte
arrives; the thread then reads the TLS handshake and the request head with blocking reads. Four
connections sending one header line every 2 s held every thread of the web listener, so ``/healthz``
went unanswered for 40 s and the kubelet took the pod out of its Services.

What this worker changes, nothing else:

- **The whole request is read in the event loop.** The TLS handshake, the request line and headers
  and the body (of known length or chunked, up to ``FRONT_BODY_BYTES``, while the worker's front
  holds less than ``FRONT_BUDGET_BYTES`` in all) are read without blocking in the worker's main loop,
  like a buffering proxy would; a pool thread only gets a connection whose request is complete, so it
  parses from memory and runs the view at once.
- **One deadline for the whole request.** ``HAMI_SIM_REQUEST_TIMEOUT`` seconds (default 10; the
  older ``HAMI_SIM_BODY_TIMEOUT`` is read when it is unset) from the moment the connection (or the
  next keep-alive request) starts, for head and body together; the head alone must also arrive
  within ``HAMI_SIM_HEADER_TIMEOUT`` (default 10). A client still sending by then gets
  ``408 Request Timeout`` and is closed. A slow chunked body, a large ``Content-Length`` sent slowly
  or a trickle of headers hold no thread, only a little buffer.
- **Refusals that need no thread.** A head over ``MAX_HEAD_BYTES`` is a ``431``, a declared or
  chunked body over ``FRONT_BODY_BYTES`` a ``413`` and a broken chunked framing a ``400``, answered
  by the front (JSON, closed).
- **JSON errors on the API paths.** gunicorn's own answers (a bad request line, invalid headers, a
  line or field over its limits) and the ``408`` are the project's JSON error shape on the paths whose
  clients read JSON (``hami_sim.project.middleware.is_json_client_path``: ``/api/``, the extender and session
  verbs); the dashboard keeps gunicorn's page.
- **The deadline holds for the rare body the front hands over unread** (its budget is spent): the
  thread reads it within what is left of the same deadline, not per read.
- **The client certificate per request.** On TLS listeners every request's WSGI environ carries
  ``hami_sim.client_identities`` (the peer certificate's CN and SAN values), for the allow-list in
  ``hami_sim.project.middleware.ClientIdentityMiddleware``. gunicorn itself does not pass the peer
  certificate to the application.
"""

from __future__ import annotations

import contextlib
import errno
import html
import os
import re
import selectors
import ssl
import threading
import time
from functools import partial

from gunicorn import http, util
from gunicorn import sock as gsock
from gunicorn.workers.gthread import ThreadWorker

from hami_sim.server.front import (
    FRONT_BUDGET_BYTES,
    BodyDeadline,
    RequestHead,
    TooLarge,
    refusal,
    request_path,
)

__all__ = ["HardenedThreadWorker", "client_identities", "IDENTITIES_ENVIRON_KEY"]

IDENTITIES_ENVIRON_KEY = "hami_sim.client_identities"
_TIMEOUT_408 = b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"


def _seconds(name: str, default: float) -> float:
    return float(os.environ.get(name) or default)


def _ip(client: object) -> str:
    return str(client[0]) if isinstance(client, tuple) and client else str(client)


def client_identities(peercert: dict | None) -> tuple[str, ...]:
    """The names the peer certificate gives its holder (``clientcert.certificate_identities``: the
    subject CN and DNS SANs unless ``HAMI_SIM_CLIENT_IDENTITY_FIELDS`` says otherwise)."""
    from hami_sim.project.clientcert import certificate_identities

    return certificate_identities(peercert)


def _json_client(path: str | None) -> bool:
    """The API paths (REST, extender and session verbs), whose clients read JSON errors only."""
    from hami_sim.project.middleware import is_json_client_path

    return path is not None and is_json_client_path(path)


class _Captured:
    """Where gunicorn's ``handle_error`` writes its HTML answer on an API path: kept, not sent."""

    def __init__(self) -> None:
        self.data = b""

    def gettimeout(self) -> float:
        return 0.0  # ``util.write_nonblock`` then writes at once

    def sendall(self, data: bytes) -> None:
        self.data += data


_HTML_MESSAGE = re.compile(rb"</h1>\s*(.*?)\s*</body>", re.S)


def _as_json(html_answer: bytes, path: str) -> bytes:
    """gunicorn's own HTML error answer (``util.write_error``) as the same status in JSON."""
    head, _, body = html_answer.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")[2] or "400 Bad Request"
    found = _HTML_MESSAGE.search(body)
    message = html.unescape(found.group(1).decode("latin-1")) if found else ""
    return refusal(status, path, message or status.partition(" ")[2])


class HardenedThreadWorker(ThreadWorker):
    """``gthread`` with the request head (and small bodies) read in the event loop; see the module."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = _seconds("HAMI_SIM_HEADER_TIMEOUT", 10.0)
        self.request_timeout = _seconds(
            "HAMI_SIM_REQUEST_TIMEOUT", _seconds("HAMI_SIM_BODY_TIMEOUT", 10.0)
        )  # head and body together
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
        now = time.monotonic()
        state = RequestHead(
            deadline=now + self.request_timeout,
            head_deadline=now + min(self.header_timeout, self.request_timeout),
        )
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
        try:
            if not state.handshaking and state.complete(self._front_bytes > FRONT_BUDGET_BYTES):
                self._hand_over(conn)
                return
        except TooLarge as exc:
            self._drop(conn, exc.args[0])
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
            if state.complete(self._front_bytes > FRONT_BUDGET_BYTES):
                self._hand_over(conn)
        except TooLarge as exc:  # before SSLError: a refusal is sent, then the connection closed
            self._drop(conn, exc.args[0])
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        except ssl.SSLError as exc:  # a failed handshake: no or a foreign client certificate, old TLS
            self.log.warning("Invalid request from ip=%s: %s", _ip(conn.client), exc)  # as gunicorn logs it
            self._drop(conn)
            return
        except OSError:  # a reset
            self._drop(conn)

    def _read_available(self, conn, state: RequestHead) -> bool:
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
        conn.parser.unreader.unread(state.request_bytes())
        conn.parser.unreader.sock = BodyDeadline(conn.sock, state.deadline)  # what is left of it
        conn.hami_complete = True
        conn.hami_path = request_path(state.buf)  # for gunicorn's own error answers (handle_error)
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
                    self.log.debug("refusal not sent: %s", exc)
        self.nr_conns -= 1
        conn.close()

    def murder_keepalived(self, force: bool = False) -> None:
        """gunicorn's keep-alive reaper, plus: requests past their deadline (or heads past theirs) get
        a 408 and are closed."""
        super().murder_keepalived(force)
        now = time.monotonic()
        for conn, state in list(self._heads.items()):
            if force or state.deadline <= now or (state.body_start < 0 and state.head_deadline <= now):
                self._drop(conn, self._timeout_answer(state))

    def _timeout_answer(self, state: RequestHead) -> bytes:
        """Nothing to a client that sent nothing; JSON on an API path; else a bare 408."""
        if state.handshaking or not state.buf:
            return b""
        path = request_path(state.buf)
        if not _json_client(path):
            return _TIMEOUT_408
        message = f"the request was not received within {self.request_timeout:g} s"
        return refusal("408 Request Timeout", path, message)

    # -- the client certificate, per request -----------------------------------------------------------

    def handle(self, conn):
        peer = conn.sock.getpeercert() if isinstance(conn.sock, ssl.SSLSocket) else None
        self._local.identities = client_identities(peer) if peer is not None else None
        self._local.path = getattr(conn, "hami_path", None)
        return super().handle(conn)

    def handle_error(self, req, client, addr, exc) -> None:
        """gunicorn's own answers (a bad request line, invalid headers, a line or field over the
        limits, a broken chunk, a WSGI crash) in JSON on the API paths; its HTML page elsewhere."""
        path = getattr(req, "path", None) or getattr(self._local, "path", None)
        if not _json_client(path):
            super().handle_error(req, client, addr, exc)
            return
        captured = _Captured()
        super().handle_error(req, captured, addr, exc)  # logs it and picks the status, as usual
        with contextlib.suppress(OSError):
            util.write_nonblock(client, _as_json(captured.data, path))

    def load_wsgi(self) -> None:
        super().load_wsgi()
        from usage.store import start_refresher

        start_refresher()  # live usage and the profile catalog: never read on the request path
        app, local = self.wsgi, self._local

        def with_client_identities(environ, start_response):
            identities = getattr(local, "identities", None)
            if identities is not None:
                environ[IDENTITIES_ENVIRON_KEY] = identities
            return app(environ, start_response)

        self.wsgi = with_client_identities
