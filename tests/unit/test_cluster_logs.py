"""Pod logs read from the cluster (runtimes/kubernetes/logs.py), against a cluster of our own
that prints a first line, then stays quiet until released: quiet `follow` streams, more than
the worker threads of the event loop's default pool, leave that pool to the API's other work;
each stream gets every line; and a stream whose reader goes away closes the cluster's stream."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Generator
from datetime import UTC, datetime
from typing import Any

from lockstep.runtimes.base import LogQuery
from lockstep.runtimes.kubernetes.logs import ClusterLogReader

STREAMS = 12
"""More than the default pool's threads on this machine (min(32, cores + 4))."""


class QuietCluster:
    """Each pod's log: `first`, then, once released, `last`."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.lock = threading.Lock()
        self.waiting = 0
        self.closed = 0

    def pod_log(self, namespace: str, name: str, **_: Any) -> Generator[str, None, None]:
        def lines() -> Generator[str, None, None]:
            try:
                yield "first\n"
                with self.lock:
                    self.waiting += 1
                self.released.wait(60)
                yield "last\n"
            finally:
                with self.lock:
                    self.closed += 1

        return lines()


def reader_of(cluster: QuietCluster) -> ClusterLogReader:
    return ClusterLogReader(
        cluster,  # type: ignore[arg-type]  # the one method the reader calls
        namespace_of=lambda _: "team-a",
        clock=lambda: datetime.now(UTC),
    )


async def collect(lines: AsyncIterator[str]) -> list[str]:
    return [line async for line in lines]


async def until(check: Any, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


def test_quiet_follow_streams_leave_the_default_pool_free() -> None:
    cluster = QuietCluster()
    reader = reader_of(cluster)

    async def scenario() -> list[list[str]]:
        query = LogQuery(follow=True)
        streams = [
            asyncio.create_task(collect(reader.stream("w", f"pod-{i}", query)))
            for i in range(STREAMS)
        ]
        await until(lambda: cluster.waiting == STREAMS, "every stream to wait on the cluster")
        # The API's other work (the store's calls) runs on the default pool: it is free.
        free = await asyncio.wait_for(asyncio.to_thread(lambda: "free"), timeout=30)
        assert free == "free"
        cluster.released.set()
        return await asyncio.gather(*streams)

    assert asyncio.run(scenario()) == [["first\n", "last\n"]] * STREAMS
    assert cluster.closed == STREAMS


def test_a_stream_whose_reader_goes_closes_the_clusters_stream() -> None:
    cluster = QuietCluster()
    reader = reader_of(cluster)

    async def scenario() -> None:
        lines = reader.stream("w", "pod-0", LogQuery(follow=True))
        assert await anext(lines) == "first\n"
        await until(lambda: cluster.waiting == 1, "the stream to wait on the cluster")
        await lines.aclose()  # type: ignore[attr-defined]
        cluster.released.set()
        await until(lambda: cluster.closed == 1, "the cluster's stream to be closed")

    asyncio.run(scenario())
