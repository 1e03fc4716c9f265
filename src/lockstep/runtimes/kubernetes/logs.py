"""Pod logs on the Kubernetes runtime: what `GET …/pods/{podName}/logs` returns, read from the
cluster's pod log endpoint (tail, since, timestamps and follow passed on).

The cluster client reads synchronously, so each line is awaited from a worker thread. Used by
the API when lockstep drives a cluster (the local runtime's logs are files: log_reader.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Callable

from lockstep.domain.clock import Clock
from lockstep.runtimes.base import LogQuery
from lockstep.runtimes.kubernetes.cluster import Cluster


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
        try:
            while (line := await asyncio.to_thread(next, lines, None)) is not None:
                yield line
        finally:
            # A reader gone while a line is awaited leaves the generator running in its
            # thread: it is closed when that line (or the end of the pod) comes.
            with contextlib.suppress(ValueError):
                lines.close()
