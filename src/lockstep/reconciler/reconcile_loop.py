"""What every backend's reconciler shares: a thread of its own and its lifecycle, the run loop
(recovery on start, then passes over the ids taken from the queue, with a periodic resync of
every live workload), auto-deletion after completion, and writing a pass's changes in one
transaction. A backend's reconciler (runtimes/local/reconciler.py,
runtimes/kubernetes/reconciler.py) says how it recovers, what a resync adds and what a pass
does.

Level-triggered: a pass looks only at the stored workload and the backend's view, never at
what triggered it, so a missed or repeated wake-up is harmless.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import datetime, timedelta

from lockstep.domain.clock import Clock
from lockstep.domain.workload import Workload, WorkloadUpdate
from lockstep.reconciler.passes import write
from lockstep.reconciler.queue import WorkQueue
from lockstep.store.database import Database


class ReconcileLoop(ABC):
    """A reconciler's loop over the queue `queue` of the workloads stored in `database`."""

    thread_name = "lockstep-reconciler"

    def __init__(
        self,
        database: Database,
        *,
        clock: Clock,
        queue: WorkQueue,
        resync_seconds: float,
        min_pass_seconds: float = 0.0,
    ) -> None:
        """`resync_seconds`: how often every live workload is looked at again;
        `min_pass_seconds`: the least time between two passes (under load a pass then takes
        everything queued meanwhile)."""
        self._db = database
        self._clock = clock
        self._queue = queue
        self._resync_seconds = resync_seconds
        self._min_pass_seconds = min_pass_seconds
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Run on a thread of its own (see `run`)."""
        self._thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._queue.close()
        if self._thread is not None:
            self._thread.join(timeout=30)

    @property
    def running(self) -> bool:
        """Whether its thread runs: started, and not ended (for readiness, /readyz)."""
        return self._thread is not None and self._thread.is_alive()

    def run(self) -> None:
        """Recover, then reconcile until the queue is closed."""
        self.recover()
        next_resync = time.monotonic() + self._resync_seconds
        last_pass = 0.0
        while True:
            # Passes come at most every min_pass_seconds: under load a pass takes everything
            # queued meanwhile and writes it in one transaction; when idle there is no delay.
            if not self._queue.pause(last_pass + self._min_pass_seconds - time.monotonic()):
                return
            keys = self._queue.take(timeout=max(next_resync - time.monotonic(), 0.0))
            if keys is None:
                return
            last_pass = time.monotonic()
            if not keys and time.monotonic() >= next_resync:
                self.resync()
                keys = set(self._ids_to_reconcile())
                next_resync = time.monotonic() + self._resync_seconds
            self.run_pass(keys)

    @abstractmethod
    def recover(self) -> None:
        """On start: bring the backend in step with the store and queue every live workload."""

    def resync(self) -> None:
        """At each periodic resync, before every live workload is queued: what else the
        backend looks at again (nothing by default)."""
        return

    @abstractmethod
    def run_pass(self, keys: set[str]) -> None:
        """Reconcile every key (there may be none) and write what changed in one transaction."""

    def _ids_to_reconcile(self) -> list[str]:
        with self._db.read() as unit:
            return unit.workloads.ids_to_reconcile()

    # --- what every pass does -------------------------------------------------------------

    def _write(self, changes: Sequence[tuple[Workload, WorkloadUpdate]]) -> bool:
        """Write a pass's changes in one transaction; False (each queued again) on failure."""
        return write(self._db, self._queue, self._clock, changes)

    def _auto_delete_at(self, workload: Workload) -> datetime | None:
        """When a workload that is ending now is deleted (its
        autoDeletionTimeAfterCompletionSeconds after now), queued again for then; None when it
        asks for no deletion, or had already ended."""
        seconds = workload.request.auto_deletion_seconds
        if seconds is None or workload.actual_phase.is_terminal:
            return None
        self._queue.add_after(workload.id, float(seconds))
        return self._clock() + timedelta(seconds=seconds)

    def _due_for_deletion(self, workload: Workload) -> bool:
        """Whether an ended workload's auto-deletion time has come; if not yet, it is queued
        again for then."""
        if workload.auto_delete_at is None:
            return False
        remaining = (workload.auto_delete_at - self._clock()).total_seconds()
        if remaining > 0:
            self._queue.add_after(workload.id, remaining)
        return remaining <= 0
