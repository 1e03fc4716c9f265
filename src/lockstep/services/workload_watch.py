"""The change stream's fan-out (`GET /api/v1/workloads?watch=true`): one feed per API process
reads what changed in the store and hands each open stream what it may see.

The feed polls instead of listening for notifications because the reconciler, which writes
phases and pods, runs in another process and publishes nothing; every write of a workload moves
its `updated_at`, so one query every `POLL_SECONDS` (store/workload_changes.py) finds every
change, on SQLite and PostgreSQL alike, whoever wrote it — one query for all streams, however
many are open, and none while no stream is open (the feed runs only then).

A write is stamped before it commits, so a change may become visible stamped a little earlier
than one already read: the feed reads back `OVERLAP` before the newest stamp it has seen, and
remembers which (workload, stamp) pairs it has already handed out within that window.

Each change is rendered once, as the list shows it (with its figures: time Pending and Running,
idle GPUs), whatever the number of streams that are sent it.

Each stream holds at most `QUEUE_LIMIT` changes not yet sent; one that falls further behind
(its client does not read) is ended, and its client opens a new one for a fresh list. At most
`max_streams` are open at once, and at most `max_streams_per_caller` of one caller, so that one
caller cannot leave the others none (services/stream_slots.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Protocol, TypeVar

from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock
from lockstep.domain.errors import LockstepError
from lockstep.domain.listing import MAX_LIMIT, ListQuery
from lockstep.domain.metrics import WorkloadFigures
from lockstep.domain.workload import Workload
from lockstep.services.stream_slots import Limit, Slot, StreamSlots
from lockstep.services.workloads import WorkloadService
from lockstep.store.database import Database, UnitOfWork

log = logging.getLogger(__name__)

POLL_SECONDS = 0.05
OVERLAP = timedelta(seconds=2)
QUEUE_LIMIT = 1000
RETRY_SECONDS = 0.5
DEFAULT_MAX_STREAMS = 100
DEFAULT_MAX_STREAMS_PER_CALLER = 10
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

T = TypeVar("T")


class StoreRunner(Protocol):
    """How a store call runs from the event loop (api/calls.py `Calls.store`)."""

    def __call__(self, function: Callable[[], T], /) -> Awaitable[T]: ...


class StreamLimitReached(LockstepError):
    """As many change streams are open as the server allows."""


Change = tuple[str, bytes | None]
"""A workload that changed and its list item as JSON, or None where the list no longer shows
it (deleted, or no longer matching) though its caller may read it."""

Render = Callable[[Workload, WorkloadFigures | None], bytes]
"""A workload's list item as JSON (api/views.py `workload_item`)."""

LISTED: Change = ("(listed)", None)
"""Follows a new stream's list, before its first change."""
OVERFLOWED: Change = ("(overflowed)", None)
"""The last item of a stream that fell `QUEUE_LIMIT` changes behind."""


@dataclass(eq=False)
class Subscription:
    """One open stream: its list query (narrowed to what its caller may read) and the changes
    waiting to be sent, the current list first."""

    query: ListQuery
    _watch: WorkloadWatch
    _slot: Slot
    queue: asyncio.Queue[Change] = field(default_factory=asyncio.Queue)
    overflowed: bool = False

    def offer(self, change: Change, *, listing: bool = False) -> None:
        """Queue a change (or, `listing`, an item of the stream's list, which does not count
        towards `QUEUE_LIMIT`)."""
        if self.overflowed:
            return
        if not listing and self.queue.qsize() >= QUEUE_LIMIT:
            self.overflowed = True
            self.queue.put_nowait(OVERFLOWED)
            return
        self.queue.put_nowait(change)

    def shows_project(self, project_id: str) -> bool:
        ids = self.query.project_ids
        return ids is None or project_id in ids

    def close(self) -> None:
        """The stream ended (again is a no-op)."""
        self._watch.release(self)
        self._slot.release()


@dataclass
class _Step:
    """What one read of the store found: each new stream's list, and what changed since."""

    lists: dict[Subscription, list[tuple[Workload, bytes]]]
    changed: list[tuple[Workload, bytes]]
    matching: dict[ListQuery, set[str]]
    newest: datetime
    seen: dict[str, datetime]


class WorkloadWatch:
    def __init__(
        self,
        database: Database,
        workloads: WorkloadService,
        *,
        run_store: StoreRunner,
        render: Render,
        clock: Clock,
        max_streams: int = DEFAULT_MAX_STREAMS,
        max_streams_per_caller: int = DEFAULT_MAX_STREAMS_PER_CALLER,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        """`run_store`: how a store call runs from the event loop (api/calls.py); `render`: a
        workload's list item; `clock`: now, for the figures."""
        self._db = database
        self._workloads = workloads
        self._run_store = run_store
        self._render = render
        self._clock = clock
        self.max_streams = max_streams
        self._shares = StreamSlots(
            "change streams",
            per_caller=Limit(max_streams_per_caller, "LOCKSTEP_MAX_WATCH_STREAMS_PER_CALLER"),
        )
        self._poll_seconds = poll_seconds
        self._streams: set[Subscription] = set()
        self._new: list[Subscription] = []
        self._task: asyncio.Task[None] | None = None
        self._newest: datetime | None = None
        self._seen: dict[str, datetime] = {}

    @property
    def open_streams(self) -> int:
        return len(self._streams)

    @property
    def max_streams_per_caller(self) -> int:
        return self._shares.per_caller.most

    async def open(self, caller: Principal, query: ListQuery) -> Subscription:
        """A new stream of the workloads `query` lists for `caller`; StreamsExhausted (429)
        when `caller` holds `max_streams_per_caller`, StreamLimitReached (503) when
        `max_streams` are open."""
        scoped = await self._run_store(lambda: self._workloads.readable_query(caller, query))
        slot = self._shares.take(caller)  # counted after the await: no race
        if len(self._streams) >= self.max_streams:
            slot.release()
            raise StreamLimitReached(
                f"{self.max_streams} change streams are open, the most this server allows; "
                "close one or retry later"
            )
        subscription = Subscription(scoped, self, slot)
        self._streams.add(subscription)
        self._new.append(subscription)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._feed())
        return subscription

    def release(self, subscription: Subscription) -> None:
        self._streams.discard(subscription)
        if subscription in self._new:
            self._new.remove(subscription)

    async def close(self) -> None:
        """Stop the feed (the server is stopping)."""
        self._streams.clear()
        self._new.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _feed(self) -> None:
        self._newest = None
        self._seen.clear()
        while self._streams:
            new, self._new = self._new, []
            existing = [s for s in self._streams if s not in new]
            queries = {s.query for s in existing}
            try:
                step = await self._run_store(functools.partial(self._read, new, queries))
            except Exception as error:  # the feed outlives a failed read: streams wait on it
                if isinstance(error, LockstepError):
                    log.warning("reading workload changes failed: %s; retrying", error)
                else:
                    log.exception("reading workload changes failed; retrying")
                self._new = new + self._new
                await asyncio.sleep(RETRY_SECONDS)
                continue
            self._newest, self._seen = step.newest, step.seen
            self._deliver(step, existing)
            await asyncio.sleep(self._poll_seconds)

    def _read(self, new: list[Subscription], queries: set[ListQuery]) -> _Step:
        with self._db.read() as unit:
            fresh, newest, seen = self._fresh(unit)
            listed = {s: _every(unit, s.query) for s in new}
            found = unit.workloads.get_many(fresh) if fresh else {}
            changed = [found[i] for i in fresh if i in found]
            ids = [w.id for w in changed]
            matching = {q: unit.workload_changes.matching(ids, q) for q in queries} if ids else {}
            shown = {w.id for w in changed} | {w.id for ws in listed.values() for w in ws}
            figures = unit.metrics.figures(sorted(shown), self._clock())
        rendered: dict[str, bytes] = {}

        def item(workload: Workload) -> tuple[Workload, bytes]:
            if workload.id not in rendered:
                rendered[workload.id] = self._render(workload, figures.get(workload.id))
            return workload, rendered[workload.id]

        lists = {s: [item(w) for w in ws] for s, ws in listed.items()}
        return _Step(lists, [item(w) for w in changed], matching, newest, seen)

    def _fresh(self, unit: UnitOfWork) -> tuple[list[str], datetime, dict[str, datetime]]:
        """The workloads written since the last read, oldest write first (none on the first
        read: the lists of the streams opened with it hold them); the newest stamp seen and
        the stamps seen within `OVERLAP` of it, once this read succeeds."""
        changes = unit.workload_changes
        first = self._newest is None
        newest = self._newest or changes.newest() or EPOCH
        rows = changes.since(newest - OVERLAP)
        fresh = sorted((at, i) for i, at in rows if self._seen.get(i) != at)
        newest = max([newest, *(at for _, at in rows)])
        horizon = newest - OVERLAP
        seen = {i: at for i, at in (*self._seen.items(), *rows) if at > horizon}
        return ([] if first else [i for _, i in fresh]), newest, seen

    def _deliver(self, step: _Step, existing: list[Subscription]) -> None:
        for subscription, workloads in step.lists.items():
            if subscription not in self._streams:
                continue
            for workload, item in workloads:
                subscription.offer((workload.id, item), listing=True)
            subscription.offer(LISTED, listing=True)
        for subscription in existing:
            if subscription not in self._streams:
                continue
            shown = step.matching.get(subscription.query, set())
            for workload, item in step.changed:
                if workload.id in shown:
                    subscription.offer((workload.id, item))
                elif subscription.shows_project(workload.project_id):
                    subscription.offer((workload.id, None))


def _every(unit: UnitOfWork, query: ListQuery) -> list[Workload]:
    """Every workload `query` lists, in its order (its paging aside)."""
    found: list[Workload] = []
    offset = 0
    while True:
        rows, more = unit.workloads.page(replace(query, offset=offset, limit=MAX_LIMIT))
        found.extend(rows)
        if not more:
            return found
        offset += MAX_LIMIT
