"""Group commit for SQLite: many acknowledged writes made durable by one fsync.

A durable write commits without waiting for the disk (SQLite's `synchronous=NORMAL` puts the
commit in the write-ahead log), and whoever acknowledges it waits until a thread here has
fsynced the log past that commit — which is what `synchronous=FULL` does, but once for every
commit made while the previous fsync was running instead of once per commit.

The same thread checkpoints the log into the database file when it grows, so that no commit
of the API ever pays for a checkpoint (the API's connections have automatic checkpoints off).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

Waiter = Callable[[BaseException | None], None]
CHECKPOINT_BYTES = 16 * 1024 * 1024
RETRY_SECONDS = 0.5


class WalSyncer:
    def __init__(
        self,
        wal: Path,
        *,
        checkpoint: Callable[[], None],
        sync: Callable[[Path], None] | None = None,
    ) -> None:
        self._wal = wal
        self._checkpoint = checkpoint
        self._sync = sync or fsync_file
        self._condition = threading.Condition()
        self._committed = 0
        self._synced = 0
        self._waiters: list[tuple[int, Waiter]] = []
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="lockstep-wal-sync", daemon=True)
        self._thread.start()

    @property
    def committed(self) -> int:
        """How many deferred commits there have been."""
        return self._committed

    def note_commit(self) -> None:
        """A deferred commit happened (called right after it)."""
        with self._condition:
            self._committed += 1
            self._condition.notify()

    def when_synced(self, commit: int, waiter: Waiter) -> None:
        """Call `waiter(None)` once commit number `commit` is on disk, or `waiter(error)`."""
        with self._condition:
            if commit > self._synced:
                self._waiters.append((commit, waiter))
                self._condition.notify()
                return
        waiter(None)

    def _run(self) -> None:
        while True:
            with self._condition:
                while not self._closed and self._committed == self._synced:
                    self._condition.wait()
                if self._closed:
                    failure: BaseException | None = RuntimeError("the store was closed")
                    ready, self._waiters = self._waiters, []
                    break
                target = self._committed
            failure = None
            try:
                self._sync(self._wal)
            except OSError as error:
                log.exception("fsync of the write-ahead log failed")
                failure = error
            else:
                self._checkpoint_if_large()
            with self._condition:
                if failure is None:
                    self._synced = target
                ready = [w for w in self._waiters if w[0] <= target]
                self._waiters = [w for w in self._waiters if w[0] > target]
            for _, waiter in ready:
                waiter(failure)
            if failure is not None:
                with self._condition:
                    self._condition.wait(RETRY_SECONDS)  # do not spin on a failing disk
        for _, waiter in ready:
            waiter(failure)

    def _checkpoint_if_large(self) -> None:
        try:
            large = self._wal.stat().st_size > CHECKPOINT_BYTES
        except FileNotFoundError:
            return
        if large:
            try:
                self._checkpoint()
            except Exception:
                log.exception("checkpointing the write-ahead log failed; will retry")

    def close(self) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify()
        self._thread.join(timeout=10)


def fsync_file(path: Path) -> None:
    """Flush a file to disk; a missing log means everything is in the database file."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
