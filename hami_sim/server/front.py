"""The worker's buffering front: how a request's bytes are read before a thread gets them.

A connection's head and body are read in the worker's event loop into a ``RequestHead``, which knows
when the request is complete (a ``Content-Length`` body, or chunked framing walked as it arrives) and
refuses what can never be accepted (a head over ``MAX_HEAD_BYTES``, a body over ``FRONT_BODY_BYTES``,
broken chunked framing) with an answer the worker sends itself. Kept apart from the worker so the
HTTP framing rules read on their own; ``hami_sim.server.worker`` says why the front exists.
"""

from __future__ import annotations

import json
import os
import re
import ssl
import time
from dataclasses import dataclass, field
from urllib.parse import unquote

#: the largest body the application accepts (``EXTENDER_MAX_BODY_BYTES``, default 64 MiB, is the
#: largest of its limits): the front reads bodies up to it and refuses bigger ones with a 413
FRONT_BODY_BYTES = int(os.environ.get("EXTENDER_MAX_BODY_BYTES") or 64 * 1024 * 1024)
#: what the front buffers for all connections of a worker together (twice the largest body, at most
#: 128 MiB); beyond it a request goes on once its head is in and the thread reads its body
FRONT_BUDGET_BYTES = min(2 * FRONT_BODY_BYTES, 128 * 1024 * 1024)
MAX_HEAD_BYTES = 128 * 1024  # a longer head is refused (431): a request line and headers, no more
_MAX_CHUNK_LINE = 1024  # a chunk-size line (hex size and extensions) longer than this is malformed
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,15}")  # fullmatch
HEAD_END = b"\r\n\r\n"
# (each line of a head ends in CRLF: ``$`` of re.M stops before the LF only)
_CONTENT_LENGTH = re.compile(rb"^content-length[ \t]*:[ \t]*(\d{1,15})[ \t]*\r?$", re.I | re.M)
TRANSFER_ENCODING = re.compile(rb"^transfer-encoding[ \t]*:([^\r\n]*)\r?$", re.I | re.M)


def request_path(head: bytes | bytearray) -> str | None:
    """The path of a request's first line (decoded, without the query), or None while that line is
    incomplete or is not ``METHOD target HTTP/x.y``: what the front and the error answers go by."""
    start = len(head) - len(head.lstrip(b"\r\n"))
    end = head.find(b"\r\n", start, start + 65536)
    if end < 0:
        return None
    parts = bytes(head[start:end]).split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/"):
        return None
    target = parts[1].decode("latin-1")
    if "://" in target:  # absolute form: http://host/path
        target = "/" + target.split("://", 1)[1].partition("/")[2]
    return unquote(target.partition("?")[0]) if target.startswith("/") else None


def refusal(status: str, path: str | None, message: str) -> bytes:
    """A JSON refusal sent by the worker itself, then closed: the project's one error shape,
    ``hami_sim.project.middleware.error_response`` (``{"error": ...}`` on the extender verbs, which Go reads as
    ``Error``, ``{"detail": ...}`` elsewhere)."""
    from hami_sim.project.middleware import EXTENDER_VERB_PATH  # Django's, loaded in workers only

    key = "error" if path is not None and EXTENDER_VERB_PATH.match(path) else "detail"
    body = json.dumps({key: message}).encode()
    return (
        f"HTTP/1.1 {status}\r\nConnection: close\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


CHUNKED, UNFRAMED = -1, -2


class TooLarge(Exception):
    """The request cannot be accepted whatever arrives next; ``args[0]`` is the answer to send."""


@dataclass
class RequestHead:
    """A connection the front is still reading: its deadlines and the bytes received so far."""

    deadline: float  # for the whole request
    head_deadline: float
    buf: bytearray = field(default_factory=bytearray)
    handshaking: bool = False
    body_start: int = -1  # where the body starts once the head is in
    chunk_pos: int = -1  # chunked: where the next chunk-size line starts
    chunked_bytes: int = 0  # chunked: the body's size so far
    length: int = 0  # the body's length once the head is in, or ``CHUNKED`` / ``UNFRAMED``
    chunked_end: int = -1  # chunked: where the request ends (after the trailers), once it has

    def request_bytes(self) -> bytes:
        """What the thread parses: the bytes received, a complete chunked body decoded and framed by
        ``Content-Length`` instead (Django reads a body by its length; trailers are dropped)."""
        if self.length != CHUNKED or self.chunked_end < 0:
            return bytes(self.buf)
        buf, pos, body = self.buf, self.body_start, bytearray()
        while True:
            line_end = buf.find(b"\r\n", pos)
            size = int(bytes(buf[pos:line_end]).split(b";", 1)[0].strip(), 16)
            if size == 0:
                break
            body += buf[line_end + 2 : line_end + 2 + size]
            pos = line_end + 2 + size + 2
        lines = bytes(buf[: self.body_start - len(HEAD_END)]).split(b"\r\n")
        head = b"\r\n".join(line for line in lines if not TRANSFER_ENCODING.match(line))
        framed = head + b"\r\nContent-Length: %d\r\n\r\n" % len(body)
        return framed + bytes(body) + bytes(buf[self.chunked_end :])

    def head_end(self) -> int:
        """Where the head ends (-1: not yet); stray CRLFs before a request line are allowed."""
        start = len(self.buf) - len(self.buf.lstrip(b"\r\n"))
        return self.buf.find(HEAD_END, start)

    def complete(self, over_budget: bool = False) -> bool:
        """The whole request has arrived, head and body (with ``over_budget``, the head alone is
        enough: the thread reads the body). Raises ``TooLarge`` for a request the front refuses."""
        if self.body_start < 0:
            end = self.head_end()
            if end < 0:
                if len(self.buf) > MAX_HEAD_BYTES:
                    message = f"request head exceeds {MAX_HEAD_BYTES} bytes"
                    raise TooLarge(
                        refusal("431 Request Header Fields Too Large", request_path(self.buf), message)
                    )
                return False
            self.body_start = end + len(HEAD_END)
            self.length = self._framing(bytes(self.buf[:end]))
        if over_budget or self.length == UNFRAMED:
            return True
        if self.length == CHUNKED:
            return self._chunks_complete()
        return len(self.buf) >= self.body_start + self.length

    def _framing(self, head: bytes) -> int:
        """The body's length, ``CHUNKED``, or ``UNFRAMED`` (gunicorn refuses it: 400)."""
        encoding = TRANSFER_ENCODING.search(head)
        length = _CONTENT_LENGTH.search(head)
        if encoding is not None:
            chunked = encoding.group(1).strip().lower() == b"chunked"
            return CHUNKED if chunked and length is None else UNFRAMED
        size = int(length.group(1)) if length else 0
        if size > FRONT_BODY_BYTES:
            message = f"request body of {size} bytes exceeds the limit of {FRONT_BODY_BYTES} bytes"
            raise TooLarge(refusal("413 Request Entity Too Large", request_path(head), message))
        return size

    def _chunks_complete(self) -> bool:
        """Walk the chunks that arrived since the last call; True once the last chunk and the
        trailers are in. Broken framing is a 400 from the front (gunicorn would find it only after
        the view had answered, and answer twice on one connection)."""
        buf = self.buf
        pos = self.body_start if self.chunk_pos < 0 else self.chunk_pos
        while True:
            line_end = buf.find(b"\r\n", pos, pos + _MAX_CHUNK_LINE)
            if line_end < 0:
                self.chunk_pos = pos
                if len(buf) - pos >= _MAX_CHUNK_LINE:  # no size line in sight
                    raise self._malformed(f"chunk-size line longer than {_MAX_CHUNK_LINE} bytes")
                return False
            size_text = bytes(buf[pos:line_end]).split(b";", 1)[0].strip()
            if not _CHUNK_SIZE.fullmatch(size_text):
                raise self._malformed(f"invalid chunk size {size_text[:32]!r}")
            size = int(size_text, 16)
            if size == 0:  # the last chunk; then trailers, up to an empty line
                self.chunk_pos = pos
                end = buf.find(HEAD_END, line_end)  # "0\r\n\r\n" without trailers
                if end < 0:
                    return False
                self.chunked_end = end + len(HEAD_END)
                return True
            self.chunked_bytes += size
            if self.chunked_bytes > FRONT_BODY_BYTES:
                raise TooLarge(
                    refusal(
                        "413 Request Entity Too Large",
                        request_path(buf),
                        f"chunked request body exceeds the limit of {FRONT_BODY_BYTES} bytes",
                    )
                )
            data_end = line_end + 2 + size + 2
            if len(buf) < data_end:
                self.chunked_bytes -= size  # counted again when the chunk is complete
                self.chunk_pos = pos
                return False
            if buf[data_end - 2 : data_end] != b"\r\n":
                raise self._malformed("chunk data not followed by CRLF")
            pos = data_end

    def _malformed(self, message: str) -> TooLarge:
        return TooLarge(refusal("400 Bad Request", request_path(self.buf), message))


class BodyDeadline:
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
