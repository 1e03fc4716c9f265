"""Clients: a client id and a secret that obtain tokens (`client_credentials`, `app_token`).

- **Service accounts** (`/api/v1/service-accounts`, and `/api/v1/apps` that older clients call)
  belong to the tenant and hold access rules of their own; a System administrator (whoever may
  manage applications tenant-wide) creates, disables and deletes them.
- **Access keys** (`/api/v1/access-keys`, and `/api/v1/user-applications`) belong to a user:
  their tokens act as that user, with the user's rules, and stop when the user is signed out,
  deleted, or the key is. Every user manages their own; an administrator lists and deletes
  anyone's (`/api/v1/administration/…`).

A secret is generated (256 bits), shown once, stored as a scrypt hash; regenerating it refuses
the old one and every token obtained with it.
"""

from __future__ import annotations

import re
import secrets

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.credentials import generate_secret, hash_secret
from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock
from lockstep.domain.errors import Conflict, Forbidden, InvalidRequest, NotFound
from lockstep.domain.identity import Application, ClientKind, Role, ScopeType, SubjectType
from lockstep.services.access import access_of
from lockstep.store.database import Database, UnitOfWork

NAME_PATTERN = re.compile(r"^[a-z][-_a-z0-9]*[a-z0-9]$")
"""The contract's pattern of a service account's, application's or access key's name."""
MAX_NAME_LENGTH = 63
MAX_SERVICE_ACCOUNTS = 10_000
MAX_ACCESS_KEYS_PER_USER = 100

_TENANT = Scope()
_NOUN = {ClientKind.SERVICE_ACCOUNT: "service account", ClientKind.ACCESS_KEY: "access key"}


def checked_name(name: str) -> str:
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidRequest.of("name", f"must be at most {MAX_NAME_LENGTH} characters")
    if NAME_PATTERN.fullmatch(name) is None:
        raise InvalidRequest.of(
            "name",
            "must start with a lowercase letter, end with a lowercase letter or digit, and hold "
            f"only lowercase letters, digits, '-' and '_' (the pattern {NAME_PATTERN.pattern})",
        )
    return name


class ClientService:
    def __init__(self, database: Database, *, clock: Clock) -> None:
        self._db = database
        self._clock = clock

    # Service accounts.

    def service_accounts(self, caller: Principal) -> list[Application]:
        with self._db.read() as unit:
            _check_tenant(unit, caller, Action.READ)
            return unit.identity.applications(kind=ClientKind.SERVICE_ACCOUNT)

    def create_service_account(self, caller: Principal, name: str) -> tuple[Application, str]:
        """A new service account (its client id is its name) and its secret, shown once."""
        checked_name(name)
        secret = generate_secret()
        hashed = hash_secret(secret)
        with self._db.write() as unit:
            _check_tenant(unit, caller, Action.CREATE)
            if len(unit.identity.applications(kind=ClientKind.SERVICE_ACCOUNT)) >= (
                MAX_SERVICE_ACCOUNTS
            ):
                raise Conflict(f"lockstep holds at most {MAX_SERVICE_ACCOUNTS} service accounts")
            created = unit.identity.add_application(
                client_id=name,
                secret_hash=hashed,
                created_by=caller.name,
                now=self._clock(),
                name=name,
            )
        return created, secret

    def service_account(self, caller: Principal, uid: str) -> Application:
        with self._db.read() as unit:
            _check_tenant(unit, caller, Action.READ)
            return _found(unit, uid, ClientKind.SERVICE_ACCOUNT)

    def set_enabled(self, caller: Principal, uid: str, *, enabled: bool) -> Application:
        """Enable or disable a service account; a disabled one's tokens are refused."""
        with self._db.write() as unit:
            _check_tenant(unit, caller, Action.UPDATE)
            account = _found(unit, uid, ClientKind.SERVICE_ACCOUNT)
            if not enabled:
                _keep_an_administrator(unit, account)
            unit.identity.set_enabled(uid, enabled, now=self._clock())
            return _found(unit, uid, ClientKind.SERVICE_ACCOUNT)

    def delete_service_account(self, caller: Principal, uid: str) -> Application:
        """Delete a service account and its access rules; its tokens are refused."""
        with self._db.write() as unit:
            _check_tenant(unit, caller, Action.DELETE)
            account = _found(unit, uid, ClientKind.SERVICE_ACCOUNT)
            _keep_an_administrator(unit, account)
            now = self._clock()
            for rule in unit.identity.rules_of_client(account.client_id):
                unit.identity.delete_rule(rule.id, by=caller.name, now=now)
            unit.identity.delete_application(uid)
            return account

    def regenerate_service_account(self, caller: Principal, uid: str) -> tuple[Application, str]:
        secret = generate_secret()
        hashed = hash_secret(secret)
        with self._db.write() as unit:
            _check_tenant(unit, caller, Action.UPDATE)
            account = _found(unit, uid, ClientKind.SERVICE_ACCOUNT)
            unit.identity.set_secret(uid, hashed, now=self._clock())
        return account, secret

    # A user's access keys.

    def access_keys(self, caller: Principal) -> list[Application]:
        owner = _user_of(caller)
        with self._db.read() as unit:
            return unit.identity.applications(kind=ClientKind.ACCESS_KEY, owner_user_id=owner)

    def create_access_key(self, caller: Principal, name: str) -> tuple[Application, str]:
        """A new access key of the caller (its client id generated) and its secret."""
        owner = _user_of(caller)
        checked_name(name)
        secret = generate_secret()
        hashed = hash_secret(secret)
        with self._db.write() as unit:
            mine = unit.identity.applications(kind=ClientKind.ACCESS_KEY, owner_user_id=owner)
            if any(key.name == name for key in mine):
                raise Conflict(f"you already have an access key named {name!r}")
            if len(mine) >= MAX_ACCESS_KEYS_PER_USER:
                raise Conflict(f"a user has at most {MAX_ACCESS_KEYS_PER_USER} access keys")
            created = unit.identity.add_application(
                client_id=secrets.token_hex(16),
                secret_hash=hashed,
                created_by=caller.name,
                now=self._clock(),
                name=name,
                kind=ClientKind.ACCESS_KEY,
                owner_user_id=owner,
            )
        return created, secret

    def access_key(self, caller: Principal, uid: str) -> Application:
        owner = _user_of(caller)
        with self._db.read() as unit:
            return _owned(unit, uid, owner)

    def delete_access_key(self, caller: Principal, uid: str) -> Application:
        owner = _user_of(caller)
        with self._db.write() as unit:
            key = _owned(unit, uid, owner)
            unit.identity.delete_application(uid)
            return key

    def regenerate_access_key(self, caller: Principal, uid: str) -> tuple[Application, str]:
        owner = _user_of(caller)
        secret = generate_secret()
        hashed = hash_secret(secret)
        with self._db.write() as unit:
            key = _owned(unit, uid, owner)
            unit.identity.set_secret(uid, hashed, now=self._clock())
        return key, secret

    # Every user's access keys, for an administrator.

    def all_access_keys(
        self, caller: Principal, *, client_id: str | None, created_by: str | None
    ) -> list[Application]:
        with self._db.read() as unit:
            _check_tenant(unit, caller, Action.READ)
            keys = unit.identity.applications(kind=ClientKind.ACCESS_KEY)
        return [
            key
            for key in keys
            if (client_id is None or key.client_id == client_id)
            and (created_by is None or key.created_by == created_by)
        ]

    def delete_any_access_key(self, caller: Principal, uid: str) -> Application:
        with self._db.write() as unit:
            _check_tenant(unit, caller, Action.DELETE)
            key = _found(unit, uid, ClientKind.ACCESS_KEY)
            unit.identity.delete_application(uid)
            return key


def _check_tenant(unit: UnitOfWork, caller: Principal, action: Action) -> None:
    access_of(unit, caller).check(action, Resource.APPLICATIONS, _TENANT)


def _found(unit: UnitOfWork, uid: str, kind: ClientKind) -> Application:
    client = unit.identity.application_by_uid(uid)
    if client is None or client.kind is not kind:
        raise NotFound(f"no {_NOUN[kind]} has the id {uid!r}")
    return client


def _owned(unit: UnitOfWork, uid: str, owner: str) -> Application:
    """The caller's own access key; another user's is answered as one that does not exist."""
    key = unit.identity.application_by_uid(uid)
    if key is None or key.kind is not ClientKind.ACCESS_KEY or key.owner_user_id != owner:
        raise NotFound(f"no access key of yours has the id {uid!r}")
    return key


def _user_of(caller: Principal) -> str:
    if caller.subject_type is not SubjectType.USER or caller.user_id is None:
        raise Forbidden("only a user has access keys: sign in as one")
    return caller.user_id


def _keep_an_administrator(unit: UnitOfWork, account: Application) -> None:
    """`Forbidden` when the service account holds the last System administrator rule over the
    whole tenant: lockstep keeps someone able to administer it."""
    own = unit.identity.rules_of_client(account.client_id)
    tenant = {ScopeType.SYSTEM, ScopeType.TENANT}
    holds = [r for r in own if r.role is Role.SYSTEM_ADMINISTRATOR and r.scope_type in tenant]
    if not holds:
        return
    others = [
        r
        for r in unit.identity.rules()
        if r.role is Role.SYSTEM_ADMINISTRATOR
        and r.scope_type in tenant
        and r.id not in {h.id for h in holds}
    ]
    if not others:
        raise Forbidden(
            f"{account.name!r} holds the last System administrator rule over the whole tenant: "
            "grant another before disabling or deleting it"
        )
