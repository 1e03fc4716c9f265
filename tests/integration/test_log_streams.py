"""Pod logs are shared fairly and cost bounded memory, against a real `lockstep serve` over real
HTTP: a caller past its share of log streams (`LOCKSTEP_MAX_LOG_STREAMS_PER_CALLER`) is refused
with 429 while another caller is served, past the server's (`LOCKSTEP_MAX_LOG_STREAMS`) every
caller is, and a stream gives its place back when its client leaves and when it ends; and many
`follow` streams whose clients read nothing of a pod that printed a lot keep the server's
memory within a bound, while `/readyz` still answers."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import running
from tests.support.access import live_application
from tests.support.api import Api, poll
from tests.support.requests import python, shared, single_pod
from tests.support.server import LiveServer

WAIT = 60.0


def logs_path(workload_id: str, pod: str) -> str:
    return f"/api/v1/workloads/{workload_id}/pods/{pod}/logs"


def training(api: Api, name: str, code: str, **spec: Any) -> tuple[str, str]:
    """A running training of one pod running `code`; its id and its pod's name."""
    body = single_pod(api.cluster_id(), name=name, args=python(code), **spec)
    workload_id = str(api.create(body, kind="trainings")["workloadId"])
    api.wait_for(workload_id, ["Running"])
    pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
    return workload_id, str(pods[0]["name"])


def printed(api: Api, workload_id: str, pod: str, line: str) -> None:
    """Wait until the pod's log holds `line`."""

    def found() -> bool | None:
        response = api.get(logs_path(workload_id, pod), params={"tailLines": 5})
        return True if response.status_code == 200 and line in response.text else None

    poll(found, timeout=WAIT, what=f"{line!r} in the log of {pod}")


class Follower:
    """A `follow` stream of a pod's log, read on a thread of its own until it ends or is
    closed (its client leaves)."""

    def __init__(self, api: Api, path: str) -> None:
        self.client = httpx.Client(
            base_url=str(api.client.base_url), timeout=httpx.Timeout(30.0, read=None)
        )
        request = self.client.build_request(
            "GET", path, params={"follow": "true"}, headers=api.headers()
        )
        self.response = self.client.send(request, stream=True)
        self.text = ""
        self.ended = threading.Event()
        self._thread: threading.Thread | None = None
        if self.response.status_code != 200:
            self.response.read()
            self.client.close()
            self.ended.set()
            return
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for piece in self.response.iter_text():
                self.text += piece
        except (httpx.HTTPError, RuntimeError):
            pass  # closed by the test
        finally:
            self.ended.set()

    def refusal(self) -> dict[str, Any]:
        """The refusal's body, checked to be Run:ai's 429 with Retry-After."""
        assert self.response.status_code == 429, self.response.text
        assert int(self.response.headers["retry-after"]) >= 1
        body: dict[str, Any] = self.response.json()
        assert body["code"] == 429
        return body

    def close(self) -> None:
        """Leave: the connection is shut down at once (closing it alone would wait for the
        reading thread's `recv`, which waits for the pod's next line)."""
        stream = self.response.extensions.get("network_stream")
        connection = None if stream is None else stream.get_extra_info("socket")
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self.response.close()
        self.client.close()
        if self._thread is not None:
            self._thread.join(timeout=WAIT)
            assert not self._thread.is_alive()


@pytest.fixture
def followers() -> Iterator[list[Follower]]:
    opened: list[Follower] = []
    yield opened
    for follower in opened:
        follower.close()


def follow(api: Api, path: str, followers: list[Follower]) -> Follower:
    follower = Follower(api, path)
    followers.append(follower)
    return follower


@pytest.fixture
def shares_of_three(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    """Three log streams a caller, five in all."""
    settings = {"MAX_LOG_STREAMS_PER_CALLER": "3", "MAX_LOG_STREAMS": "5"}
    with running(LiveServer(tmp_path / "data", sqlite_url, settings=settings)) as server:
        yield server


def test_a_caller_past_its_share_is_refused_while_another_is_served_until_it_leaves(
    shares_of_three: LiveServer, followers: list[Follower]
) -> None:
    server = shares_of_three
    api = server.api()
    other = live_application(server, "researcher", "L1 researcher", "project:1")
    workload_id, pod = training(
        api, "talker", "import time; print('up', flush=True); time.sleep(600)"
    )
    path = logs_path(workload_id, pod)
    printed(api, workload_id, pod, "up")

    mine = [follow(api, path, followers) for _ in range(3)]
    poll(
        lambda: all("up\n" in f.text for f in mine) or None, timeout=WAIT, what="each stream's line"
    )
    message = follow(api, path, followers).refusal()["message"]
    assert "3 log streams of this caller are open" in message
    assert "LOCKSTEP_MAX_LOG_STREAMS_PER_CALLER" in message
    assert api.get(path).status_code == 429  # an answer without follow is a stream too

    # Another caller is served beside it, up to what the server holds in all.
    theirs = [follow(other, path, followers) for _ in range(2)]
    poll(lambda: all("up\n" in f.text for f in theirs) or None, timeout=WAIT, what="theirs")
    message = follow(other, path, followers).refusal()["message"]
    assert "5 log streams are open" in message and "LOCKSTEP_MAX_LOG_STREAMS" in message

    # Clients that leave give their places back.
    for follower in mine:
        follower.close()

    def admitted() -> Follower | None:
        follower = follow(api, path, followers)
        return follower if follower.response.status_code == 200 else None

    poll(admitted, timeout=WAIT, what="a stream of the first caller once its others left")
    other.client.close()


def test_a_stream_that_ends_gives_its_place_back(
    shares_of_three: LiveServer, followers: list[Follower], tmp_path: Path
) -> None:
    server = shares_of_three
    api = server.api()
    go = tmp_path / "go"
    code = (
        "import os, time\n"
        "print('waiting', flush=True)\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.1)\n"
        "print('done', flush=True)"
    )
    workload_id, pod = training(api, "ender", code, storage=shared(tmp_path))
    path = logs_path(workload_id, pod)
    printed(api, workload_id, pod, "waiting")
    streams = [follow(api, path, followers) for _ in range(3)]
    assert follow(api, path, followers).response.status_code == 429

    go.touch()
    for stream in streams:
        assert stream.ended.wait(WAIT), "the stream did not end with its pod"
        assert stream.text == "waiting\ndone\n"
    poll(
        lambda: True if api.get(path).status_code == 200 else None,
        timeout=WAIT,
        what="a log answered once the streams ended",
    )


UNREAD_STREAMS = 100
LOG_BYTES = 8 * 1024 * 1024
RSS_BOUND_BYTES = 64 * 1024 * 1024
"""What 100 unread follow streams of a pod that printed 8 MiB may add to the server's resident
memory (docs/local-runtime.md, "Logs"): a stream holds a few pieces of 16 KiB and what the
connection buffers, 15 MiB for the 100 as measured; the reader of old held each whole log,
346 MiB for 30."""


@pytest.fixture
def many_streams(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    settings = {
        "MAX_LOG_STREAMS_PER_CALLER": str(UNREAD_STREAMS),
        "MAX_LOG_STREAMS": str(UNREAD_STREAMS),
    }
    with running(LiveServer(tmp_path / "data", sqlite_url, settings=settings)) as server:
        yield server


def resident_bytes(server: LiveServer) -> int:
    """The server process's resident memory (VmRSS)."""
    assert server.process is not None
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def unread_follow(server: LiveServer, api: Api, path: str) -> tuple[socket.socket, int]:
    """A `follow` request on a connection that, once the answer's head and some of its body
    came, reads no more (with a small receive buffer, so that the server soon has to wait);
    the connection and the answer's status."""
    connection = socket.socket()
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    connection.settimeout(30)
    connection.connect(("127.0.0.1", server.port))
    connection.sendall(
        f"GET {path}?follow=true HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {api.token}\r\n\r\n".encode()
    )
    received = b""
    while b"\r\n\r\n" not in received:
        received += connection.recv(4096) or b"\r\n\r\n"
    status = int(received.split(b" ", 2)[1])
    while status == 200 and len(received.partition(b"\r\n\r\n")[2]) < 2048:
        received += connection.recv(4096)
    return connection, status


def test_unread_follow_streams_of_a_long_log_keep_memory_bounded(many_streams: LiveServer) -> None:
    server = many_streams
    api = server.api()
    line = "x" * 99
    code = (
        "import sys, time\n"
        f"for n in range({LOG_BYTES // 128}): sys.stdout.write(f'{{n:08}} {line}\\n')\n"
        "print('printed', flush=True)\n"
        "while True: print('still here', flush=True); time.sleep(0.5)"
    )
    workload_id, pod = training(api, "chatty", code)
    path = logs_path(workload_id, pod)
    printed(api, workload_id, pod, "printed")
    whole = api.get(path)  # and the server has served a long log once before it is measured
    assert whole.status_code == 200 and whole.text.startswith("00000000 ")
    before = resident_bytes(server)

    connections: list[socket.socket] = []
    try:
        for _ in range(UNREAD_STREAMS):
            connection, status = unread_follow(server, api, path)
            connections.append(connection)
            assert status == 200
        connection, refused = unread_follow(server, api, path)
        connection.close()
        assert refused == 429  # the server's own limit, set to the streams above
        ready = httpx.get(f"{server.url}/readyz", timeout=30.0)
        assert ready.status_code == 200, ready.text
        held = 0
        for _ in range(20):  # while the server fills what it may send
            held = max(held, resident_bytes(server))
            time.sleep(0.1)
        assert held - before < RSS_BOUND_BYTES, (before, held)
    finally:
        for connection in connections:
            connection.close()

    def admitted() -> bool | None:
        return True if api.get(path, params={"tailLines": 1}).status_code == 200 else None

    poll(admitted, timeout=WAIT, what="a log answered once the unread streams were closed")
    assert resident_bytes(server) - before < RSS_BOUND_BYTES
