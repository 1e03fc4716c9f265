"""Connections a client opens and never finishes (api/http_protocol.py), against a real
`lockstep serve`: one that does not send a request's headers within the header timeout is
answered 408 in Run:ai's error body and closed; past the cap on open connections, one more is
answered 503 and closed at once; and through both, another client is served."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import running
from tests.support.api import poll
from tests.support.server import LiveServer


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    settings = {"HEADER_TIMEOUT_SECONDS": "1", "MAX_CONNECTIONS": "24"}
    with running(LiveServer(tmp_path / "data", sqlite_url, settings=settings)) as live:
        yield live


def answer(connection: socket.socket) -> tuple[int, dict[str, object]]:
    """What the server says before it closes the connection: its status and JSON body."""
    connection.settimeout(30)
    received = b""
    while chunk := connection.recv(65536):
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def served(server: LiveServer) -> bool:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
        client.sendall(b"GET /healthz HTTP/1.1\r\nHost: lockstep\r\nConnection: close\r\n\r\n")
        return answer_status(client) == 200


def answer_status(connection: socket.socket) -> int:
    connection.settimeout(30)
    received = b""
    while b"\r\n" not in received and (chunk := connection.recv(65536)):
        received += chunk
    return int(received.split()[1])


def test_a_request_whose_headers_never_end_is_answered_408_and_closed(
    server: LiveServer,
) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as slow:
        slow.sendall(b"GET /api/v1/clusters HTTP/1.1\r\nHost: lockstep\r\nX-Slow: a")
        assert served(server)  # meanwhile, another client is served
        status, body = answer(slow)
    assert status == 408
    assert body == {
        "code": 408,
        "message": "request: its line and headers must arrive within 1 s "
        "(LOCKSTEP_HEADER_TIMEOUT_SECONDS)",
    }


def test_a_connection_that_sends_nothing_is_closed_too(server: LiveServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as idle:
        status, body = answer(idle)
    assert (status, body["code"]) == (408, 408)


def test_past_the_cap_one_more_connection_is_answered_503_and_others_are_served_after(
    tmp_path: Path, sqlite_url: str
) -> None:
    settings = {"HEADER_TIMEOUT_SECONDS": "60", "MAX_CONNECTIONS": "24"}
    with (
        running(LiveServer(tmp_path / "data", sqlite_url, settings=settings)) as server,
        contextlib.ExitStack() as held,
    ):
        connections = [
            held.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10))
            for _ in range(24)
        ]

        def refused() -> tuple[int, dict[str, object]] | None:
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as extra:
                found = answer(extra)
            return found if found[0] == 503 else None

        _, body = poll(refused, timeout=30, what="a connection past the cap refused")
        assert body == {
            "code": 503,
            "message": "connections: at most 24 are served at once by this API process "
            "(LOCKSTEP_MAX_CONNECTIONS); try again later",
        }
        for connection in connections[:4]:
            connection.close()
        assert poll(lambda: served(server) or None, timeout=30, what="a client served again")
