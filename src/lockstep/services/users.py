"""Users: their administration (`/api/v1/users`, `lockstep admin`), a person's sign-in with a
password and its renewal with a refresh token (`POST /api/v1/token`), and their own password
(`/api/v1/me/password`).

Only a system-wide role that may manage users (a System administrator) lists, creates, resets
and deletes users; a user may read and sign out themself. A password is checked against its
Argon2id hash on the caller's worker thread (auth/passwords.py). After `FREE_FAILURES` failed
sign-ins in a row a user waits (domain/users.py, `lockout`), kept in the store so that every
API process knows it; an unknown name is made to wait the same way, in this process's memory,
so that the answers do not tell which names exist.
"""

from __future__ import annotations

import math
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.passwords import (
    hash_password,
    needs_rehash,
    unmatchable_hash,
    verify_password,
)
from lockstep.auth.tokens import IssuedToken, Principal, TokenAuthority
from lockstep.domain.clock import Clock
from lockstep.domain.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    TooManyRequests,
    Unauthenticated,
)
from lockstep.domain.identity import SubjectType
from lockstep.domain.listing import Filter, SortOrder, matches
from lockstep.domain.users import (
    User,
    email_violation,
    generate_password,
    lockout,
    password_violation,
)
from lockstep.services.access import access_of
from lockstep.store.database import Database, UnitOfWork

MAX_USERS = 100_000
"""The most users lockstep holds (each list reads them all)."""
MAX_REMEMBERED_NAMES = 50_000
"""The most unknown names whose failed sign-ins a process remembers (the oldest forgotten)."""

USER_FIELDS: dict[str, Callable[[User], object]] = {
    "username": lambda u: u.username,
    "createdBy": lambda u: u.created_by,
    "lastLogin": lambda u: u.last_login,
    "creationTime": lambda u: u.created_at,
    "lastUpdated": lambda u: u.updated_at,
    "isLocal": lambda u: u.is_local,
}
"""What `filterBy` may name, and how each is read off a user."""
USER_SORT_FIELDS: dict[str, Callable[[User], object]] = {
    **{name: read for name, read in USER_FIELDS.items() if name != "isLocal"},
    "type": lambda u: "local" if u.is_local else "sso",
}

_TENANT = Scope()
"""Users belong to the tenant: only a system-wide rule covers them."""
_BAD_SIGN_IN = "the user name or password is not valid"


@dataclass(frozen=True, slots=True)
class UserQuery:
    filters: tuple[Filter, ...] = ()
    sort_by: str | None = None
    sort_order: SortOrder = SortOrder.ASC
    offset: int = 0
    limit: int = 500
    search: str | None = None
    is_local: bool | None = None
    """The deprecated `filter=runai.is_local:…`."""


@dataclass(frozen=True, slots=True)
class SignedIn:
    access: IssuedToken
    refresh: IssuedToken


@dataclass(slots=True)
class _Failures:
    count: int
    locked_until: datetime


class UserService:
    def __init__(self, database: Database, *, clock: Clock, tokens: TokenAuthority) -> None:
        self._db = database
        self._clock = clock
        self._tokens = tokens
        self._unknown: OrderedDict[str, _Failures] = OrderedDict()

    # Administration.

    def users(self, caller: Principal, query: UserQuery) -> list[User]:
        with self._db.read() as unit:
            _check_manager(unit, caller, Action.READ)
            found = unit.users.all()
        chosen = [
            user
            for user in found
            if all(matches(f, USER_FIELDS[f.field](user)) for f in query.filters)
            and (not query.search or query.search.lower() in user.username.lower())
            and (query.is_local is None or user.is_local is query.is_local)
        ]
        if query.sort_by is not None:
            read = USER_SORT_FIELDS[query.sort_by]
            chosen.sort(
                key=lambda u: _sortable(read(u)), reverse=query.sort_order is SortOrder.DESC
            )
        return chosen[query.offset : query.offset + query.limit]

    def create(self, caller: Principal, email: str) -> tuple[User, str]:
        """A new local user and the one-time password it signs in with, shown only here."""
        with self._db.read() as unit:  # before any hashing: nobody else makes the server hash
            _check_manager(unit, caller, Action.CREATE)
        violation = email_violation(email)
        if violation is not None:
            raise InvalidRequest.of("email", violation)
        password = generate_password(email.lower())
        hashed = hash_password(password)
        with self._db.write() as unit:
            _check_manager(unit, caller, Action.CREATE)
            if unit.users.count() >= MAX_USERS:
                raise Conflict(f"lockstep holds at most {MAX_USERS} users; delete one first")
            user = unit.users.add(
                user_id=str(uuid.uuid4()),
                username=email.lower(),
                password_hash=hashed,
                created_by=caller.name,
                now=self._clock(),
            )
        return user, password

    def user(self, caller: Principal, user_id: str) -> User:
        with self._db.read() as unit:
            user = unit.users.get(user_id)
            if user is None or caller.user_id != user_id:
                _check_manager(unit, caller, Action.READ, missing=user is None, user_id=user_id)
            assert user is not None
            return user

    def named(self, caller: Principal, username: str) -> User:
        """The user of this email (`lockstep admin`)."""
        with self._db.read() as unit:
            _check_manager(unit, caller, Action.READ)
            user = unit.users.named(username.lower())
        if user is None:
            raise NotFound(f"no user is named {username!r}")
        return user

    def delete(self, caller: Principal, user_id: str) -> None:
        """Delete the user, their access rules and access keys; their tokens are refused from
        now on."""
        with self._db.write() as unit:
            user = unit.users.get(user_id)
            _check_manager(unit, caller, Action.DELETE, missing=user is None, user_id=user_id)
            assert user is not None
            named = [(SubjectType.USER, user.username), (SubjectType.USER, user.id)]
            for rule in unit.identity.rules_of_any(named):
                unit.identity.delete_rule(rule.id, by=caller.name, now=self._clock())
            for key in unit.identity.applications(owner_user_id=user_id):
                unit.identity.delete_application(key.uid)
            unit.users.delete(user_id)

    def reset_password(self, caller: Principal, user_id: str) -> str:
        """A new one-time password for the user (shown only here); they are signed out."""
        with self._db.read() as unit:
            user = unit.users.get(user_id)
            _check_manager(unit, caller, Action.UPDATE, missing=user is None, user_id=user_id)
            assert user is not None
        password = generate_password(user.username)
        hashed = hash_password(password)
        with self._db.write() as unit:
            _check_manager(unit, caller, Action.UPDATE)
            unit.users.set_password(user_id, hashed, now=self._clock())
        return password

    def sign_out(self, caller: Principal, user_id: str) -> None:
        """Refuse every token of the user from now on (any API process, within a second)."""
        with self._db.write() as unit:
            user = unit.users.get(user_id)
            if user is None or caller.user_id != user_id:
                _check_manager(unit, caller, Action.UPDATE, missing=user is None, user_id=user_id)
            unit.users.sign_out(user_id)

    def change_own_password(self, caller: Principal, current: str, new: str) -> None:
        """The caller's new password, once the current one is checked (a wrong one counts as
        a failed sign-in, and makes the user wait as those do). Every token of the caller,
        this one included, is refused from then on: they sign in again with the new one."""
        if caller.subject_type is not SubjectType.USER or caller.user_id is None:
            raise Forbidden("only a user has a password: sign in as one to change it")
        with self._db.read() as unit:
            user = unit.users.get(caller.user_id)
        if user is None or user.token_generation != caller.generation:
            raise Unauthenticated("the access token's user has been signed out")
        try:
            self._check_password(user, current)
        except Unauthenticated as error:
            raise InvalidRequest.of(
                "currentPassword", "is not the user's current password"
            ) from error
        violation = password_violation(new, user.username)
        if violation is not None:
            raise InvalidRequest.of("newPassword", violation)
        if new == current:
            raise InvalidRequest.of("newPassword", "must differ from the current password")
        hashed = hash_password(new)
        with self._db.write() as unit:
            unit.users.set_password(user.id, hashed, now=self._clock())

    # Signing in.

    def sign_in(self, username: str, password: str) -> SignedIn:
        """Tokens for a user whose password matches; `Unauthenticated` (a wrong name or
        password, the same answer for both) or `TooManyRequests` (waiting after failures)."""
        name = username.lower()
        with self._db.read() as unit:
            user = unit.users.named(name)
        if user is None or not user.is_local:
            self._wait_unknown(name)
            verify_password(password, unmatchable_hash())
            self._failed_unknown(name)
            raise Unauthenticated(_BAD_SIGN_IN)
        self._check_password(user, password)
        return self.tokens_for(user)

    def refresh(self, refresh_token: str) -> SignedIn:
        """New tokens for the user of a refresh token that still stands."""
        principal = self._tokens.verify_refresh(refresh_token)
        assert principal.user_id is not None
        with self._db.read() as unit:
            user = unit.users.get(principal.user_id)
        if user is None:
            raise Unauthenticated("the refresh token's user no longer exists")
        if user.token_generation != principal.generation:
            raise Unauthenticated("the refresh token's user has been signed out")
        return self.tokens_for(user)

    def tokens_for(self, user: User) -> SignedIn:
        """An access token and a refresh token for the user (signed in: by a password, or
        through an identity provider)."""
        principal = Principal(
            SubjectType.USER,
            user.username,
            user.username,
            user_id=user.id,
            generation=user.token_generation,
        )
        return SignedIn(self._tokens.issue(principal), self._tokens.issue_refresh(principal))

    def _check_password(self, user: User, password: str) -> None:
        """Check `password` against the user's hash, unless the user must wait; record the
        outcome."""
        now = self._clock()
        if user.locked_until is not None and user.locked_until > now:
            raise _waiting(user.locked_until - now)
        if not verify_password(password, user.password_hash):
            with self._db.write() as unit:
                unit.users.failed_sign_in(
                    user.id, locked_until=now + lockout(user.failed_sign_ins + 1)
                )
            raise Unauthenticated(_BAD_SIGN_IN)
        with self._db.write() as unit:
            unit.users.signed_in(user.id, now=now)
            if needs_rehash(user.password_hash):
                unit.users.rehash(user.id, hash_password(password))

    def _wait_unknown(self, name: str) -> None:
        failures = self._unknown.get(name)
        now = self._clock()
        if failures is not None and failures.locked_until > now:
            raise _waiting(failures.locked_until - now)

    def _failed_unknown(self, name: str) -> None:
        failures = self._unknown.pop(name, None)
        count = 1 if failures is None else failures.count + 1
        self._unknown[name] = _Failures(count, self._clock() + lockout(count))
        if len(self._unknown) > MAX_REMEMBERED_NAMES:
            self._unknown.popitem(last=False)


def _waiting(left: timedelta) -> TooManyRequests:
    seconds = max(1, math.ceil(left.total_seconds()))
    return TooManyRequests(
        f"too many failed sign-ins for this user: try again in {seconds} s",
        retry_after_seconds=seconds,
    )


def _check_manager(
    unit: UnitOfWork,
    caller: Principal,
    action: Action,
    *,
    missing: bool = False,
    user_id: str = "",
) -> None:
    """`Forbidden` unless the caller may `action` users; then `NotFound` if `missing`."""
    access_of(unit, caller).check(action, Resource.USERS, _TENANT)
    if missing:
        raise NotFound(f"no user has the id {user_id!r}")


def _sortable(value: object) -> tuple[bool, object]:
    """Sort missing values (a user never signed in) first."""
    return (value is not None, value if value is not None else "")
