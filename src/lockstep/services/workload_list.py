"""The workload list as `GET /api/v1/workloads` answers it, as JSON: one read of the store per
page, and each workload's item rendered once per version of it, then remembered.

What the list shows of a workload changes only when the workload is written (every write moves
its `updated_at`) or when what it shows of its project and department changes, so the page is
read first as the (id, version) of each workload (store `page_versions`: that stamp and those
names); only the workloads not remembered at that version are read in full and rendered. Of
what changes with time, the seconds spent Pending and Running are remembered as `PhaseTimes`
(fixed until the workload is written) and read at the request's moment; the idle GPUs are read
from the samples at every request, for the workloads that ask for GPUs (no other has any
sampled).

At most `capacity` items are remembered (LOCKSTEP_LIST_ITEMS_REMEMBERED); past that, the one
rendered longest ago is forgotten. Called by the list route, inline on the event loop with
SQLite and on a worker thread with PostgreSQL (api/calls.py), so what it remembers is shared by
threads: a lookup is one dict read, and a change is made under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock
from lockstep.domain.listing import ListQuery
from lockstep.domain.metrics import PhaseTimes, figures_of
from lockstep.domain.workload import Workload
from lockstep.scheduler.gang.of_workload import gang_of
from lockstep.scheduler.quota.pool_amounts import asked
from lockstep.services.workloads import readable_list_query
from lockstep.store.database import Database
from lockstep.store.workloads import Version

RenderItem = Callable[[Workload], Mapping[str, Any]]
"""A workload's list item without its figures (api/views.py `workload_item`)."""


@dataclass(frozen=True, slots=True)
class _Rendered:
    version: Version
    opening: bytes
    """The item as JSON without its closing brace: its figures follow."""
    times: PhaseTimes
    holds_gpus: bool
    """It asks for GPUs: only then can its devices have been sampled (`idleGpus`)."""


class WorkloadList:
    def __init__(
        self,
        database: Database,
        *,
        render: RenderItem,
        clock: Clock,
        capacity: int,
    ) -> None:
        self._db = database
        self._render = render
        self._clock = clock
        self._capacity = capacity
        self._rendered: dict[str, _Rendered] = {}
        self._lock = threading.Lock()

    def page(self, caller: Principal, query: ListQuery) -> bytes:
        """The body of the page `query` asks, of the workloads `caller` may read."""
        with self._db.read(snapshot=False) as unit:  # each item read with its own version
            scoped = readable_list_query(unit, caller, query)
            if scoped is None:
                return b'{"workloads":[]}'
            versions, more = unit.workloads.page_versions(scoped)
            items = {i: self._rendered.get(i) for i, _ in versions}
            stale = [i for i, v in versions if (r := items[i]) is None or r.version != v]
            if stale:  # one removed with its project since the first read has no item
                fresh = unit.workloads.versioned(stale)
                times = unit.metrics.phase_times(list(fresh))
                items.update(dict.fromkeys(stale), **self._remember(fresh, times))
            now = self._clock()
            sampled = [i for i, r in items.items() if r is not None and r.holds_gpus]
            idle = unit.metrics.idle_gpus(sampled, now) if sampled else {}
        parts = [_with_figures(r, idle.get(i), now) for i, r in items.items() if r is not None]
        body = b'{"workloads":[' + b",".join(parts) + b"]"
        if more:
            body += b',"next":%d' % (query.offset + len(versions))
        return body + b"}"

    def _remember(
        self,
        fresh: Mapping[str, tuple[Version, Workload]],
        times: Mapping[str, PhaseTimes],
    ) -> dict[str, _Rendered]:
        rendered = {
            workload_id: _Rendered(
                version,
                orjson.dumps(self._render(workload))[:-1],
                times[workload_id],
                holds_gpus=workload.allocated_gpus > 0 or asked(gang_of(workload).shape)[0] > 0,
            )
            for workload_id, (version, workload) in fresh.items()
        }
        with self._lock:
            for workload_id, item in rendered.items():
                self._rendered.pop(workload_id, None)  # re-inserted last: forgotten last
                self._rendered[workload_id] = item
            while len(self._rendered) > self._capacity:
                del self._rendered[next(iter(self._rendered))]
        return rendered


def _with_figures(item: _Rendered, idle_gpus: int | None, now: datetime) -> bytes:
    figures = figures_of(item.times, idle_gpus, now)
    return (
        item.opening
        + b',"totalPendingTimeSeconds":%d,"totalRunningTimeSeconds":%d,"idleGpus":%s}'
        % (
            figures.pending_seconds,
            figures.running_seconds,
            b"null" if idle_gpus is None else b"%d" % idle_gpus,
        )
    )
