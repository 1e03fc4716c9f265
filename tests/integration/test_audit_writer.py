"""The audit writer on both stores: what is queued is written, and written before the server
stops; a call finding the queue full waits for room, and its record is dropped and counted
only past the longest wait; records past their retention are deleted."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from lockstep.domain.audit import (
    AuditAction,
    AuditQuery,
    AuditRecord,
    AuditResult,
    AuditSubjectType,
)
from lockstep.observability.instruments import Instruments
from lockstep.services.audit import AuditWriter
from lockstep.store.database import Database
from tests.support.api import poll

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
EVERYTHING = AuditQuery(start=NOW - timedelta(days=3650), end=NOW + timedelta(days=1), limit=10_000)


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    store = Database(database_url)
    store.migrate()
    yield store
    store.dispose()


def record(subject: str, *, at: datetime = NOW) -> AuditRecord:
    return AuditRecord(
        id=str(uuid.uuid4()),
        timestamp=at,
        subject=subject,
        subject_type=AuditSubjectType.USER,
        action=AuditAction.CREATE,
        result=AuditResult.SUCCEEDED,
        http_method="POST",
        url="/api/v1/org-unit/projects",
        http_status_code=201,
        source_ip="127.0.0.1",
        request_id=str(uuid.uuid4()),
        entity_type="project",
        metadata={"note": "kept"},
    )


def subjects(database: Database) -> list[str]:
    with database.read() as unit:
        return [found.subject for found in unit.audit.page(EVERYTHING)]


def counted(instruments: Instruments, name: str) -> float:
    assert instruments.registry is not None
    return instruments.registry.get_sample_value(f"lockstep_audit_records_{name}_total") or 0.0


def writer_of(database: Database, instruments: Instruments, **given: float) -> AuditWriter:
    return AuditWriter(
        database,
        clock=lambda: NOW,
        retention=timedelta(days=90),
        instruments=instruments,
        **given,  # type: ignore[arg-type]
    )


def test_what_is_queued_is_written_and_kept_whole(database: Database) -> None:
    writer = writer_of(database, Instruments())
    names = [f"user-{index}@example.com" for index in range(1200)]  # more than a batch

    async def calls() -> None:
        for name in names:
            await writer.record(record(name))

    writer.start()
    asyncio.run(calls())
    writer.stop()  # drains what is queued
    assert subjects(database) == names
    with database.read() as unit:
        (first,) = unit.audit.page(AuditQuery(start=NOW, end=NOW, limit=1))
    assert (first.subject, first.metadata, first.timestamp) == (names[0], {"note": "kept"}, NOW)
    assert (first.entity_type, first.entity_id, first.cluster_name) == ("project", None, None)


def test_a_full_queue_makes_the_call_wait_for_room(database: Database) -> None:
    instruments = Instruments()
    writer = writer_of(database, instruments, queue_size=1, longest_wait_seconds=60)

    async def calls() -> None:
        await writer.record(record("first"))
        second = asyncio.create_task(writer.record(record("second")))
        await asyncio.to_thread(
            poll,
            lambda: counted(instruments, "waited") == 1 or None,
            timeout=10,
            what="the second call to wait",
        )
        assert not second.done()
        writer.start()  # room is made: the waiting call goes on
        await second

    asyncio.run(calls())
    writer.stop()
    assert subjects(database) == ["first", "second"]
    assert counted(instruments, "dropped") == 0


def test_past_the_longest_wait_a_record_is_dropped_and_counted(database: Database) -> None:
    instruments = Instruments()
    writer = writer_of(database, instruments, queue_size=1, longest_wait_seconds=0.01)

    async def calls() -> None:
        await writer.record(record("kept"))
        await writer.record(record("dropped"))

    asyncio.run(calls())
    assert (counted(instruments, "waited"), counted(instruments, "dropped")) == (1, 1)
    writer.start()
    writer.stop()
    assert subjects(database) == ["kept"]


def test_records_past_their_retention_are_deleted(database: Database) -> None:
    old = [record(f"old-{index}", at=NOW - timedelta(days=91, minutes=index)) for index in range(3)]
    with database.write() as unit:
        unit.audit.add_many([*old, record("recent", at=NOW - timedelta(days=89))])
    writer = writer_of(database, Instruments())
    writer.start()  # deletes at once, then every hour
    try:
        poll(lambda: subjects(database) == ["recent"] or None, timeout=10, what="old records gone")
    finally:
        writer.stop()
