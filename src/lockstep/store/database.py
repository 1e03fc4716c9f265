"""The connection to the store: engine set-up per backend, transactions, migrations.

SQLite runs in WAL mode with full fsync on commit, and write transactions begin IMMEDIATE
behind a process-wide lock, so writers queue instead of spinning on `database is locked`.
Connection failures become `StoreUnavailable` (HTTP 503); nothing else leaks SQLAlchemy.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from lockstep.domain.errors import StoreUnavailable
from lockstep.store.identity import IdentityRepository
from lockstep.store.organization import OrganizationRepository
from lockstep.store.workloads import WorkloadRepository

_MIGRATIONS = Path(__file__).parent / "migrations"


_SQLITE_UNAVAILABLE = (
    "database is locked",
    "unable to open database",
    "disk i/o error",
    "readonly database",
)


def _is_unavailable(error: DBAPIError) -> bool:
    """Whether the store could not be reached (as opposed to a statement being wrong)."""
    if not isinstance(error, OperationalError):
        return False
    if error.orig is not None and type(error.orig).__module__.startswith("psycopg"):
        return True
    message = str(error.orig).lower()
    return any(text in message for text in _SQLITE_UNAVAILABLE)


class UnitOfWork:
    """The repositories of one transaction."""

    def __init__(self, connection: Connection) -> None:
        self.workloads = WorkloadRepository(connection)
        self.organization = OrganizationRepository(connection)
        self.identity = IdentityRepository(connection)


def normalize_url(url: str) -> str:
    """Accept `postgresql://` and `postgres://` URLs and use the psycopg 3 driver for them."""
    parsed = make_url(url)
    if parsed.drivername in {"postgresql", "postgres"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


class Database:
    """One store: SQLite file or PostgreSQL database, shared by every thread of lockstep."""

    def __init__(self, url: str, *, pool_size: int = 8) -> None:
        self.url = normalize_url(url)
        self.is_sqlite = make_url(self.url).get_backend_name() == "sqlite"
        self._write_lock = threading.Lock() if self.is_sqlite else None
        self.engine = self._create_engine(pool_size)

    def _create_engine(self, pool_size: int) -> Engine:
        if not self.is_sqlite:
            return create_engine(
                self.url,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_pre_ping=True,
                pool_timeout=10,
                connect_args={"connect_timeout": 5},
            )
        engine = create_engine(
            self.url,
            pool_size=pool_size,
            max_overflow=pool_size,
            connect_args={"check_same_thread": False, "timeout": 30},
        )

        @event.listens_for(engine, "connect")
        def _configure(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # transactions are begun below
            cursor = dbapi_connection.cursor()
            for pragma in (
                "journal_mode=WAL",
                "synchronous=FULL",
                "foreign_keys=ON",
                "busy_timeout=30000",
            ):
                cursor.execute(f"PRAGMA {pragma}")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(connection: Connection) -> None:
            immediate = connection.get_execution_options().get("lockstep_write", False)
            connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine

    @contextmanager
    def read(self) -> Iterator[UnitOfWork]:
        """A read-only transaction."""
        with self._translated(), self.engine.connect() as connection, connection.begin():
            yield UnitOfWork(connection)

    @contextmanager
    def write(self) -> Iterator[UnitOfWork]:
        """A read-write transaction, committed when the block ends without an exception."""
        lock = self._write_lock
        if lock is not None:
            lock.acquire()
        try:
            with self._translated(), self.engine.connect() as plain:
                connection = plain.execution_options(lockstep_write=True)
                with connection.begin():
                    yield UnitOfWork(connection)
        finally:
            if lock is not None:
                lock.release()

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except PoolTimeout as error:
            raise StoreUnavailable("the store is busy; please try again shortly") from error
        except DBAPIError as error:
            if error.connection_invalidated or _is_unavailable(error):
                raise StoreUnavailable(
                    "the store is unreachable; please try again shortly"
                ) from error
            raise

    def migrate(self) -> None:
        """Bring the schema to the newest migration (idempotent)."""
        logging.getLogger("alembic").setLevel(logging.WARNING)
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(_MIGRATIONS))
        with self._translated(), self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def ping(self) -> None:
        """Raise `StoreUnavailable` unless the store answers."""
        with self.read() as unit:
            unit.organization.count_clusters()

    def dispose(self) -> None:
        self.engine.dispose()
