"""HTTP as bytes on a socket, for what an HTTP client would not send: a URL too long to parse,
a request that is not HTTP."""

from __future__ import annotations

import socket

from tests.support.server import LiveServer


def raw_exchange(server: LiveServer, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `request` as is on a new connection; the answer's status, headers and body, read
    until the server closes the connection or the body is complete."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(request)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        pairs = (line.partition(": ") for line in lines[1:])
        headers = {name.lower(): value for name, _, value in pairs}
        while len(body) < int(headers.get("content-length", "0")):
            chunk = connection.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(lines[0].split()[1]), headers, body
