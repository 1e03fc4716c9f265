"""Group commit: a commit is acknowledged only after an fsync that started after it, and one
fsync acknowledges every commit made before it started."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lockstep.store.group_commit import WalSyncer


class GatedSync:
    """An fsync that waits for the test to let it finish, recording how many ran."""

    def __init__(self) -> None:
        self.started = threading.Semaphore(0)
        self.finish = threading.Semaphore(0)
        self.calls = 0
        self.fail = False

    def __call__(self, path: Path) -> None:
        self.calls += 1
        self.started.release()
        assert self.finish.acquire(timeout=10)
        if self.fail:
            raise OSError("disk on fire")


@pytest.fixture
def sync() -> GatedSync:
    return GatedSync()


@pytest.fixture
def syncer(sync: GatedSync, tmp_path: Path) -> Iterator[WalSyncer]:
    wal = WalSyncer(tmp_path / "db-wal", checkpoint=lambda: None, sync=sync)
    yield wal
    sync.finish.release()
    wal.close()


class Waiter:
    """A callback for `when_synced` that remembers what it was told."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.outcome: list[BaseException | None] = []

    def __call__(self, error: BaseException | None) -> None:
        self.outcome.append(error)
        self.done.set()


def test_a_commit_waits_for_the_fsync_after_it(syncer: WalSyncer, sync: GatedSync) -> None:
    syncer.note_commit()
    waiter = Waiter()
    syncer.when_synced(syncer.committed, waiter)
    assert sync.started.acquire(timeout=10)
    assert not waiter.done.is_set()
    sync.finish.release()
    assert waiter.done.wait(timeout=10)
    assert waiter.outcome == [None]


def test_commits_during_an_fsync_share_the_next_one(syncer: WalSyncer, sync: GatedSync) -> None:
    syncer.note_commit()
    assert sync.started.acquire(timeout=10)  # the first fsync is running
    waiters = []
    for _ in range(5):
        syncer.note_commit()
        waiters.append(Waiter())
        syncer.when_synced(syncer.committed, waiters[-1])
    sync.finish.release()  # the first fsync ends: it covers none of the five
    assert sync.started.acquire(timeout=10)
    assert not any(w.done.is_set() for w in waiters)
    sync.finish.release()  # one more fsync covers all five
    assert all(w.done.wait(timeout=10) for w in waiters)
    assert sync.calls == 2


def test_already_synced_commits_are_acknowledged_at_once(
    syncer: WalSyncer, sync: GatedSync
) -> None:
    syncer.note_commit()
    assert sync.started.acquire(timeout=10)
    sync.finish.release()
    first = Waiter()
    syncer.when_synced(1, first)
    assert first.done.wait(timeout=10)
    later = Waiter()
    syncer.when_synced(1, later)
    assert later.outcome == [None]


def test_a_failed_fsync_is_reported_to_its_waiters(syncer: WalSyncer, sync: GatedSync) -> None:
    sync.fail = True
    syncer.note_commit()
    waiter = Waiter()
    syncer.when_synced(1, waiter)
    assert sync.started.acquire(timeout=10)
    sync.finish.release()
    assert waiter.done.wait(timeout=10)
    assert isinstance(waiter.outcome[0], OSError)
