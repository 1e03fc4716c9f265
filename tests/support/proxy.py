"""A TCP proxy that can cut every connection and refuse new ones: a store outage on demand."""

from __future__ import annotations

import contextlib
import socket
import threading


class OutageProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._serving = False
        self.resume()

    def resume(self) -> None:
        """Accept connections again (on the same port)."""
        if self._serving:
            return
        if self._listener.fileno() == -1:
            self._listener = socket.create_server(("127.0.0.1", self.port))
        self._serving = True
        threading.Thread(target=self._accept, args=(self._listener,), daemon=True).start()

    def cut(self) -> None:
        """Close the listener and every open connection: the store is unreachable."""
        with self._lock:
            self._serving = False
            # Closing alone leaves it listening while a thread waits in accept() on it (the
            # wait holds the socket); shutting it down ends that wait.
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while self._serving:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                if not self._serving:
                    client.close()
                    upstream.close()
                    return
                self._sockets |= {client, upstream}
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
