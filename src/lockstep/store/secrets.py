"""The secret repository: the secrets and config maps of projects, one CRUD over both kinds.

A secret's data is stored sealed (encrypted) by the `Sealing` the store was opened with,
together with the project and name it belongs to, so a sealed value copied onto another row
does not open there. Its keys are kept in clear beside it, so listing and reading a secret's
keys open nothing. Config maps are stored in clear. Only `for_project` opens secrets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

import orjson
from sqlalchemy import Connection, Table, and_, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from lockstep.domain.errors import Conflict, SealBroken
from lockstep.domain.secrets import ProjectSecrets, Secret, SecretKind
from lockstep.schemas.bounds import INT32_MAX
from lockstep.store.tables import config_maps, secrets


class Sealing(Protocol):
    """Authenticated encryption of stored values (lockstep.auth.sealing.Sealer)."""

    def seal(self, plain: bytes) -> str: ...

    def open(self, sealed: str) -> bytes: ...


class SealingMissing(RuntimeError):
    """The store was opened without a sealer, and the call needs one."""


_TABLES: Mapping[SecretKind, Table] = {
    SecretKind.SECRET: secrets,
    SecretKind.CONFIG_MAP: config_maps,
}
"""Where each kind is kept: a table of its own, so a name is unique per project and kind."""


def _secret(kind: SecretKind, row: Any) -> Secret:
    """A row of `kind`'s table as callers see it: a secret's keys (from the clear column, so
    nothing is opened), a config map's data."""
    data: dict[str, str] | None = None if kind is SecretKind.SECRET else orjson.loads(row.data)
    keys = tuple(orjson.loads(row.key_names)) if data is None else tuple(sorted(data))
    return Secret(
        kind=kind,
        name=row.name,
        project_id=str(row.project_id),
        keys=keys,
        data=data,
        created_by=row.created_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class SecretRepository:
    def __init__(self, connection: Connection, sealing: Sealing | None = None) -> None:
        self._db = connection
        self._sealing = sealing

    @property
    def _sealer(self) -> Sealing:
        if self._sealing is None:
            raise SealingMissing(
                "this store was opened without a sealer, so secrets' values can be neither "
                "written nor read: open it as Database(url, sealer=Sealer.from_file(...))"
            )
        return self._sealing

    def add(
        self,
        kind: SecretKind,
        *,
        project_id: str,
        name: str,
        data: Mapping[str, str],
        created_by: str,
        now: datetime,
    ) -> Secret:
        """A new secret or config map; `Conflict` when the project has one of that kind and
        name."""
        values = {
            **self._stored(kind, int(project_id), name, data),
            "project_id": int(project_id),
            "name": name,
            "created_by": created_by,
            "created_at": now,
            "updated_at": now,
        }
        return _secret(kind, self._insert(kind, values))

    def replace(
        self,
        kind: SecretKind,
        *,
        project_id: str,
        name: str,
        data: Mapping[str, str],
        now: datetime,
    ) -> Secret | None:
        """The secret or config map with its data replaced by `data`; None when there is
        none."""
        key = _project_key(project_id)
        if key is None:
            return None
        values = {**self._stored(kind, key, name, data), "updated_at": now}
        row = self._update(_TABLES[kind], key, name, values)
        return None if row is None else _secret(kind, row)

    def secret(self, kind: SecretKind, project_id: str, name: str) -> Secret | None:
        row = self._one(_TABLES[kind], project_id, name)
        return None if row is None else _secret(kind, row)

    def secrets(self, kind: SecretKind, project_id: str) -> list[Secret]:
        return [_secret(kind, row) for row in self._all(_TABLES[kind], project_id)]

    def delete(self, kind: SecretKind, project_id: str, name: str) -> bool:
        return self._delete(_TABLES[kind], project_id, name)

    def for_project(self, project_id: str) -> ProjectSecrets:
        """Every secret (opened) and config map of the project; empty for an unknown one.
        `SealBroken` names the secret that does not open."""
        opened = {row.name: self._opened(row) for row in self._all(secrets, project_id)}
        maps = {row.name: orjson.loads(row.data) for row in self._all(config_maps, project_id)}
        return ProjectSecrets(secrets=opened, config_maps=maps)

    def _stored(
        self, kind: SecretKind, project_key: int, name: str, data: Mapping[str, str]
    ) -> dict[str, str]:
        """The columns that hold `data`: a secret's sealed with its project and name, and
        its keys in clear beside it; a config map's in clear."""
        if kind is SecretKind.CONFIG_MAP:
            return {"data": _json(data)}
        envelope = {"projectId": str(project_key), "name": name, "data": dict(data)}
        return {
            "key_names": _json(sorted(data)),
            "data": self._sealer.seal(orjson.dumps(envelope)),
        }

    def _opened(self, row: Any) -> dict[str, str]:
        project_id, name = str(row.project_id), row.name
        where = f"secret {name!r} of project {project_id}"
        try:
            envelope = orjson.loads(self._sealer.open(row.data))
        except SealBroken as error:
            raise SealBroken(f"{where} could not be opened: {error.message}") from error
        if envelope.get("projectId") != project_id or envelope.get("name") != name:
            raise SealBroken(f"{where} could not be opened: it holds another secret's data")
        data: dict[str, str] = envelope["data"]
        return data

    def _insert(self, kind: SecretKind, values: dict[str, Any]) -> Any:
        table = _TABLES[kind]
        nested = self._db.begin_nested()
        try:
            row = self._db.execute(insert(table).returning(table), values).one()
        except IntegrityError as error:
            nested.rollback()
            raise Conflict(
                f"project {values['project_id']} already has a {kind.value} named "
                f"{values['name']!r}"
            ) from error
        nested.commit()
        return row

    def _one(self, table: Table, project_id: str, name: str) -> Any:
        key = _project_key(project_id)
        if key is None:
            return None
        return self._db.execute(select(table).where(_where(table, key, name))).first()

    def _all(self, table: Table, project_id: str) -> Sequence[Any]:
        key = _project_key(project_id)
        if key is None:
            return []
        query = select(table).where(table.c.project_id == key).order_by(table.c.name)
        return self._db.execute(query).all()

    def _update(self, table: Table, project_key: int, name: str, values: dict[str, Any]) -> Any:
        statement = (
            update(table).where(_where(table, project_key, name)).values(values).returning(table)
        )
        return self._db.execute(statement).first()

    def _delete(self, table: Table, project_id: str, name: str) -> bool:
        key = _project_key(project_id)
        if key is None:
            return False
        return bool(self._db.execute(delete(table).where(_where(table, key, name))).rowcount)


def _json(value: object) -> str:
    return orjson.dumps(value).decode()


def _project_key(project_id: str) -> int | None:
    """The stored key of a project id; None for an id no project can have (keys are 32-bit
    integers)."""
    digits = project_id.isascii() and project_id.isdigit() and len(project_id) <= 10
    key = int(project_id) if digits else None
    return key if key is not None and key <= INT32_MAX else None


def _where(table: Table, project_key: int, name: str) -> Any:
    return and_(table.c.project_id == project_key, table.c.name == name)
