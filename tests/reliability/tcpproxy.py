"""A TCP forwarder the test owns, to take a server's database away without touching the database.

The server under test connects to ``127.0.0.1:<proxy port>``; the proxy forwards to the real
PostgreSQL. ``cut()`` closes the listener and every forwarded connection (the server sees its
connections reset and new ones refused, as when PostgreSQL stops); ``restore()`` listens again on the
same port. The shared PostgreSQL server itself is never stopped.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

__all__ = ["TcpProxy"]


class TcpProxy:
    def __init__(self, upstream: tuple[str, int], latency: float = 0.0) -> None:
        self.upstream = upstream
        #: seconds each chunk the server sends waits before it is forwarded (a slow database: every
        #: query's round trip takes at least this long); may be changed while the proxy runs
        self.latency = latency
        self.port = 0
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        """Listen (again, on the same port once one was chosen) and forward every connection."""
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Refuse new connections and reset the open ones."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            conns, self._conns = self._conns, set()
        for conn in conns:
            # shutdown, not just close: a pump thread blocked in recv() keeps a closed socket open
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    close = cut

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns.update((client, server))
            for a, b, slow in ((client, server, True), (server, client, False)):
                threading.Thread(target=self._pump, args=(a, b, slow), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, slow: bool = False) -> None:
        try:
            while data := src.recv(65536):
                if slow and self.latency > 0:
                    time.sleep(self.latency)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            with self._lock:
                self._conns.discard(src)
            src.close()  # each socket is the source of exactly one pump
