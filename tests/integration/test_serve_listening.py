"""`lockstep serve` says it listens only once its socket does: on an address already in use it
ends at once, naming the address and why, without a "listening on" line; a normal start says
"listening on" once. Both with one API process (SQLite) and with several (PostgreSQL)."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import fresh_database
from tests.support.api import poll
from tests.support.server import LiveServer

EXIT_DEADLINE_SECONDS = 60.0
START_DEADLINE_SECONDS = 120.0
"""Several API processes each import lockstep as they start: slow on a busy machine."""


@pytest.fixture(params=["one API process", "two API processes"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    """A server, not started, of one API process on SQLite or two on PostgreSQL."""
    if request.param == "one API process":
        yield LiveServer(tmp_path / "data", f"sqlite:///{tmp_path / 'store.db'}")
        return
    with fresh_database(request, "postgresql", tmp_path) as url:
        yield LiveServer(tmp_path / "data", url, settings={"API_PROCESSES": "2"})


def test_an_address_in_use_ends_the_server_without_saying_it_listens(server: LiveServer) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", server.port))
        taken.listen()
        finished = subprocess.run(
            [sys.executable, "-m", "lockstep", "serve"],
            env=server.environment(),
            capture_output=True,
            text=True,
            timeout=EXIT_DEADLINE_SECONDS,
            check=False,
        )
    output = finished.stdout + finished.stderr
    assert finished.returncode != 0, output
    assert "listening on" not in output
    assert f"cannot listen on http://127.0.0.1:{server.port}: Address already in use" in output
    assert "Traceback" not in output


def test_a_server_says_once_that_it_listens(server: LiveServer) -> None:
    try:
        server.start(timeout=START_DEADLINE_SECONDS)
        poll(
            lambda: True if "listening on" in server.log() else None,
            timeout=30,
            what=lambda: f"the server to say it listens; its log:\n{server.log()}",
        )
    finally:
        server.stop()
        server.kill_pods()
    lines = [line for line in server.log().splitlines() if "listening on" in line]
    assert len(lines) == 1, server.log()
    assert f"listening on http://127.0.0.1:{server.port}" in lines[0]
