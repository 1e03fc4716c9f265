"""`lockstep serve` with several API processes (LOCKSTEP_API_PROCESSES, PostgreSQL): they all
accept on the server's one socket, a workload accepted by any of them is reconciled by the one
reconciler process, one that dies is replaced while the others serve, `/metrics` counts every
process's requests, and no process outlives the server, however it ends."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import fresh_database, running
from tests.support.api import poll
from tests.support.raw_http import raw_exchange
from tests.support.requests import distributed
from tests.support.server import LiveServer

API_PROCESSES = 2


@pytest.fixture
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    with (
        fresh_database(request, "postgresql", tmp_path) as url,
        running(
            LiveServer(tmp_path / "data", url, settings={"API_PROCESSES": str(API_PROCESSES)})
        ) as live,
    ):
        yield live


def children(pid: int) -> set[int]:
    """The processes `pid` started (from whichever of its threads)."""
    tasks = Path(f"/proc/{pid}/task").glob("*/children")
    found: set[int] = set()
    for task in tasks:
        try:
            found |= {int(child) for child in task.read_text().split()}
        except FileNotFoundError:
            continue  # the thread ended meanwhile
    return found


def listening_inode(port: int) -> str | None:
    """The inode of the socket listening on 127.0.0.1:`port` (from /proc/net/tcp)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state, inode = fields[1], fields[3], fields[9]
        if local == f"0100007F:{port:04X}" and state == "0A":  # 0A: LISTEN
            return inode
    return None


def holds_socket(pid: int, inode: str) -> bool:
    try:
        descriptors = list(Path(f"/proc/{pid}/fd").iterdir())
    except FileNotFoundError:
        return False
    for descriptor in descriptors:
        try:
            if str(descriptor.readlink()) == f"socket:[{inode}]":
                return True
        except FileNotFoundError:
            continue
    return False


def api_processes(server: LiveServer) -> set[int]:
    """The server's children that accept on its socket."""
    assert server.process is not None
    inode = listening_inode(server.port)
    assert inode is not None, "nothing listens on the server's port"
    return {pid for pid in children(server.process.pid) if holds_socket(pid, inode)}


def reconciler_process(server: LiveServer) -> int | None:
    assert server.process is not None
    for pid in children(server.process.pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except FileNotFoundError:
            continue
        if b"lockstep.runtimes.local.controllers" in command:
            return pid
    return None


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def readiness(server: LiveServer) -> tuple[int, str]:
    response = httpx.get(f"{server.url}/readyz", timeout=5)
    return response.status_code, response.json()["reconciler"]


def test_every_api_process_accepts_and_the_reconciler_runs_what_any_accepted(
    server: LiveServer,
) -> None:
    serving = poll(
        lambda: found if len(found := api_processes(server)) == API_PROCESSES else None,
        timeout=20,
        what="the API processes to accept on the server's socket",
    )
    reconciler = reconciler_process(server)
    assert reconciler is not None and reconciler not in serving
    assert readiness(server) == (200, "running")
    api = server.api()
    cluster = api.cluster_id()
    # Each workload over a connection of its own, so that the API processes share them.
    ids = []
    for index in range(6):
        with httpx.Client(base_url=server.url, timeout=30) as client:
            response = client.post(
                "/api/v1/workloads/distributed",
                json=distributed(cluster, name=f"train-{index}", workers=1),
                headers=api.headers(),
            )
        assert response.status_code == 202, response.text
        ids.append(response.json()["workloadId"])
    for workload_id in ids:
        assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"


def test_metrics_count_the_requests_of_every_api_process(server: LiveServer) -> None:
    api = server.api()
    asked = 30
    for _ in range(asked):
        with httpx.Client(base_url=server.url, timeout=30) as client:
            answered = client.get("/api/v1/workloads/count", headers=api.headers())
            assert answered.status_code == 200
    exposition = api.get("/metrics").text
    pattern = re.compile(
        r'^lockstep_http_requests_total\{method="GET",route="/api/v1/workloads/count",'
        r'status="200"\} (\S+)$',
        re.MULTILINE,
    )
    counted = pattern.search(exposition)
    assert counted is not None, exposition
    assert float(counted.group(1)) == asked


def test_every_api_process_answers_a_url_too_long_in_runais_error_body(
    server: LiveServer,
) -> None:
    """The API processes speak lockstep's HTTP protocol too (api/http_protocol.py)."""
    request = b"GET /api/v1/workloads?search=" + b"x" * 70_000 + b" HTTP/1.1\r\nHost: l\r\n\r\n"
    for _ in range(2 * API_PROCESSES):  # whichever process accepts the connection
        status, headers, body = raw_exchange(server, request)
        assert (status, headers["content-type"]) == (400, "application/json"), body[:200]
        assert b"url: must be at most 65535 bytes" in body


def test_a_killed_api_process_is_replaced_while_the_others_serve(server: LiveServer) -> None:
    first = poll(
        lambda: found if len(found := api_processes(server)) == API_PROCESSES else None,
        timeout=20,
        what="the API processes",
    )
    victim = min(first)
    os.kill(victim, signal.SIGKILL)
    api = server.api()
    for _ in range(10):  # the ones left answer meanwhile
        assert api.get("/api/v1/workloads/count").status_code == 200
    now = poll(
        lambda: (
            found
            if len(found := api_processes(server)) == API_PROCESSES and victim not in found
            else None
        ),
        timeout=30,
        what="a new API process in place of the one killed",
    )
    assert len(now & first) == API_PROCESSES - 1
    created = api.create(distributed(api.cluster_id(), name="after", workers=1))
    assert api.wait_for(created["workloadId"], {"Completed", "Failed"})["phase"] == "Completed"


def test_a_killed_reconciler_is_restarted_and_readiness_says_so_meanwhile(
    server: LiveServer,
) -> None:
    first = poll(lambda: reconciler_process(server), timeout=20, what="the reconciler process")
    poll(lambda: readiness(server) == (200, "running") or None, timeout=20, what="readiness")
    os.kill(first, signal.SIGKILL)
    # It is started again a second later: until then the store has no reconciler.
    poll(
        lambda: readiness(server) == (503, "not running") or None,
        timeout=10,
        what="/readyz to say that the reconciler does not run",
    )
    poll(
        lambda: readiness(server) == (200, "running") or None,
        timeout=30,
        what="/readyz to say that the reconciler runs again",
    )
    second = reconciler_process(server)
    assert second is not None and second != first
    api = server.api()
    created = api.create(distributed(api.cluster_id(), name="after", workers=1))
    assert api.wait_for(created["workloadId"], {"Completed", "Failed"})["phase"] == "Completed"


@pytest.mark.parametrize("ending", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_no_process_outlives_the_server(server: LiveServer, ending: signal.Signals) -> None:
    serving = poll(
        lambda: found if len(found := api_processes(server)) == API_PROCESSES else None,
        timeout=20,
        what="the API processes",
    )
    reconciler = poll(lambda: reconciler_process(server), timeout=20, what="the reconciler")
    assert server.process is not None
    everyone = children(server.process.pid)
    assert serving | {reconciler} <= everyone
    server.stop(ending)
    poll(
        lambda: True if not [pid for pid in everyone if alive(pid)] else None,
        timeout=30,
        what=lambda: f"the server's processes to end; alive: {[p for p in everyone if alive(p)]}",
    )
