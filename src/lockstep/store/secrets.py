"""The value repository: the secrets and config maps of projects.

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
from lockstep.domain.secrets import ConfigMap, ProjectValues, Secret, ValueKind
from lockstep.schemas.bounds import INT32_MAX
from lockstep.store.tables import config_maps, secrets


class Sealing(Protocol):
    """Authenticated encryption of stored values (lockstep.auth.sealing.Sealer)."""

    def seal(self, plain: bytes) -> str: ...

    def open(self, sealed: str) -> bytes: ...


class SealingMissing(RuntimeError):
    """The store was opened without a sealer, and the call needs one."""


def _secret(row: Any) -> Secret:
    return Secret(
        name=row.name,
        project_id=str(row.project_id),
        keys=tuple(orjson.loads(row.key_names)),
        created_by=row.created_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _config_map(row: Any) -> ConfigMap:
    return ConfigMap(
        name=row.name,
        project_id=str(row.project_id),
        data=orjson.loads(row.data),
        created_by=row.created_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class ValueRepository:
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

    # Secrets

    def add_secret(
        self, *, project_id: str, name: str, data: Mapping[str, str], created_by: str, now: datetime
    ) -> Secret:
        """A new secret; `Conflict` when the project has one of that name."""
        values = {
            **self._sealed(int(project_id), name, data),
            "project_id": int(project_id),
            "name": name,
            "created_by": created_by,
            "created_at": now,
            "updated_at": now,
        }
        return _secret(self._insert(secrets, values, ValueKind.SECRET))

    def replace_secret(
        self, *, project_id: str, name: str, data: Mapping[str, str], now: datetime
    ) -> Secret | None:
        """The secret with its data replaced by `data`; None when there is no such secret."""
        key = _project_key(project_id)
        if key is None:
            return None
        values = {**self._sealed(key, name, data), "updated_at": now}
        row = self._update(secrets, project_id, name, values)
        return None if row is None else _secret(row)

    def secret(self, project_id: str, name: str) -> Secret | None:
        row = self._one(secrets, project_id, name)
        return None if row is None else _secret(row)

    def secrets(self, project_id: str) -> list[Secret]:
        return [_secret(row) for row in self._all(secrets, project_id)]

    def delete_secret(self, project_id: str, name: str) -> bool:
        return self._delete(secrets, project_id, name)

    # Config maps

    def add_config_map(
        self, *, project_id: str, name: str, data: Mapping[str, str], created_by: str, now: datetime
    ) -> ConfigMap:
        """A new config map; `Conflict` when the project has one of that name."""
        values = {
            "project_id": int(project_id),
            "name": name,
            "data": _json(data),
            "created_by": created_by,
            "created_at": now,
            "updated_at": now,
        }
        return _config_map(self._insert(config_maps, values, ValueKind.CONFIG_MAP))

    def replace_config_map(
        self, *, project_id: str, name: str, data: Mapping[str, str], now: datetime
    ) -> ConfigMap | None:
        """The config map with its data replaced by `data`; None when there is none."""
        values = {"data": _json(data), "updated_at": now}
        row = self._update(config_maps, project_id, name, values)
        return None if row is None else _config_map(row)

    def config_map(self, project_id: str, name: str) -> ConfigMap | None:
        row = self._one(config_maps, project_id, name)
        return None if row is None else _config_map(row)

    def config_maps(self, project_id: str) -> list[ConfigMap]:
        return [_config_map(row) for row in self._all(config_maps, project_id)]

    def delete_config_map(self, project_id: str, name: str) -> bool:
        return self._delete(config_maps, project_id, name)

    # Both

    def for_project(self, project_id: str) -> ProjectValues:
        """Every secret (opened) and config map of the project; empty for an unknown one.
        `SealBroken` names the secret that does not open."""
        opened = {row.name: self._opened(row) for row in self._all(secrets, project_id)}
        maps = {m.name: m.data for m in self.config_maps(project_id)}
        return ProjectValues(secrets=opened, config_maps=maps)

    def _sealed(self, project_key: int, name: str, data: Mapping[str, str]) -> dict[str, str]:
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

    def _insert(self, table: Table, values: dict[str, Any], kind: ValueKind) -> Any:
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

    def _update(self, table: Table, project_id: str, name: str, values: dict[str, Any]) -> Any:
        key = _project_key(project_id)
        if key is None:
            return None
        statement = update(table).where(_where(table, key, name)).values(values).returning(table)
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
