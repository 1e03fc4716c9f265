"""Fresh databases for tests: a SQLite file, or a PostgreSQL database cloned from a migrated
template (one template per test session, one clone per test)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from psycopg import sql

from lockstep.store.database import Database

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"


def postgres_url() -> str:
    return os.environ.get("LOCKSTEP_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL)


def _with_database(url: str, name: str) -> str:
    base, _, _ = url.rpartition("/")
    return f"{base}/{name}"


def require_postgres() -> None:
    """Skip when no PostgreSQL is reachable, except under CI=true where it must be."""
    try:
        with psycopg.connect(postgres_url(), connect_timeout=3):
            return
    except psycopg.OperationalError as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL at {postgres_url()} is required under CI=true: {error}")
        pytest.skip(f"no PostgreSQL reachable at {postgres_url()}: {error}")


class PostgresTemplates:
    """Creates the session's migrated template on first use and clones it per test."""

    def __init__(self) -> None:
        self.template = f"lockstep_template_{os.getpid()}"
        self._ready = False

    def _admin(self) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(postgres_url(), autocommit=True)

    def _ensure_template(self) -> None:
        if self._ready:
            return
        with self._admin() as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(self.template))
            )
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.template)))
        database = Database(_with_database(postgres_url(), self.template))
        database.migrate()
        database.dispose()
        self._ready = True

    @contextmanager
    def fresh(self) -> Iterator[str]:
        self._ensure_template()
        name = f"lockstep_test_{uuid.uuid4().hex[:12]}"
        with self._admin() as admin:
            admin.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(name), sql.Identifier(self.template)
                )
            )
        try:
            yield _with_database(postgres_url(), name)
        finally:
            with self._admin() as admin:
                admin.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )

    def close(self) -> None:
        if self._ready:
            with self._admin() as admin:
                admin.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                        sql.Identifier(self.template)
                    )
                )
