"""The audit log: its writer, which takes the records the API's audit trail makes
(api/audit_trail.py) off the requests' path and into the store in batches, deleting those past
their retention; and its reading (`GET /api/v1/audit/log`, `…/file`), a System
administrator's.

The writer is one thread per API process, fed by a bounded queue (`QUEUE_SIZE` records): a
request hands its record over and goes on, never waiting on a disk write of its own. When the
queue is full — the store is slower than the calls, or unreachable — a request waits for room
(backpressure) up to `LONGEST_WAIT_SECONDS`, off the event loop; only past that is its record
dropped, logged as an error and counted (`lockstep_audit_records_dropped_total`). A batch the
store refuses is tried again every `RETRY_SECONDS`, so records are not lost to a short outage.
When the server stops, the writer drains the queue (for up to `DRAIN_SECONDS`). With several
API processes each writes its own records: the store is the one log.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterator
from datetime import timedelta

from anyio import to_thread

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.audit import AuditQuery, AuditRecord
from lockstep.domain.clock import Clock
from lockstep.observability.instruments import Instruments
from lockstep.services.access import access_of
from lockstep.store.database import Database

log = logging.getLogger(__name__)

QUEUE_SIZE = 10_000
"""The most records waiting to be written, per API process (about 1 KB each)."""
BATCH_SIZE = 500
"""The most records one transaction writes."""
LONGEST_WAIT_SECONDS = 30.0
"""How long a call waits for room in a full queue before its record is dropped."""
RETRY_SECONDS = 1.0
"""How long the writer waits before trying a refused batch again."""
DRAIN_SECONDS = 10.0
"""How long a stopping server gives the writer to write what is queued."""
PRUNE_EVERY_SECONDS = 3600.0
"""How often the writer deletes the records past their retention."""
PRUNE_BATCH = 5_000
"""The most records one deleting transaction removes (it deletes batch after batch)."""
FILE_BATCH = 1_000
"""Records read per transaction while a file is sent."""

_TENANT = Scope()
"""The audit log belongs to the tenant: only a system-wide rule covers it."""


class AuditWriter:
    """The bounded queue of records and the thread that writes them."""

    def __init__(
        self,
        database: Database,
        *,
        clock: Clock,
        retention: timedelta,
        instruments: Instruments,
        queue_size: int = QUEUE_SIZE,
        longest_wait_seconds: float = LONGEST_WAIT_SECONDS,
    ) -> None:
        self._db = database
        self._clock = clock
        self._retention = retention
        self._instruments = instruments
        self._queue: queue.Queue[AuditRecord] = queue.Queue(maxsize=queue_size)
        self._longest_wait = longest_wait_seconds
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="lockstep-audit", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Write what is queued (for up to `DRAIN_SECONDS`), then end the thread."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=DRAIN_SECONDS + RETRY_SECONDS)
            self._thread = None
        left = self._queue.qsize()
        if left:
            self._instruments.audit_records_dropped.inc(left)
            log.error("the audit log lost %d records: the store did not take them in time", left)

    async def record(self, record: AuditRecord) -> None:
        """Queue `record`; when the queue is full, wait for room off the event loop."""
        try:
            self._queue.put_nowait(record)
            return
        except queue.Full:
            pass
        self._instruments.audit_records_waited.inc()
        if not await to_thread.run_sync(self._put_waiting, record):
            self._instruments.audit_records_dropped.inc()
            log.error(
                "the audit log dropped a record of %s %s by %s: its queue stayed full for %g s",
                record.http_method,
                record.url,
                record.subject,
                self._longest_wait,
            )

    def _put_waiting(self, record: AuditRecord) -> bool:
        try:
            self._queue.put(record, timeout=self._longest_wait)
        except queue.Full:
            return False
        return True

    def _run(self) -> None:
        next_prune = time.monotonic()
        drain_deadline: float | None = None
        while True:
            batch = self._take()
            if batch:
                self._write(batch, drain_deadline)
            if self._stopping.is_set():
                if drain_deadline is None:
                    drain_deadline = time.monotonic() + DRAIN_SECONDS
                if self._queue.empty() or time.monotonic() > drain_deadline:
                    return
                continue
            if time.monotonic() >= next_prune:
                self._prune()
                next_prune = time.monotonic() + PRUNE_EVERY_SECONDS

    def _take(self) -> list[AuditRecord]:
        """The next batch: waits a little for a first record, then takes what is queued."""
        try:
            first = self._queue.get(timeout=0.2)
        except queue.Empty:
            return []
        batch = [first]
        while len(batch) < BATCH_SIZE:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _write(self, batch: list[AuditRecord], drain_deadline: float | None) -> None:
        while True:
            try:
                with self._db.write() as unit:
                    unit.audit.add_many(batch)
                return
            except Exception:
                log.exception("writing %d audit records failed; trying again", len(batch))
            if drain_deadline is not None and time.monotonic() > drain_deadline:
                self._instruments.audit_records_dropped.inc(len(batch))
                log.error("the audit log lost %d records: the store refused them", len(batch))
                return
            time.sleep(RETRY_SECONDS)

    def _prune(self) -> None:
        """Delete the records past their retention, batch after batch."""
        cutoff = self._clock() - self._retention
        try:
            while not self._stopping.is_set():
                with self._db.write(durable=False) as unit:
                    deleted = unit.audit.delete_before(cutoff, limit=PRUNE_BATCH)
                if deleted < PRUNE_BATCH:
                    return
        except Exception:
            log.exception("deleting audit records older than %s failed; will retry", cutoff)


class AuditLogService:
    """Reading the audit log: a System administrator's (`Resource.AUDIT_LOG`)."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def page(self, caller: Principal, query: AuditQuery) -> tuple[list[AuditRecord], int]:
        """The page `query` asks for, and how many records match it in all."""
        with self._db.read() as unit:
            access_of(unit, caller).check(Action.READ, Resource.AUDIT_LOG, _TENANT)
            return unit.audit.page(query), unit.audit.count(query)

    def check_reader(self, caller: Principal) -> None:
        """`Forbidden` unless the caller may read the audit log."""
        with self._db.read() as unit:
            access_of(unit, caller).check(Action.READ, Resource.AUDIT_LOG, _TENANT)

    def in_order(self, query: AuditQuery, *, most: int) -> Iterator[AuditRecord]:
        """At most `most` records of `query` by time, read `FILE_BATCH` at a time, each batch
        in a transaction of its own (check the caller first: `check_reader`)."""
        after = None
        left = most
        while left > 0:
            asked = min(FILE_BATCH, left)
            with self._db.read() as unit:
                found = unit.audit.in_order(query, after=after, limit=asked)
            for record, cursor in found:
                yield record
                after = cursor
            left -= len(found)
            if len(found) < asked:
                return
