"""Pod logs on the Kubernetes runtime: what `GET …/pods/{podName}/logs` returns, read from the
cluster's pod log endpoint (tail, since, timestamps and follow passed on).

The cluster client reads synchronously, so each stream is read by a thread of its own (a
daemon: a stream that waits on the cluster never holds up the server's exit), which hands its
lines to the stream through a small queue: a reader that does not read stops its thread after
`QUEUE_LINES` lines, and a quiet `follow` stream holds its own thread, never one of the pool
the API's other work (the store's calls) runs on. How many streams run at once is bounded by
the API (LOCKSTEP_MAX_LOG_STREAMS). Used by the API when lockstep drives a cluster (the local
runtime's logs are files: log_reader.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
from collections.abc import AsyncIterator, Callable, Generator

from lockstep.domain.clock import Clock
from lockstep.runtimes.base import LogQuery
from lockstep.runtimes.kubernetes.cluster import Cluster

QUEUE_LINES = 64
"""The lines read ahead of a reader, at most."""
_END = object()


class ClusterLogReader:
    def __init__(
        self, cluster: Cluster, *, namespace_of: Callable[[str], str | None], clock: Clock
    ) -> None:
        """`namespace_of`: the namespace of a workload's pods (None: no such workload)."""
        self._cluster = cluster
        self._namespace_of = namespace_of
        self._clock = clock

    async def stream(self, workload_id: str, pod_name: str, query: LogQuery) -> AsyncIterator[str]:
        namespace = await asyncio.to_thread(self._namespace_of, workload_id)
        if namespace is None:
            return
        since_seconds = None
        if query.since is not None:
            since_seconds = max(1, math.ceil((self._clock() - query.since).total_seconds()))
        lines = self._cluster.pod_log(
            namespace,
            pod_name,
            follow=query.follow,
            tail_lines=query.tail_lines,
            since_seconds=since_seconds,
            timestamps=query.timestamps,
        )
        queue: asyncio.Queue[object] = asyncio.Queue(QUEUE_LINES)
        gone = threading.Event()
        reader = threading.Thread(
            target=_read,
            args=(lines, queue, asyncio.get_running_loop(), gone),
            name=f"lockstep-log-{pod_name}",
            daemon=True,
        )
        reader.start()
        try:
            while (line := await queue.get()) is not _END:
                if isinstance(line, BaseException):
                    raise line
                yield str(line)
        finally:
            # A reader gone while a line is awaited leaves the thread reading: it stops at
            # its next line (or the end of the pod), and the cluster's stream is closed then.
            gone.set()
            with contextlib.suppress(asyncio.QueueEmpty):
                queue.get_nowait()  # room for a thread waiting to hand a line over


def _read(
    lines: Generator[str, None, None],
    queue: asyncio.Queue[object],
    loop: asyncio.AbstractEventLoop,
    gone: threading.Event,
) -> None:
    """Hand the stream's lines to `queue` (in `loop`) until they end or the reader is gone."""

    def hand(item: object) -> bool:
        if gone.is_set():
            return False
        future = asyncio.run_coroutine_threadsafe(queue.put(item), loop)
        while not gone.is_set():
            with contextlib.suppress(TimeoutError):
                future.result(timeout=1.0)
                return True
        future.cancel()
        return False

    try:
        for line in lines:
            if not hand(line):
                break
        else:
            hand(_END)
    except Exception as error:  # the cluster's, raised where the stream is read
        hand(error)
    finally:
        with contextlib.suppress(Exception):
            lines.close()
