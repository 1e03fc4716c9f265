"""Secrets and config maps in the store (store/secrets.py), on SQLite and PostgreSQL: round
trips, one project's values apart from another's, secrets sealed at rest, and the migration
that adds them to a store made before they existed."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import MetaData, insert, inspect, select, text, update

import lockstep.store
from lockstep.auth.sealing import Sealer, new_sealing_key
from lockstep.domain.errors import Conflict, SealBroken
from lockstep.domain.secrets import ProjectSecrets, SecretKind
from lockstep.store.database import Database
from lockstep.store.secrets import SealingMissing
from lockstep.store.tables import config_maps, metadata, secrets

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
PASSWORD = "pw-" + uuid.uuid4().hex
MODE = "mode-" + uuid.uuid4().hex
SECRET, CONFIG_MAP = SecretKind.SECRET, SecretKind.CONFIG_MAP


def add_projects(database: Database, *names: str) -> list[str]:
    with database.write() as unit:
        cluster = unit.organization.add_cluster(str(uuid.uuid4()), "local", NOW)
        department = unit.organization.add_department(
            name="default", cluster_id=cluster.id, created_by="test", resources=[], now=NOW
        )
        return [
            unit.organization.add_project(
                name=name,
                cluster_id=cluster.id,
                department_id=department.id,
                created_by="test",
                requested_namespace=None,
                resources=[],
                now=NOW,
            ).id
            for name in names
        ]


def add_projects_at_0001(database: Database, *names: str) -> list[str]:
    """Projects in a store at schema 0001, written to its tables as they were then (the
    repository writes today's columns)."""
    moment = NOW.replace(tzinfo=None) if database.engine.dialect.name == "sqlite" else NOW
    stamps = {"created_by": "test", "created_at": moment, "updated_at": moment}
    with database.engine.begin() as connection:
        old = MetaData()
        old.reflect(connection, only=["clusters", "departments", "projects"])
        cluster = str(uuid.uuid4())
        connection.execute(
            insert(old.tables["clusters"]),
            {"id": cluster, "name": "local", "created_at": moment, "updated_at": moment},
        )
        departments = old.tables["departments"]
        department = connection.execute(
            insert(departments).returning(departments.c.id),
            {"name": "default", "cluster_id": cluster, **stamps},
        ).scalar_one()
        projects = old.tables["projects"]
        return [
            str(
                connection.execute(
                    insert(projects).returning(projects.c.id),
                    {"name": name, "cluster_id": cluster, "department_id": department, **stamps},
                ).scalar_one()
            )
            for name in names
        ]


@pytest.fixture
def key() -> bytes:
    return new_sealing_key()


@pytest.fixture
def database(database_url: str, key: bytes) -> Iterator[Database]:
    store = Database(database_url, sealer=Sealer(key))
    store.migrate()
    yield store
    store.dispose()


@pytest.fixture
def projects(database: Database) -> list[str]:
    return add_projects(database, "first", "second")


def test_secrets_round_trip_and_stay_in_their_project(
    database: Database, projects: list[str]
) -> None:
    first, second = projects
    with database.write() as unit:
        added = unit.secrets.add(
            SECRET,
            project_id=first,
            name="db",
            data={"user": "alice", "password": PASSWORD},
            created_by="alice",
            now=NOW,
        )
        unit.secrets.add(
            SECRET, project_id=second, name="db", data={"token": "t"}, created_by="bob", now=NOW
        )
    assert (added.name, added.project_id, added.keys) == ("db", first, ("password", "user"))
    assert (added.created_by, added.created_at, added.updated_at) == ("alice", NOW, NOW)
    later = NOW + timedelta(minutes=5)
    with database.write() as unit:
        replaced = unit.secrets.replace(
            SECRET, project_id=first, name="db", data={"password": PASSWORD + "2"}, now=later
        )
        assert (
            unit.secrets.replace(SECRET, project_id=first, name="nope", data={}, now=later) is None
        )
    assert replaced is not None
    assert (replaced.keys, replaced.created_at, replaced.updated_at) == (("password",), NOW, later)
    with database.read() as unit:
        assert unit.secrets.secret(SECRET, first, "db") == replaced
        assert [s.project_id for s in unit.secrets.secrets(SECRET, second)] == [second]
        assert unit.secrets.for_project(first) == ProjectSecrets(
            secrets={"db": {"password": PASSWORD + "2"}}, config_maps={}
        )
        assert unit.secrets.for_project(second).secrets == {"db": {"token": "t"}}
        assert unit.secrets.for_project("0" + first) == unit.secrets.for_project(first)
    with database.write() as unit:
        assert unit.secrets.delete(SECRET, first, "db")
        assert not unit.secrets.delete(SECRET, first, "db")
    with database.read() as unit:
        assert unit.secrets.secret(SECRET, first, "db") is None
        assert unit.secrets.for_project(first) == ProjectSecrets()
        assert unit.secrets.secret(SECRET, second, "db") is not None


def test_config_maps_round_trip(database: Database, projects: list[str]) -> None:
    first, _ = projects
    with database.write() as unit:
        unit.secrets.add(
            CONFIG_MAP,
            project_id=first,
            name="cfg",
            data={"mode": MODE},
            created_by="alice",
            now=NOW,
        )
        unit.secrets.add(
            CONFIG_MAP, project_id=first, name="abc", data={}, created_by="alice", now=NOW
        )
        unit.secrets.replace(
            CONFIG_MAP, project_id=first, name="cfg", data={"mode": "slow", "level": "3"}, now=NOW
        )
    with database.read() as unit:
        assert [c.name for c in unit.secrets.secrets(CONFIG_MAP, first)] == ["abc", "cfg"]
        found = unit.secrets.secret(CONFIG_MAP, first, "cfg")
        assert found is not None and found.data == {"mode": "slow", "level": "3"}
        assert found.keys == ("level", "mode")
        assert unit.secrets.for_project(first).config_maps == {
            "abc": {},
            "cfg": {"mode": "slow", "level": "3"},
        }
    with database.write() as unit:
        assert unit.secrets.delete(CONFIG_MAP, first, "cfg")
    with database.read() as unit:
        assert unit.secrets.secret(CONFIG_MAP, first, "cfg") is None


def test_names_are_unique_per_project_and_kind_and_nothing_is_half_stored(
    database: Database, projects: list[str]
) -> None:
    first, _ = projects
    with database.write() as unit:
        unit.secrets.add(
            SECRET, project_id=first, name="db", data={"a": "1"}, created_by="t", now=NOW
        )
        unit.secrets.add(
            CONFIG_MAP, project_id=first, name="db", data={"a": "1"}, created_by="t", now=NOW
        )
    conflict = pytest.raises(Conflict, match=f"project {first} already has a secret named 'db'")
    with conflict, database.write() as unit:
        unit.secrets.add(
            CONFIG_MAP, project_id=first, name="other", data={}, created_by="t", now=NOW
        )
        unit.secrets.add(
            SECRET, project_id=first, name="db", data={"a": "2"}, created_by="t", now=NOW
        )
    with database.read() as unit:
        assert unit.secrets.for_project(first).secrets == {"db": {"a": "1"}}
        assert [c.name for c in unit.secrets.secrets(CONFIG_MAP, first)] == ["db"]


def test_unknown_and_malformed_project_ids_hold_nothing(
    database: Database, projects: list[str]
) -> None:
    with database.read() as unit:
        for project_id in ("999", "abc", "", "1.0", "\u0661"):
            assert unit.secrets.secrets(SECRET, project_id) == []
            assert unit.secrets.secret(CONFIG_MAP, project_id, "x") is None
            assert unit.secrets.for_project(project_id) == ProjectSecrets()


def test_secret_values_are_not_stored_in_clear(
    database: Database, database_url: str, projects: list[str]
) -> None:
    first, _ = projects
    with database.write() as unit:
        unit.secrets.add(
            SECRET,
            project_id=first,
            name="db",
            data={"password": PASSWORD},
            created_by="t",
            now=NOW,
        )
        unit.secrets.add(
            CONFIG_MAP, project_id=first, name="cfg", data={"mode": MODE}, created_by="t", now=NOW
        )
    with database.engine.connect() as connection:
        (row,) = connection.execute(select(secrets)).all()
        (map_row,) = connection.execute(select(config_maps)).all()
    assert PASSWORD not in " ".join(str(value) for value in row)
    assert row.key_names == '["password"]'
    assert MODE in map_row.data, "config maps are kept in clear"
    if database_url.startswith("sqlite"):
        path = Path(database_url.removeprefix("sqlite:///"))
        stored = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
        assert MODE.encode() in stored, "the scan finds what is in clear"
        assert PASSWORD.encode() not in stored


def test_a_store_opened_with_another_key_cannot_open_secrets(
    database: Database, database_url: str, projects: list[str]
) -> None:
    first, _ = projects
    with database.write() as unit:
        unit.secrets.add(
            SECRET,
            project_id=first,
            name="db",
            data={"password": PASSWORD},
            created_by="t",
            now=NOW,
        )
    other = Database(database_url, sealer=Sealer(new_sealing_key()))
    try:
        with other.read() as unit:
            assert [s.keys for s in unit.secrets.secrets(SECRET, first)] == [("password",)]
            with pytest.raises(SealBroken, match=f"secret 'db' of project {first}") as raised:
                unit.secrets.for_project(first)
        assert PASSWORD not in str(raised.value)
    finally:
        other.dispose()


def test_altered_or_moved_ciphertext_does_not_open(database: Database, projects: list[str]) -> None:
    first, second = projects
    with database.write() as unit:
        for project_id, name in ((first, "db"), (first, "api"), (second, "db")):
            unit.secrets.add(
                SECRET,
                project_id=project_id,
                name=name,
                data={"password": f"{PASSWORD}-{project_id}-{name}"},
                created_by="t",
                now=NOW,
            )
    with database.engine.begin() as connection:
        sealed = {
            (str(r.project_id), r.name): r.data
            for r in connection.execute(
                select(secrets.c.project_id, secrets.c.name, secrets.c.data)
            )
        }
        middle = len(sealed[first, "db"]) // 2
        flipped = "A" if sealed[first, "db"][middle] != "A" else "B"
        altered = sealed[first, "db"][:middle] + flipped + sealed[first, "db"][middle + 1 :]
        connection.execute(
            update(secrets).where(secrets.c.name == "db", secrets.c.project_id == int(first)),
            {"data": altered},
        )
        connection.execute(
            update(secrets).where(secrets.c.name == "db", secrets.c.project_id == int(second)),
            {"data": sealed[first, "api"]},
        )
    with database.read() as unit:
        with pytest.raises(SealBroken, match="sealed with another key or altered"):
            unit.secrets.for_project(first)
        with pytest.raises(SealBroken, match="holds another secret's data"):
            unit.secrets.for_project(second)


def test_without_a_sealer_secrets_are_listed_but_not_written_or_opened(
    database: Database, database_url: str, projects: list[str]
) -> None:
    first, _ = projects
    with database.write() as unit:
        unit.secrets.add(
            SECRET,
            project_id=first,
            name="db",
            data={"password": PASSWORD},
            created_by="t",
            now=NOW,
        )
    plain = Database(database_url)
    try:
        with plain.read() as unit:
            assert [s.name for s in unit.secrets.secrets(SECRET, first)] == ["db"]
            with pytest.raises(SealingMissing, match="opened without a sealer"):
                unit.secrets.for_project(first)
        with pytest.raises(SealingMissing), plain.write() as unit:
            unit.secrets.add(SECRET, project_id=first, name="new", data={}, created_by="t", now=NOW)
    finally:
        plain.dispose()


def _config() -> Config:
    config = Config()
    config.set_main_option(
        "script_location", str(Path(lockstep.store.__file__).parent / "migrations")
    )
    return config


def _alembic(database: Database, action: str, revision: str) -> None:
    config = _config()
    with database.engine.begin() as connection:
        config.attributes["connection"] = connection
        getattr(command, action)(config, revision)


def _tables(database: Database) -> set[str]:
    with database.engine.connect() as connection:
        return set(inspect(connection).get_table_names())


def test_a_store_made_at_0001_migrates_to_secrets_and_back(database_url: str, key: bytes) -> None:
    database = Database(database_url, sealer=Sealer(key))
    try:
        _alembic(database, "downgrade", "base")
        database.migrate("0001")
        assert "projects" in _tables(database)
        assert not {"secrets", "config_maps"} & _tables(database)
        (project_id,) = add_projects_at_0001(database, "old")

        database.migrate()
        with database.engine.connect() as connection:
            version = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
            assert version == ScriptDirectory.from_config(_config()).get_current_head()
            assert compare_metadata(MigrationContext.configure(connection), metadata) == []
        with database.write() as unit:
            unit.secrets.add(
                SECRET,
                project_id=project_id,
                name="db",
                data={"p": PASSWORD},
                created_by="t",
                now=NOW,
            )
            unit.secrets.add(
                CONFIG_MAP,
                project_id=project_id,
                name="cfg",
                data={"m": MODE},
                created_by="t",
                now=NOW,
            )
        with database.read() as unit:
            assert unit.organization.project(project_id) is not None
            assert unit.secrets.for_project(project_id) == ProjectSecrets(
                secrets={"db": {"p": PASSWORD}}, config_maps={"cfg": {"m": MODE}}
            )

        _alembic(database, "downgrade", "0001")
        assert not {"secrets", "config_maps"} & _tables(database)
        database.migrate()
        with database.read() as unit:
            assert unit.secrets.for_project(project_id) == ProjectSecrets()
    finally:
        database.dispose()
