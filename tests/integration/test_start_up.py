"""Replicas starting together on one empty PostgreSQL store: the schema is migrated once and
the first start's organization and administrator are created once, whichever replica comes
first (the start-up lock of store/database.py); each replica is a real process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from lockstep.store.database import Database
from tests.support.databases import _with_database, postgres_url, require_postgres

START = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from lockstep.assembly import bootstrap, open_core
    from lockstep.config import Settings
    settings = Settings(
        data_dir=Path(sys.argv[2]),
        database_url=sys.argv[1],
        bootstrap_client_id="admin",
        bootstrap_client_secret="a-secret-long-enough-for-lockstep",
    )
    core = open_core(settings)
    print("bootstrapped" if bootstrap(core) is not None else "found", flush=True)
    core.close()
    """
)


@pytest.fixture
def empty_postgres() -> Iterator[str]:
    require_postgres()
    name = f"lockstep_empty_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url(), autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield _with_database(postgres_url(), name)
    finally:
        with psycopg.connect(postgres_url(), autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def test_three_replicas_starting_together_bootstrap_once(
    empty_postgres: str, tmp_path: Path
) -> None:
    replicas = [
        subprocess.Popen(
            [sys.executable, "-c", START, empty_postgres, str(tmp_path / f"replica-{i}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    ended = [(replica.communicate(timeout=120), replica.returncode) for replica in replicas]
    for (_, err), code in ended:
        assert code == 0, err
    assert sorted(out.strip() for (out, _), _ in ended) == ["bootstrapped", "found", "found"]
    database = Database(empty_postgres)
    try:
        with database.read() as unit:
            assert unit.organization.count_clusters() == 1
            assert unit.identity.count_applications() == 1
    finally:
        database.dispose()
