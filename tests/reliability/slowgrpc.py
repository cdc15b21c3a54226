"""A gRPC client that sends its request slowly, on a raw socket (grpcio always sends a unary request
at once, so it cannot be slow).

It speaks just enough HTTP/2 (RFC 9113) over TLS with ALPN ``h2``: the preface, SETTINGS and their
acknowledgements, PING answers, flow control (section 6.9: it sends no more DATA than the server's
connection and stream windows allow, as its SETTINGS and WINDOW_UPDATEs open them), one HEADERS frame (HPACK literals without Huffman coding, RFC 7541
6.2.2) opening ``/grpcplugin.Expander/BestOptions`` with no deadline, and then the gRPC message's
5-byte length prefix followed by its bytes, ``chunk`` bytes every ``interval`` seconds. A reader
thread notes when the server ends the stream (trailers with END_STREAM, or RST_STREAM), so a test can
wait for the server to cut the call off. ``source`` binds a loopback address (``127.0.0.2``) to act as
another peer.
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import struct
import threading

__all__ = ["SlowCall"]

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE = 0x4, 0x5  # SETTINGS identifiers
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
STREAM = 1


def _frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _literal(name: str, value: str) -> bytes:
    """A header field as an HPACK literal without indexing, new name, no Huffman (short strings)."""
    out = b"\x00"
    for text in (name.encode(), value.encode()):
        assert len(text) < 127
        out += bytes([len(text)]) + text
    return out


_DEFAULT_WINDOW = 65535  # HTTP/2's initial flow-control window, per connection and per stream
_MAX_FRAME = 16384  # HTTP/2's default SETTINGS_MAX_FRAME_SIZE
_WINDOW_WAIT = 30.0  # how long a send waits for the server to open its window


class SlowCall:
    """One BestOptions call whose request trickles in (``start`` opens it, ``send_some`` sends more)."""

    def __init__(self, port: int, ca_pem: bytes, source: str = "127.0.0.1") -> None:
        context = ssl.create_default_context(cadata=ca_pem.decode())
        context.set_alpn_protocols(["h2"])
        raw = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
        self.sock = context.wrap_socket(raw, server_hostname="localhost")
        self.ended = threading.Event()  # the server ended the stream (a status or a reset)
        self.closed = threading.Event()  # the connection is gone
        self._lock = threading.Lock()
        #: what the server lets us send: its connection and stream windows, its largest frame
        self._windows = threading.Condition()
        self._connection_window = self._stream_window = self._initial_window = _DEFAULT_WINDOW
        self._max_frame = _MAX_FRAME
        self._reader = threading.Thread(target=self._read, daemon=True)

    def start(self, request: bytes, sent: int = 0) -> SlowCall:
        """Open the call and send the message's prefix (its full length) and its first ``sent`` bytes."""
        self.request = request
        self.sent = 0
        head = b"".join(
            _literal(n, v)
            for n, v in (
                (":method", "POST"),
                (":scheme", "https"),
                (":path", "/grpcplugin.Expander/BestOptions"),
                (":authority", "localhost"),
                ("content-type", "application/grpc"),
                ("te", "trailers"),
            )
        )
        self._send(PREFACE + _frame(SETTINGS, 0, 0) + _frame(HEADERS, END_HEADERS, STREAM, head))
        self._reader.start()
        self._send_data(b"\x00" + struct.pack(">I", len(request)), end=False)
        if sent:
            self.send_some(sent)
        return self

    def send_some(self, n: int) -> bool:
        """Send the next ``n`` bytes of the message (END_STREAM with the last); False once the
        connection is gone."""
        chunk = self.request[self.sent : self.sent + n]
        self.sent += len(chunk)
        try:
            return self._send_data(chunk, end=self.sent >= len(self.request))
        except OSError:
            return False

    def _send_data(self, data: bytes, end: bool) -> bool:
        """DATA frames of ``data`` within the server's windows and frame size (a frame past its
        window is a flow-control error that ends the stream: grpc then hands the handler no
        message); False if the connection is gone or the window stays shut for ``_WINDOW_WAIT`` s."""
        while True:
            with self._windows:
                # an empty frame (END_STREAM alone) needs no window
                if data and not self._windows.wait_for(self._may_send, _WINDOW_WAIT):
                    return False
                if self.closed.is_set():
                    return False
                size = min(len(data), self._room())
                piece, data = data[:size], data[size:]
                self._connection_window -= size
                self._stream_window -= size
            self._send(_frame(DATA, END_STREAM if end and not data else 0, STREAM, piece))
            if not data:
                return True

    def _may_send(self) -> bool:
        return self._room() > 0 or self.closed.is_set()

    def _room(self) -> int:
        return min(self._connection_window, self._stream_window, self._max_frame)

    def _send(self, data: bytes) -> None:
        with self._lock:
            self.sock.sendall(data)

    def _recv(self, n: int) -> bytes:
        """Read under the same lock as ``_send``: one TLS connection may not be read and written
        from two threads at once (OpenSSL's record state is shared; concurrent use corrupted a
        record now and then: BAD_DECRYPT). Wait for data without the lock, so sends go on."""
        while True:
            with self._lock:
                if self.sock.pending():
                    return self.sock.recv(n)
            readable, _, _ = select.select([self.sock], [], [], 0.05)
            if readable:
                with self._lock:
                    return self.sock.recv(n)

    def _read_exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            got = self._recv(n - len(data))
            if not got:
                raise ConnectionError("closed")
            data += got
        return data

    def _read(self) -> None:
        try:
            while True:
                head = self._read_exact(9)
                size = int.from_bytes(head[:3], "big")
                kind, flags = head[3], head[4]
                stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
                payload = self._read_exact(size)
                if kind == SETTINGS and not flags & ACK:
                    self._apply_settings(payload)
                elif kind == WINDOW_UPDATE:
                    self._open_window(stream, int.from_bytes(payload[:4], "big") & 0x7FFFFFFF)
                elif kind == PING and not flags & ACK:
                    self._send(_frame(PING, ACK, 0, payload))
                elif (
                    stream == STREAM
                    and (kind == RST_STREAM or (kind == HEADERS and flags & END_STREAM))
                    or kind == GOAWAY
                ):
                    self.ended.set()
        except (OSError, ConnectionError, ValueError):
            pass
        finally:
            self.ended.set()
            self.closed.set()
            with self._windows:
                self._windows.notify_all()  # a send waiting for the window gives up

    def _apply_settings(self, payload: bytes) -> None:
        """Acknowledge the server's SETTINGS, then take its window and frame size (section 6.9.2: a
        new initial window moves the open stream's window by the difference). The ACK goes out
        before any DATA sent under the new values, so the server counts that DATA by them too."""
        with self._windows:
            self._send(_frame(SETTINGS, ACK, 0))
            for i in range(0, len(payload) - 5, 6):
                ident, value = struct.unpack(">HI", payload[i : i + 6])
                if ident == INITIAL_WINDOW_SIZE:
                    self._stream_window += value - self._initial_window
                    self._initial_window = value
                elif ident == MAX_FRAME_SIZE:
                    self._max_frame = value
            self._windows.notify_all()

    def _open_window(self, stream: int, increment: int) -> None:
        with self._windows:
            if stream == 0:
                self._connection_window += increment
            elif stream == STREAM:
                self._stream_window += increment
            self._windows.notify_all()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
