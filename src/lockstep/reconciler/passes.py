"""One reconcile pass, whichever runtime: read the workloads named, decide on each (a failure
retried later, the others unaffected), and write every decision in one transaction. Used by
the local runtime's reconciler (runtimes/local/reconciler.py) and the Kubernetes one
(runtimes/kubernetes/reconciler.py), through reconcile_loop.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

from lockstep.domain.clock import Clock
from lockstep.domain.errors import LockstepError
from lockstep.domain.workload import Workload, WorkloadUpdate
from lockstep.reconciler.queue import WorkQueue
from lockstep.store.database import Database

log = logging.getLogger(__name__)

Change = tuple[Workload, WorkloadUpdate]


def decide_all(
    database: Database,
    queue: WorkQueue,
    keys: Iterable[str],
    decide: Callable[[Workload], WorkloadUpdate | None],
) -> list[Change]:
    """What to write about each workload of `keys` (those gone from the store are skipped;
    a workload whose decision failed is queued again)."""
    keys = sorted(keys)
    try:
        with database.read() as unit:
            found = unit.workloads.get_many(keys)
    except LockstepError as error:
        log.warning("reading workloads failed: %s; retrying", error)
        for workload_id in keys:
            queue.add_after(workload_id, 1.0)
        return []
    changes: list[Change] = []
    for workload_id in sorted(found):
        try:
            change = decide(found[workload_id])
        except LockstepError as error:
            log.warning("reconciling %s failed: %s; retrying", workload_id, error)
            queue.add_after(workload_id, 1.0)
        except Exception:
            log.exception("reconciling %s failed; retrying", workload_id)
            queue.add_after(workload_id, 5.0)
        else:
            if change is not None and not change.is_empty:
                changes.append((found[workload_id], change))
    return changes


def write(database: Database, queue: WorkQueue, clock: Clock, changes: Sequence[Change]) -> bool:
    """One transaction for every change; on failure each workload is queued again (False).
    Not durable: everything written here is observed again after a crash."""
    if not changes:
        return True
    try:
        with database.write(durable=False) as unit:
            now = clock()
            for workload, change in changes:
                unit.workloads.apply(workload, change, now)
    except Exception:
        log.exception("writing %d workload changes failed; retrying them", len(changes))
        for workload, _ in changes:
            queue.add_after(workload.id, 1.0)
        return False
    return True
