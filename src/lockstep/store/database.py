"""The connection to the store: engine set-up per backend, transactions, migrations.

SQLite runs in WAL mode with full fsync on commit, and write transactions begin IMMEDIATE
behind a process-wide lock, so writers queue instead of spinning on `database is locked`. Its
files are its owner's alone (mode 0600), as the keys beside them are.
Connection failures become `StoreUnavailable` (HTTP 503); nothing else leaks SQLAlchemy.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from lockstep.domain.errors import StoreUnavailable
from lockstep.store.audit import AuditRepository
from lockstep.store.group_commit import WalSyncer
from lockstep.store.identity import IdentityRepository
from lockstep.store.metrics import MetricsRepository
from lockstep.store.node_pools import NodePoolRepository
from lockstep.store.organization import OrganizationRepository
from lockstep.store.scheduling import SchedulingRepository
from lockstep.store.secrets import Sealing, SecretRepository
from lockstep.store.single_sign_on import SingleSignOnRepository
from lockstep.store.users import UserRepository
from lockstep.store.workload_changes import WorkloadChanges
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


def _no_automatic_checkpoints(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.execute("PRAGMA wal_autocheckpoint=0")


START_UP_LOCK = 0x6C6F636B73746571
"""The PostgreSQL advisory lock that migrations and the first start's bootstrap hold, so
that replicas starting together on an empty store do not both do them."""


def hold_start_up_lock(connection: Connection) -> None:
    """Wait for, then hold until the transaction ends, the start-up lock (PostgreSQL; SQLite's
    write transactions already exclude each other)."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": START_UP_LOCK})


class UnitOfWork:
    """The repositories of one transaction."""

    def __init__(self, connection: Connection, sealer: Sealing | None = None) -> None:
        self._connection = connection
        self.workloads = WorkloadRepository(connection)
        self.organization = OrganizationRepository(connection)
        self.node_pools = NodePoolRepository(connection)
        self.identity = IdentityRepository(connection)
        self.users = UserRepository(connection)
        self.secrets = SecretRepository(connection, sealer)
        self.single_sign_on = SingleSignOnRepository(connection, sealer)
        self.scheduling = SchedulingRepository(connection)
        self.metrics = MetricsRepository(connection)
        self.workload_changes = WorkloadChanges(connection)
        self.audit = AuditRepository(connection)

    def hold_start_up_lock(self) -> None:
        """See `hold_start_up_lock`: for a start-up step that must run once among replicas."""
        hold_start_up_lock(self._connection)


def normalize_url(url: str) -> str:
    """Accept `postgresql://` and `postgres://` URLs and use the psycopg 3 driver for them."""
    parsed = make_url(url)
    if parsed.drivername in {"postgresql", "postgres"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database file, each named after it."""
PRIVATE_MODE = 0o600


def keep_private(database: Path) -> None:
    """Make the SQLite file `database` readable and writable by its owner only, creating it
    (empty, which SQLite takes for a new database) if it is missing: SQLite gives the `-wal`,
    `-shm` and `-journal` files it creates the mode of the database file, whatever the umask.
    Companions left by an earlier run, and a database created before this rule, lose others'
    access too. A file lockstep cannot open or change is left for SQLite to report."""
    log = logging.getLogger(__name__)
    try:
        descriptor = os.open(database, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, PRIVATE_MODE)
    except OSError:
        return
    try:
        _restrict(descriptor, database, log)
    finally:
        os.close(descriptor)
    for suffix in SQLITE_COMPANIONS:
        companion = Path(f"{database}{suffix}")
        try:
            descriptor = os.open(companion, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # absent (most of them, most of the time)
        try:
            _restrict(descriptor, companion, log)
        finally:
            os.close(descriptor)


def _in_memory_or_uri(database: str) -> bool:
    """A database with no file of its own, or named by a `file:` URI (whose file lockstep
    leaves to SQLite)."""
    return database == ":memory:" or database.startswith("file:")


def _restrict(descriptor: int, path: Path, log: logging.Logger) -> None:
    mode = stat.S_IMODE(os.fstat(descriptor).st_mode)
    if mode & ~PRIVATE_MODE:
        try:
            os.fchmod(descriptor, mode & PRIVATE_MODE)
        except OSError as error:
            log.warning("could not make %s readable by its owner only: %s", path, error)


PING_AFTER_IDLE_SECONDS = 1.0
"""A pooled PostgreSQL connection unused this long is checked (`SELECT 1`) before it is lent."""


def _ping_when_idle(engine: Engine) -> None:
    """Check a pooled connection before lending it only if it sat idle: one that was lent a
    moment ago is alive, and a check per request would cost a round trip per request. One that
    died meanwhile (the server restarted) is replaced; a request on one that dies in use gets
    503 and the pool is renewed (`_translated`)."""

    @event.listens_for(engine, "checkin")
    def returned(_dbapi_connection: Any, record: Any) -> None:
        record.info["returned_at"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def lent(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        returned_at = record.info.get("returned_at")
        if returned_at is not None and time.monotonic() - returned_at < PING_AFTER_IDLE_SECONDS:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as error:  # the pool connects anew when told the connection is gone
            raise DisconnectionError(str(error)) from error


class Database:
    """One store: SQLite file or PostgreSQL database, shared by every thread of lockstep."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 8,
        group_commit: bool = False,
        sealer: Sealing | None = None,
    ) -> None:
        """`group_commit` (SQLite only): durable writes defer their fsync to a `WalSyncer`;
        whoever acknowledges one must first wait for `when_durable` (the API server does).
        `sealer` seals and opens secrets' values; without one, writing a secret or reading
        its values raises `SealingMissing` (everything else works)."""
        self.url = normalize_url(url)
        self._sealer = sealer
        self.on_commit: Callable[[float, bool], None] | None = None
        """Told each write transaction's duration (seconds, from its start to its commit) and
        whether it was durable: for /metrics."""
        parsed = make_url(self.url)
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        if self.is_sqlite and parsed.database and not _in_memory_or_uri(parsed.database):
            keep_private(Path(parsed.database))
        self._write_lock = threading.Lock() if self.is_sqlite else None
        self.engine = self._create_engine(pool_size)
        self._syncer: WalSyncer | None = None
        if group_commit and self.is_sqlite and parsed.database:
            self._syncer = WalSyncer(Path(f"{parsed.database}-wal"), checkpoint=self._checkpoint)
            event.listen(self.engine, "connect", _no_automatic_checkpoints)

    def _create_engine(self, pool_size: int) -> Engine:
        if not self.is_sqlite:
            engine = create_engine(
                self.url,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_timeout=10,
                connect_args={"connect_timeout": 5},
            )
            _ping_when_idle(engine)
            return engine
        engine = create_engine(
            self.url,
            pool_size=pool_size,
            max_overflow=pool_size,
            connect_args={"check_same_thread": False, "timeout": 30},
        )

        @event.listens_for(engine, "connect")
        def _configure(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # lockstep issues BEGIN itself
            cursor = dbapi_connection.cursor()
            for pragma in ("journal_mode=WAL", "foreign_keys=ON", "busy_timeout=30000"):
                cursor.execute(f"PRAGMA {pragma}")
            cursor.close()

        return engine

    @contextmanager
    def read(self, *, snapshot: bool = True) -> Iterator[UnitOfWork]:
        """Reads. On SQLite each statement runs on its own snapshot (no BEGIN/COMMIT round
        trips); on PostgreSQL they share one transaction, or, without `snapshot`, each runs
        alone as on SQLite (two round trips fewer, for a reader that needs no common view)."""
        with self._translated(), self.engine.connect() as connection:
            if snapshot or self.is_sqlite:
                with connection.begin():
                    yield UnitOfWork(connection, self._sealer)
            else:
                connection.execution_options(isolation_level="AUTOCOMMIT")
                yield UnitOfWork(connection, self._sealer)

    @contextmanager
    def write(self, *, durable: bool = True) -> Iterator[UnitOfWork]:
        """A read-write transaction, committed when the block ends without an exception.

        A durable commit is on disk when this returns, surviving a crash of the machine.
        A non-durable one survives a crash of lockstep but may be lost with the machine: for
        state that can be derived again, such as what the reconciler observed.
        """
        lock = self._write_lock
        if lock is not None:
            lock.acquire()
        began = time.perf_counter()
        try:
            with self._translated(), self.engine.connect() as connection:
                with connection.begin():
                    if self.is_sqlite:
                        wait_for_disk = durable and self._syncer is None
                        self._begin_sqlite_write(connection, durable=wait_for_disk)
                    elif not durable:
                        connection.exec_driver_sql("SET LOCAL synchronous_commit TO OFF")
                    yield UnitOfWork(connection, self._sealer)
                if durable and self._syncer is not None:
                    self._syncer.note_commit()
            if self.on_commit is not None:
                self.on_commit(time.perf_counter() - began, durable)
        finally:
            if lock is not None:
                lock.release()

    def _checkpoint(self) -> None:
        """Copy the write-ahead log into the database file without blocking anyone."""
        with self.engine.connect() as connection:
            connection.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    @property
    def deferred_commits(self) -> int:
        """How many durable commits have deferred their fsync (always 0 without group commit)."""
        return 0 if self._syncer is None else self._syncer.committed

    def when_durable(self, commit: int, waiter: Callable[[BaseException | None], None]) -> None:
        """Call `waiter` once deferred commit number `commit` is on disk (at once without
        group commit), with the error if it could not be made durable."""
        if self._syncer is None:
            waiter(None)
        else:
            self._syncer.when_synced(commit, waiter)

    @staticmethod
    def _begin_sqlite_write(connection: Connection, *, durable: bool) -> None:
        """Set the connection's fsync level if it differs, then take the write lock at once
        (BEGIN IMMEDIATE), so writers queue instead of failing on a lock upgrade."""
        level = "FULL" if durable else "NORMAL"
        if connection.info.get("synchronous") != level:
            connection.exec_driver_sql(f"PRAGMA synchronous={level}")
            connection.info["synchronous"] = level
        connection.exec_driver_sql("BEGIN IMMEDIATE")

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

    def migrate(self, revision: str = "head") -> None:
        """Bring the schema to `revision`, the newest migration by default (idempotent)."""
        logging.getLogger("alembic").setLevel(logging.WARNING)
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(_MIGRATIONS))
        with self._translated(), self.engine.begin() as connection:
            hold_start_up_lock(connection)  # replicas starting together migrate one by one
            config.attributes["connection"] = connection
            command.upgrade(config, revision)

    def ping(self) -> None:
        """Raise `StoreUnavailable` unless the store answers."""
        with self.read() as unit:
            unit.organization.count_clusters()

    def dispose(self) -> None:
        if self._syncer is not None:
            self._syncer.close()
        self.engine.dispose()
