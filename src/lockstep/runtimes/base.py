"""The one small interface every runtime implements, and what it reports back.

Invariants every implementation keeps: `start` creates only the pods that do not exist yet;
`stop` and `delete` are idempotent and act only on what exists; `render` has no side effects
and returns exactly what `start` would run (it is also the dry run).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from lockstep.domain.cluster import Assignment, Node
from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.workload import PodPhase, PortBinding, Workload


@dataclass(frozen=True, slots=True)
class PodStatus:
    """A pod as the runtime sees it now."""

    name: str
    role: str
    index: int
    phase: PodPhase
    image: str
    node_name: str
    ip: str | None = None
    created_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    exit_code: int | None = None
    restarts: int = 0
    message: str = ""
    stopped: bool = False
    """The pod ended because lockstep stopped it (it did not fail by itself)."""
    reason: str | None = None
    """Why it ended, when that is more than its exit code: `OOMKilled`."""
    gpus: tuple[int, ...] = ()
    """The GPU devices it was given."""
    scheduled: bool = True
    """False for a pod of an elastic workload still waiting for room (it has no process)."""
    ready: bool = False
    """Running and passing its readiness probe, or running without one."""
    ports: tuple[PortBinding, ...] = ()
    unapplied: tuple[str, ...] = ()
    """What its spec asks that the runtime does not apply (reported once, as a warning)."""
    explained: bool = False
    """Its message says why it ended in its own words (a termination message), so the last
    lines of its log need not."""


OOM_KILLED = "OOMKilled"


@dataclass(frozen=True, slots=True)
class LogQuery:
    """Which of a pod's log lines to return, and how."""

    tail_lines: int | None = None
    """Only the last this many (of those since `since`)."""
    since: datetime | None = None
    timestamps: bool = False
    """Start each line with the moment it was printed (RFC 3339)."""
    follow: bool = False
    """Then stream every new line until the pod ends."""


class PodLogs(Protocol):
    """Reads what pods printed; used by the API, apart from the runtime that runs them."""

    def stream(self, workload_id: str, pod_name: str, query: LogQuery) -> AsyncIterator[str]:
        """The chosen lines, each ending in a newline (none when there is no such pod), in
        pieces of whole lines; the next piece is read only when it is asked for, so that a
        slow reader holds a piece, never the log."""
        ...


class PodStartError(Exception):
    """A pod could not be started for a reason retrying will not fix (shown to the user)."""


class Runtime(Protocol):
    name: str

    def render(self, workload: Workload, plan: ReplicaPlan) -> dict[str, Any]:
        """What `start` would run, without running anything."""
        ...

    def waiting_for(self, workload: Workload, plan: ReplicaPlan) -> str | None:
        """What the workload waits for before it may be admitted, beside room (a claim its
        pods mount that does not exist yet); None when nothing."""
        ...

    def start(
        self, workload: Workload, plan: ReplicaPlan, placement: Mapping[str, Assignment] | None
    ) -> None:
        """Create every pod of `plan` that does not exist yet, where `placement` puts it; a pod
        `placement` leaves out waits (None: every pod, on the first node)."""
        ...

    def observe(self, workload_id: str) -> list[PodStatus]:
        """The pods of a workload as they are now (empty when it has none)."""
        ...

    def restart(
        self, workload: Workload, plan: ReplicaPlan, only: Collection[str] | None = None
    ) -> None:
        """Run every pod of a gang whose pods have all ended again: a new attempt of each,
        with the same identities and ports; `only`: just these pods, which have ended (a
        training's or workspace's)."""
        ...

    def log_tail(self, workload_id: str, pod_name: str, *, lines: int) -> list[str]:
        """The last lines a pod printed (none when there is no such pod)."""
        ...

    def stop(self, workload_id: str, *, grace_seconds: float) -> bool:
        """Ask every running pod to stop; force it after the grace period. True when none runs."""
        ...

    def delete(self, workload_id: str, *, keep_logs: bool = False) -> None:
        """Forget a workload whose pods have stopped; a no-op when nothing is left. With
        `keep_logs` (a suspended workload) what the pods printed stays readable, and their
        next run appends to it."""
        ...

    def workload_ids(self) -> set[str]:
        """Every workload the runtime holds pods of (for recovery)."""
        ...

    def nodes(self) -> Sequence[Node]:
        """The nodes pods are placed on, with their capacities."""
        ...

    def close(self) -> None: ...
