"""Watches of the jobs and pods lockstep created on the cluster, and of the events about them,
each change turned into the id of the workload to look at again (the object's
`lockstep.io/workload-id` label; for an event, the workload of the object it is about).

The watches only wake the reconciler up; it reads what it needs afresh. A watch resumes from
the last resourceVersion it saw, and across a 410 Gone the cluster client lists again and
reports the difference (see `Cluster.watch`), so no change is lost. A kind the cluster does
not serve (an operator not installed) is retried now and then, and said so in the log.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from lockstep.domain.labels import WORKLOAD_ID
from lockstep.runtimes.kubernetes.cluster import Cluster, Manifest, WatchEventType
from lockstep.runtimes.kubernetes.cluster_errors import ClusterError
from lockstep.runtimes.kubernetes.identity import MANAGED_BY, MANAGER
from lockstep.runtimes.kubernetes.kinds import JOB_KINDS, SINGLE_POD_KINDS

log = logging.getLogger(__name__)

LABELLED: tuple[tuple[str, str], ...] = (
    *sorted(
        {
            (kind.api_version, kind.kind)
            for kind in (*JOB_KINDS.values(), *SINGLE_POD_KINDS.values())
        }
    ),
    ("v1", "Pod"),
)
"""The kinds lockstep creates (and labels) whose changes can change a workload's phase or pods."""


class Watches:
    def __init__(
        self,
        cluster: Cluster,
        on_change: Callable[[str], None],
        *,
        window_seconds: float = 5.0,
        retry_seconds: float = 5.0,
    ) -> None:
        """`window_seconds`: how long one watch request lasts (the watch is asked again,
        from where it was, after each: also how soon `stop` takes effect)."""
        self._cluster = cluster
        self._on_change = on_change
        self._window = window_seconds
        self._retry = retry_seconds
        self._stopping = threading.Event()
        self._owners: dict[str, str] = {}
        """uid of a job or pod → its workload's id, for the events about it."""

    def start(self) -> None:
        for api_version, kind in LABELLED:
            self._spawn(api_version, kind, {MANAGED_BY: MANAGER}, self._labelled)
        self._spawn("v1", "Event", None, self._about)

    def _spawn(
        self,
        api_version: str,
        kind: str,
        labels: dict[str, str] | None,
        workload_of: Callable[[Manifest], str | None],
    ) -> None:
        thread = threading.Thread(
            target=self._watch,
            args=(api_version, kind, labels, workload_of),
            name=f"watch-{kind}",
            daemon=True,
        )
        thread.start()

    def _labelled(self, item: Manifest) -> str | None:
        metadata = item.get("metadata") or {}
        workload_id = (metadata.get("labels") or {}).get(WORKLOAD_ID)
        if workload_id is not None and metadata.get("uid"):
            self._owners[str(metadata["uid"])] = str(workload_id)
        return None if workload_id is None else str(workload_id)

    def _about(self, event: Manifest) -> str | None:
        """The workload of the job or pod an event is about (None: not one of lockstep's)."""
        involved = event.get("involvedObject") or event.get("regarding") or {}
        return self._owners.get(str(involved.get("uid")))

    def stop(self) -> None:
        """Stop watching, without waiting: a watch request under way ends with its window
        (what it reports meanwhile goes to a reconciler that has stopped, and is dropped)."""
        self._stopping.set()

    def _watch(
        self,
        api_version: str,
        kind: str,
        labels: dict[str, str] | None,
        workload_of: Callable[[Manifest], str | None],
    ) -> None:
        held: dict[str, Manifest] = {}
        version: str | None = None
        while not self._stopping.is_set():
            try:
                for change in self._cluster.watch(
                    api_version,
                    kind,
                    None,
                    labels=labels,
                    resource_version=version,
                    known=list(held.values()),
                    timeout_seconds=self._window,
                ):
                    metadata = change.object.get("metadata") or {}
                    key = str(metadata.get("uid") or f"{change.namespace}/{change.name}")
                    if change.type is WatchEventType.DELETED:
                        held.pop(key, None)
                        self._owners.pop(key, None)
                    else:
                        held[key] = change.object
                    version = change.resume_version or None
                    workload_id = workload_of(change.object)
                    if workload_id is not None:
                        self._on_change(workload_id)
                    if self._stopping.is_set():
                        return
            except ClusterError as error:
                log.warning("watching %s failed: %s; trying again", kind, error)
                self._stopping.wait(self._retry)
