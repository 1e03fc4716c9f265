"""The users repository: people who sign in, their password hashes, the generation their
tokens carry and their failed sign-ins."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Connection, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from lockstep.domain.errors import Conflict
from lockstep.domain.users import User
from lockstep.store.tables import users


def _user(row: Any) -> User:
    return User(
        id=row.id,
        username=row.username,
        password_hash=row.password_hash,
        created_by=row.created_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
        last_login=row.last_login,
        is_local=bool(row.is_local),
        groups=tuple(orjson.loads(row.groups)),
        token_generation=int(row.token_generation),
        failed_sign_ins=int(row.failed_sign_ins),
        locked_until=row.locked_until,
    )


class UserRepository:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    def add(
        self,
        *,
        user_id: str,
        username: str,
        password_hash: str,
        created_by: str,
        now: datetime,
        is_local: bool = True,
    ) -> User:
        """A new user; `is_local`: one who signs in with a password (else through a provider,
        with an empty `password_hash` that no password matches)."""
        values = {
            "id": user_id,
            "is_local": is_local,
            "username": username,
            "password_hash": password_hash,
            "created_by": created_by,
            "created_at": now,
            "updated_at": now,
        }
        nested = self._db.begin_nested()
        try:
            row = self._db.execute(insert(users).returning(users), values).one()
        except IntegrityError as error:
            nested.rollback()
            raise Conflict(f"a user named {username!r} already exists") from error
        nested.commit()
        return _user(row)

    def get(self, user_id: str) -> User | None:
        row = self._db.execute(select(users).where(users.c.id == user_id)).first()
        return None if row is None else _user(row)

    def named(self, username: str) -> User | None:
        row = self._db.execute(select(users).where(users.c.username == username)).first()
        return None if row is None else _user(row)

    def all(self) -> list[User]:
        return [_user(r) for r in self._db.execute(select(users).order_by(users.c.id)).all()]

    def count(self) -> int:
        return int(self._db.execute(select(func.count()).select_from(users)).scalar_one())

    def token_generation(self, user_id: str) -> int | None:
        """The generation the user's tokens must carry; None when the user is gone."""
        query = select(users.c.token_generation).where(users.c.id == user_id)
        found = self._db.execute(query).scalar_one_or_none()
        return None if found is None else int(found)

    def set_groups(self, user_id: str, groups: list[str]) -> None:
        """The groups the user's identity provider says they belong to."""
        self._db.execute(
            update(users).where(users.c.id == user_id).values(groups=orjson.dumps(groups).decode())
        )

    def delete(self, user_id: str) -> bool:
        return bool(self._db.execute(delete(users).where(users.c.id == user_id)).rowcount)

    def set_password(self, user_id: str, password_hash: str, *, now: datetime) -> None:
        """A new password; every earlier token of the user is refused from now on."""
        self._db.execute(
            update(users)
            .where(users.c.id == user_id)
            .values(
                password_hash=password_hash,
                token_generation=users.c.token_generation + 1,
                failed_sign_ins=0,
                locked_until=None,
                updated_at=now,
            )
        )

    def rehash(self, user_id: str, password_hash: str) -> None:
        """The same password hashed with today's parameters."""
        self._db.execute(
            update(users).where(users.c.id == user_id).values(password_hash=password_hash)
        )

    def sign_out(self, user_id: str) -> None:
        """Refuse every token the user holds now."""
        self._db.execute(
            update(users)
            .where(users.c.id == user_id)
            .values(token_generation=users.c.token_generation + 1)
        )

    def signed_in(self, user_id: str, *, now: datetime) -> None:
        self._db.execute(
            update(users)
            .where(users.c.id == user_id)
            .values(last_login=now, failed_sign_ins=0, locked_until=None)
        )

    def failed_sign_in(self, user_id: str, *, locked_until: datetime) -> None:
        """One more failed sign-in in a row; no sign-in is checked before `locked_until`."""
        self._db.execute(
            update(users)
            .where(users.c.id == user_id)
            .values(failed_sign_ins=users.c.failed_sign_ins + 1, locked_until=locked_until)
        )
