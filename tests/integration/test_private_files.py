"""The data dir's files are lockstep's alone: a real `lockstep serve` on a fresh data dir keeps
its SQLite store (`lockstep.db` and the `-wal`, `-shm` and `-journal` files SQLite keeps beside
it) readable and writable by its owner only (mode 0600), as it keeps the keys; whatever the
umask, and for a store made before that rule too."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import running
from tests.support.server import LiveServer


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


@contextmanager
def umask(value: int) -> Iterator[None]:
    """The umask of this process and of the server it starts (a permissive one, as a shell's
    `umask 022` or `002` would be)."""
    before = os.umask(value)
    try:
        yield
    finally:
        os.umask(before)


def test_the_store_and_its_companions_are_created_0600(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with umask(0o002), running(LiveServer(data)) as server:
        api = server.api()
        assert api.get("/api/v1/workloads").status_code == 200  # the store is in use
        store = data / "lockstep.db"
        files = {path.name: mode(path) for path in (store, data / "lockstep.db-wal")}
        files["lockstep.db-shm"] = mode(data / "lockstep.db-shm")
        assert files == {
            "lockstep.db": "0o600",
            "lockstep.db-wal": "0o600",
            "lockstep.db-shm": "0o600",
        }
        for key in ("token-signing.key", "secrets-sealing.key"):
            assert mode(data / key) == "0o600", key
    # A rollback journal (what SQLite writes outside WAL mode) takes the store's mode too.
    with umask(0o002), sqlite3.connect(store) as connection:
        connection.execute("PRAGMA journal_mode=PERSIST")
        connection.execute("CREATE TABLE probe (x)")
        assert mode(data / "lockstep.db-journal") == "0o600"


def test_a_store_made_before_is_made_private_on_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    store = data / "lockstep.db"
    with umask(0o022):
        sqlite3.connect(store).close()
    assert mode(store) == "0o644"
    with umask(0o022), running(LiveServer(data)):
        assert mode(store) == "0o600"
        assert mode(data / "lockstep.db-wal") == "0o600"
