"""The identity repository: applications (service accounts) and access rules."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, insert, select
from sqlalchemy.exc import IntegrityError

from lockstep.domain.errors import Conflict
from lockstep.domain.identity import AccessRule, Application, Role, ScopeType, SubjectType
from lockstep.store.tables import access_rules, applications


def _application(row: Any) -> Application:
    return Application(row.id, row.client_id, row.secret_hash, row.created_by, row.created_at)


def _rule(row: Any) -> AccessRule:
    return AccessRule(
        id=row.id,
        subject_type=SubjectType(row.subject_type),
        subject_id=row.subject_id,
        role=Role(row.role),
        scope_type=ScopeType(row.scope_type),
        scope_id=row.scope_id,
        created_by=row.created_by,
        created_at=row.created_at,
    )


_RULES_OF = (
    select(access_rules)
    .where(
        access_rules.c.subject_type == bindparam("type"),
        access_rules.c.subject_id == bindparam("id"),
    )
    .order_by(access_rules.c.id)
)


class IdentityRepository:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    def add_application(
        self, *, client_id: str, secret_hash: str, created_by: str, now: datetime
    ) -> Application:
        values = {
            "client_id": client_id,
            "secret_hash": secret_hash,
            "created_by": created_by,
            "created_at": now,
        }
        nested = self._db.begin_nested()
        try:
            row = self._db.execute(insert(applications).returning(applications), values).one()
        except IntegrityError as error:
            nested.rollback()
            raise Conflict(f"an application named {client_id!r} already exists") from error
        nested.commit()
        return _application(row)

    def application(self, client_id: str) -> Application | None:
        query = select(applications).where(applications.c.client_id == client_id)
        row = self._db.execute(query).first()
        return None if row is None else _application(row)

    def applications(self) -> list[Application]:
        rows = self._db.execute(select(applications).order_by(applications.c.id)).all()
        return [_application(r) for r in rows]

    def count_applications(self) -> int:
        return int(self._db.execute(select(func.count()).select_from(applications)).scalar_one())

    def add_rule(
        self,
        *,
        subject_type: SubjectType,
        subject_id: str,
        role: Role,
        scope_type: ScopeType,
        scope_id: str,
        created_by: str,
        now: datetime,
    ) -> AccessRule:
        values = {
            "subject_type": subject_type.value,
            "subject_id": subject_id,
            "role": role.value,
            "scope_type": scope_type.value,
            "scope_id": scope_id,
            "created_by": created_by,
            "created_at": now,
        }
        nested = self._db.begin_nested()
        try:
            row = self._db.execute(insert(access_rules).returning(access_rules), values).one()
        except IntegrityError as error:
            nested.rollback()
            raise Conflict("this access rule already exists") from error
        nested.commit()
        return _rule(row)

    def rules_of(self, subject_type: SubjectType, subject_id: str) -> list[AccessRule]:
        parameters = {"type": subject_type.value, "id": subject_id}
        return [_rule(r) for r in self._db.execute(_RULES_OF, parameters).all()]

    def rules(self) -> list[AccessRule]:
        rows = self._db.execute(select(access_rules).order_by(access_rules.c.id)).all()
        return [_rule(r) for r in rows]

    def delete_rule(self, rule_id: int) -> bool:
        result = self._db.execute(delete(access_rules).where(access_rules.c.id == rule_id))
        return bool(result.rowcount)
