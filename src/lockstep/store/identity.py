"""The identity repository: applications (service accounts) and access rules (kept when
deleted; the live ones are those without `deleted_at`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, bindparam, func, insert, or_, select, update
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
        updated_at=row.updated_at,
        deleted_at=row.deleted_at,
        deleted_by=row.deleted_by,
    )


_LIVE = access_rules.c.deleted_at.is_(None)
_RULES_OF = (
    select(access_rules)
    .where(
        access_rules.c.subject_type == bindparam("type"),
        access_rules.c.subject_id == bindparam("id"),
        _LIVE,
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
            "updated_at": now,
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
        """The live rules of one subject."""
        parameters = {"type": subject_type.value, "id": subject_id}
        return [_rule(r) for r in self._db.execute(_RULES_OF, parameters).all()]

    def rules_of_any(self, subjects: list[tuple[SubjectType, str]]) -> list[AccessRule]:
        """The live rules of any of `subjects` (a user by their email and id, and their
        groups)."""
        if not subjects:
            return []
        query = (
            select(access_rules)
            .where(
                _LIVE,
                or_(
                    *(
                        and_(
                            access_rules.c.subject_type == kind.value,
                            access_rules.c.subject_id == name,
                        )
                        for kind, name in subjects
                    )
                ),
            )
            .order_by(access_rules.c.id)
        )
        return [_rule(r) for r in self._db.execute(query).all()]

    def rules(self, *, include_deleted: bool = False) -> list[AccessRule]:
        query = select(access_rules).order_by(access_rules.c.id)
        if not include_deleted:
            query = query.where(_LIVE)
        return [_rule(r) for r in self._db.execute(query).all()]

    def rule(self, rule_id: int) -> AccessRule | None:
        """A rule by its id, deleted or not."""
        row = self._db.execute(select(access_rules).where(access_rules.c.id == rule_id)).first()
        return None if row is None else _rule(row)

    def same_rule(
        self,
        *,
        subject_type: SubjectType,
        subject_id: str,
        role: Role,
        scope_type: ScopeType,
        scope_id: str,
    ) -> AccessRule | None:
        """The live rule of exactly this subject, role and scope, if there is one."""
        query = select(access_rules).where(
            _LIVE,
            access_rules.c.subject_type == subject_type.value,
            access_rules.c.subject_id == subject_id,
            access_rules.c.role == role.value,
            access_rules.c.scope_type == scope_type.value,
            access_rules.c.scope_id == scope_id,
        )
        row = self._db.execute(query).first()
        return None if row is None else _rule(row)

    def delete_rule(self, rule_id: int, *, by: str, now: datetime) -> bool:
        """Mark a live rule deleted; False when there is no such live rule."""
        result = self._db.execute(
            update(access_rules)
            .where(access_rules.c.id == rule_id, _LIVE)
            .values(deleted_at=now, deleted_by=by, updated_at=now)
        )
        return bool(result.rowcount)
