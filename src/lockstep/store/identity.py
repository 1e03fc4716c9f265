"""The identity repository: clients (service accounts and users' access keys: a client id and
a hashed secret) and access rules (kept when deleted; the live ones are those without
`deleted_at`)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from lockstep.domain.errors import Conflict
from lockstep.domain.identity import (
    AccessRule,
    Application,
    ClientKind,
    Role,
    ScopeType,
    SubjectType,
)
from lockstep.store.tables import access_rules, applications


def _application(row: Any) -> Application:
    return Application(
        id=row.id,
        client_id=row.client_id,
        secret_hash=row.secret_hash,
        created_by=row.created_by,
        created_at=row.created_at,
        uid=row.uid,
        name=row.name,
        kind=ClientKind(row.kind),
        owner_user_id=row.owner_user_id,
        enabled=bool(row.enabled),
        updated_at=row.updated_at,
        last_login=row.last_login,
        token_generation=int(row.token_generation),
    )


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
_CLIENT_SUBJECTS = (SubjectType.APP.value, SubjectType.SERVICE_ACCOUNT.value)
_RULES_OF = (
    select(access_rules)
    .where(
        access_rules.c.subject_type == bindparam("type"),
        access_rules.c.subject_id == bindparam("id"),
        _LIVE,
    )
    .order_by(access_rules.c.id)
)


_RULES_OF_CLIENT = (
    select(access_rules)
    .where(
        access_rules.c.subject_type.in_(_CLIENT_SUBJECTS),
        access_rules.c.subject_id == bindparam("id"),
        _LIVE,
    )
    .order_by(access_rules.c.id)
)


class IdentityRepository:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    def add_application(
        self,
        *,
        client_id: str,
        secret_hash: str,
        created_by: str,
        now: datetime,
        name: str | None = None,
        kind: ClientKind = ClientKind.SERVICE_ACCOUNT,
        owner_user_id: str | None = None,
    ) -> Application:
        values = {
            "client_id": client_id,
            "secret_hash": secret_hash,
            "created_by": created_by,
            "created_at": now,
            "updated_at": now,
            "uid": str(uuid.uuid4()),
            "name": name or client_id,
            "kind": kind.value,
            "owner_user_id": owner_user_id,
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

    def application_by_uid(self, uid: str) -> Application | None:
        row = self._db.execute(select(applications).where(applications.c.uid == uid)).first()
        return None if row is None else _application(row)

    def applications(
        self, *, kind: ClientKind | None = None, owner_user_id: str | None = None
    ) -> list[Application]:
        query = select(applications).order_by(applications.c.id)
        if kind is not None:
            query = query.where(applications.c.kind == kind.value)
        if owner_user_id is not None:
            query = query.where(applications.c.owner_user_id == owner_user_id)
        return [_application(r) for r in self._db.execute(query).all()]

    def count_applications(self, *, owner_user_id: str | None = None) -> int:
        query = select(func.count()).select_from(applications)
        if owner_user_id is not None:
            query = query.where(applications.c.owner_user_id == owner_user_id)
        return int(self._db.execute(query).scalar_one())

    def token_generation(self, client_id: str) -> int | None:
        """The generation a client's tokens must carry; None when it is gone or disabled."""
        query = select(applications.c.token_generation).where(
            applications.c.client_id == client_id, applications.c.enabled.is_(True)
        )
        found = self._db.execute(query).scalar_one_or_none()
        return None if found is None else int(found)

    def set_enabled(self, uid: str, enabled: bool, *, now: datetime) -> None:
        self._db.execute(
            update(applications)
            .where(applications.c.uid == uid)
            .values(enabled=enabled, updated_at=now)
        )

    def set_secret(self, uid: str, secret_hash: str, *, now: datetime) -> None:
        """A new secret: the old one, and every token obtained with it, is refused."""
        self._db.execute(
            update(applications)
            .where(applications.c.uid == uid)
            .values(
                secret_hash=secret_hash,
                token_generation=applications.c.token_generation + 1,
                updated_at=now,
            )
        )

    def signed_in(self, client_id: str, *, now: datetime) -> None:
        self._db.execute(
            update(applications).where(applications.c.client_id == client_id).values(last_login=now)
        )

    def delete_application(self, uid: str) -> bool:
        result = self._db.execute(delete(applications).where(applications.c.uid == uid))
        return bool(result.rowcount)

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

    def rules_of_client(self, client_id: str) -> list[AccessRule]:
        """The live rules of a service account, named as an `app` or a `service-account`
        (a prebuilt statement: every request of a service account asks)."""
        return [_rule(r) for r in self._db.execute(_RULES_OF_CLIENT, {"id": client_id}).all()]

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

    def count_rules(self) -> int:
        """How many rules are in force."""
        query = select(func.count()).select_from(access_rules).where(_LIVE)
        return int(self._db.execute(query).scalar_one())

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
