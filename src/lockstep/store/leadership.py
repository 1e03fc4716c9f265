"""Which of several lockstep processes sharing one store acts on the cluster: the one holding
the store's leadership lock. Every process serves the API; only the leader reconciles.

On PostgreSQL the lock is a session advisory lock, held by a connection of its own: when the
leader dies or loses its connection, PostgreSQL releases the lock and another process takes
it. On SQLite (one machine) it is an exclusive `flock` on a file beside the database, released
by the kernel when the process ends. Used by the Kubernetes runtime's controller, and by the
local runtime's reconciler process when several API processes serve (cli/serve.py), whose
readiness asks whether anyone holds the lock (`someone_leads`).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from pathlib import Path
from typing import Protocol

from sqlalchemy import text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import SQLAlchemyError

from lockstep.store.database import Database

log = logging.getLogger(__name__)

LOCK_KEY = 0x6C6F636B73746570  # "lockstep" as 64 bits: the advisory lock's key


class Leadership(Protocol):
    def try_acquire(self) -> bool:
        """Take the lock if no one holds it; True when this process holds it now."""
        ...

    def still_held(self) -> bool:
        """Whether this process still holds the lock (False once it has been lost)."""
        ...

    def release(self) -> None: ...


class AdvisoryLock:
    """PostgreSQL's session advisory lock on a connection kept for it alone."""

    def __init__(self, database: Database, *, key: int = LOCK_KEY) -> None:
        self._database = database
        self._key = key - (1 << 64) if key >= 1 << 63 else key  # a signed bigint
        self._connection: Connection | None = None

    def try_acquire(self) -> bool:
        if self._connection is not None:
            return self.still_held()
        connection = self._database.engine.connect()
        try:
            taken = connection.execute(
                text("SELECT pg_try_advisory_lock(:key)"), {"key": self._key}
            ).scalar_one()
            connection.commit()
        except SQLAlchemyError as error:
            log.warning("could not ask for the leadership: %s", error)
            connection.close()
            return False
        if not taken:
            connection.close()
            return False
        self._connection = connection
        return True

    def still_held(self) -> bool:
        if self._connection is None:
            return False
        # A session's advisory lock lasts as long as the session: a live connection holds it.
        try:
            self._connection.execute(text("SELECT 1"))
            self._connection.commit()
        except SQLAlchemyError as error:
            log.warning("lost the connection that holds the leadership: %s", error)
            self._drop()
            return False
        return True

    def release(self) -> None:
        if self._connection is None:
            return
        with contextlib.suppress(SQLAlchemyError):
            self._connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": self._key})
            self._connection.commit()
        self._drop()

    def _drop(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(SQLAlchemyError):
                self._connection.invalidate()
                self._connection.close()
            self._connection = None


class FileLock:
    """An exclusive `flock` on `path`, for processes sharing a SQLite store on one machine."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._descriptor: int | None = None

    def try_acquire(self) -> bool:
        if self._descriptor is not None:
            return True
        descriptor = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            return False
        self._descriptor = descriptor
        return True

    def still_held(self) -> bool:
        return self._descriptor is not None

    def release(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)  # closing the last descriptor releases the lock
            self._descriptor = None


def someone_leads(database: Database, *, key: int = LOCK_KEY) -> bool:
    """Whether some session holds `database`'s leadership lock (PostgreSQL): a process that
    does not lead asks it to tell whether the store is reconciled at all."""
    if database.is_sqlite:
        raise ValueError("only PostgreSQL tells who holds a lock")
    # A bigint advisory key shows in pg_locks as its high and low 32 bits, objsubid 1.
    query = text(
        "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        " AND classid::bigint = :high AND objid::bigint = :low AND objsubid = 1)"
    )
    with database.engine.connect() as connection:
        held = connection.execute(query, {"high": key >> 32, "low": key & 0xFFFFFFFF})
        return bool(held.scalar_one())


def leadership_of(database: Database) -> Leadership:
    """The leadership lock of `database`'s store."""
    if not database.is_sqlite:
        return AdvisoryLock(database)
    name = make_url(database.url).database
    return FileLock(Path(f"{name}.leader") if name else Path(os.devnull))
