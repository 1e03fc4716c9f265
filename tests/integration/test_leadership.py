"""The store's leadership lock (store/leadership.py): one holder at a time among processes
sharing a store, taken over when the holder goes — on PostgreSQL (advisory lock) and on
SQLite (a file lock), each holder a real process; and, on PostgreSQL, whether anyone holds it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lockstep.store.database import Database
from lockstep.store.leadership import leadership_of, someone_leads
from tests.conftest import fresh_database
from tests.support.api import poll

HOLDER = textwrap.dedent(
    """
    import sys, time
    from lockstep.store.database import Database
    from lockstep.store.leadership import leadership_of
    lock = leadership_of(Database(sys.argv[1]))
    while not lock.try_acquire():
        time.sleep(0.05)
    print("leader", flush=True)
    sys.stdin.read()  # hold it until stdin closes (or the process is killed)
    lock.release()
    """
)


@contextmanager
def holder(url: str) -> Iterator[subprocess.Popen[str]]:
    """A process that takes the lock as soon as it can and says so."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            yield process
        finally:
            process.kill()


def became_leader(process: subprocess.Popen[str]) -> bool:
    assert process.stdout is not None
    return process.stdout.readline() == "leader\n"


def test_one_holder_at_a_time_and_a_takeover_when_it_dies(database_url: str) -> None:
    database = Database(database_url)
    lock = leadership_of(database)
    try:
        with holder(database_url) as first:
            assert became_leader(first)
            assert not lock.try_acquire()  # held by the first process
            first.kill()  # no release: the store (or the kernel) must see the holder is gone
            first.wait()
        poll(lambda: lock.try_acquire() or None, what="the lock taken over", timeout=30)
        assert lock.still_held()
        with holder(database_url) as second:
            lock.release()
            assert not lock.still_held()
            assert became_leader(second)
    finally:
        lock.release()
        database.dispose()


def test_whether_someone_leads_is_told_by_the_store_of_its_own_database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    with (
        fresh_database(request, "postgresql", tmp_path / "a") as url,
        fresh_database(request, "postgresql", tmp_path / "b") as other_url,
    ):
        database, other = Database(url), Database(other_url)
        try:
            assert not someone_leads(database)
            with holder(url) as leader:
                assert became_leader(leader)
                assert someone_leads(database)
                assert not someone_leads(other)  # the same lock, another store
                leader.kill()
                leader.wait()
            poll(lambda: not someone_leads(database) or None, what="no leader", timeout=30)
        finally:
            database.dispose()
            other.dispose()
