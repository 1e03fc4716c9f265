"""The Python SDK against a real `lockstep serve`: the sync and the async client submit, wait
and follow a pod's log as it prints, and an idempotent call outlives a restart of the server."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from lockstep import AsyncClient, Client
from lockstep.sdk import Retry
from tests.e2e.test_pod_logs import printed, staged
from tests.support.api import ADMIN_ID, ADMIN_SECRET, poll
from tests.support.requests import distributed, python
from tests.support.server import LiveServer

TICKS = python(
    "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.5)\n"
)


def test_the_sync_client_follows_a_log_while_the_pod_prints(
    live_server: LiveServer, tmp_path: Path
) -> None:
    """The master prints a line and waits for the test to have read it before it prints the
    next: each line arrives while the pod runs, and the iteration ends with the pod."""
    cluster = live_server.api().cluster_id()
    with Client(live_server.url, client_id=ADMIN_ID, client_secret=ADMIN_SECRET) as lockstep:
        created = lockstep.create_distributed(staged(cluster, tmp_path, "chatty", "one", "two"))
        printed(tmp_path, "one")

        def listed() -> bool | None:
            pods = lockstep.pods(created.workload_id)
            return any(p["name"] == "chatty-master-0" for p in pods) or None

        poll(listed, timeout=30, what="the master listed")
        lines = lockstep.logs(created.workload_id, "chatty-master-0", follow=True)
        assert next(lines) == "one\n"
        (tmp_path / "one").touch()
        assert next(lines) == "two\n"
        (tmp_path / "two").touch()
        assert list(lines) == []
        done = lockstep.wait(created.workload_id, phase="Completed", timeout=60, every=0.05)
        assert done["phase"] == "Completed"


def test_the_async_client(live_server: LiveServer) -> None:
    cluster = live_server.api().cluster_id()

    async def scenario() -> list[str]:
        async with AsyncClient(
            live_server.url, client_id=ADMIN_ID, client_secret=ADMIN_SECRET
        ) as lockstep:
            created = await lockstep.create_distributed(
                distributed(cluster, name="awaited", workers=1, args=TICKS)
            )
            await lockstep.wait(created.workload_id, phase="Completed", timeout=60, every=0.05)
            names = [w["name"] async for w in lockstep.list(name="awaited")]
            assert names == ["awaited"]
            assert len(await lockstep.pods(created.workload_id)) == 2
            return [line async for line in lockstep.logs(created.workload_id, "awaited-worker-0")]

    assert asyncio.run(scenario()) == ["tick 0\n", "tick 1\n", "tick 2\n"]


def test_an_idempotent_call_is_retried_across_a_restart_of_the_server(
    live_server: LiveServer,
) -> None:
    with Client(
        live_server.url,
        client_id=ADMIN_ID,
        client_secret=ADMIN_SECRET,
        retry=Retry(attempts=60, first_pause=0.1, longest_pause=0.5),
    ) as lockstep:
        assert lockstep.projects()
        live_server.stop()
        answered = threading.Event()
        projects: list[object] = []

        def ask() -> None:
            projects.extend(lockstep.projects())  # sent while the server is down
            answered.set()

        asker = threading.Thread(target=ask)
        asker.start()
        assert not answered.wait(1.0)  # still retrying: nothing listens
        live_server.start()
        asker.join(timeout=60)
        assert answered.is_set() and projects
