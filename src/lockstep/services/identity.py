"""Identity use cases: tokens for applications, the first-start bootstrap, and administration
of applications and access rules (used by `lockstep admin`)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from lockstep.auth.credentials import generate_secret, hash_secret, verify_secret
from lockstep.auth.tokens import IssuedToken, Principal, TokenAuthority
from lockstep.domain.clock import Clock
from lockstep.domain.errors import Forbidden, NotFound, Unauthenticated
from lockstep.domain.identity import (
    AccessRule,
    Application,
    ClientKind,
    Role,
    ScopeType,
    SubjectType,
)
from lockstep.domain.node_pools import DEFAULT_POOL
from lockstep.domain.quotas import unbounded_resources
from lockstep.services.access import access_of
from lockstep.services.token_requests import Credentials
from lockstep.services.token_standing import USER
from lockstep.store.database import Database, UnitOfWork

SYSTEM = "system"
BOOTSTRAP_ACTOR = "lockstep"


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    """What the first start created; `client_secret` is set only when lockstep generated it."""

    cluster_id: str
    department_id: str
    project_id: str
    client_id: str
    client_secret: str | None


class IdentityService:
    def __init__(self, database: Database, *, clock: Clock, tokens: TokenAuthority) -> None:
        self._db = database
        self._clock = clock
        self._tokens = tokens
        self._unmatchable: str | None = None

    def issue_token(self, credentials: Credentials) -> IssuedToken:
        """A token for the application of checked credentials (services/token_requests.py)."""
        return self._tokens.issue(
            self.authenticate(credentials.client_id, credentials.client_secret)
        )

    def authenticate(self, client_id: str, client_secret: str) -> Principal:
        """Who these credentials are — a service account, or the user whose access key they
        are — or `Unauthenticated`. An id no client has costs the same hashing as a wrong
        secret (against a hash of no secret), so that the time of the answer does not tell
        whether a client exists."""
        with self._db.read() as unit:
            application = unit.identity.application(client_id)
        stored = self._unmatchable_hash() if application is None else application.secret_hash
        if not verify_secret(client_secret, stored) or application is None:
            raise Unauthenticated("the client id or secret is not valid")
        if not application.enabled:
            raise Unauthenticated("the client is disabled")
        with self._db.write() as unit:
            unit.identity.signed_in(application.client_id, now=self._clock())
            owner = (
                None
                if application.owner_user_id is None
                else unit.users.get(application.owner_user_id)
            )
        if application.kind is ClientKind.ACCESS_KEY:
            if owner is None:
                raise Unauthenticated("the client id or secret is not valid")
            return Principal(
                SubjectType.USER,
                owner.username,
                owner.username,
                user_id=owner.id,
                generation=owner.token_generation,
                client_id=application.client_id,
                client_generation=application.token_generation,
            )
        return Principal(
            SubjectType.APP,
            application.client_id,
            application.client_id,
            client_id=application.client_id,
            client_generation=application.token_generation,
        )

    def token_generation(self, kind: str, key: str) -> int | None:
        """What a token must carry now (services/token_standing.py): a user's generation, or
        a client's (None when the user or client is gone, or the client disabled)."""
        with self._db.read() as unit:
            if kind == USER:
                return unit.users.token_generation(key)
            return unit.identity.token_generation(key)

    def _unmatchable_hash(self) -> str:
        """A hash, with the parameters of every stored one, of a secret nobody is given."""
        if self._unmatchable is None:
            self._unmatchable = hash_secret(generate_secret())
        return self._unmatchable

    def check_system_wide(self, caller: Principal) -> None:
        """`Forbidden` unless the caller's access rules cover the whole system (what
        /metrics tells spans every project)."""
        with self._db.read() as unit:
            if not access_of(unit, caller).is_system_wide:
                raise Forbidden("you may not read lockstep's metrics: a system-wide role is needed")

    def bootstrap(
        self, *, client_id: str | None, client_secret: str | None
    ) -> BootstrapResult | None:
        """On an empty store: one cluster, department and project, and an administrator
        application. Returns None when the store was not empty."""
        with self._db.write() as unit:
            unit.hold_start_up_lock()  # replicas starting on an empty store bootstrap once
            if unit.organization.count_clusters() or unit.identity.count_applications():
                return None
            now = self._clock()
            cluster = unit.organization.add_cluster(str(uuid.uuid4()), "local", now)
            department = unit.organization.add_department(
                name="default",
                cluster_id=cluster.id,
                created_by=BOOTSTRAP_ACTOR,
                resources=[],
                now=now,
            )
            project = unit.organization.add_project(
                name="default",
                cluster_id=cluster.id,
                department_id=department.id,
                created_by=BOOTSTRAP_ACTOR,
                requested_namespace=None,
                resources=unbounded_resources(),
                now=now,
            )
            unit.node_pools.ensure(cluster.id, [DEFAULT_POOL], by=BOOTSTRAP_ACTOR, now=now)
            generated = None if client_id and client_secret else generate_secret()
            admin_id = client_id if client_id and client_secret else "admin"
            secret = client_secret if client_id and client_secret else generated
            assert secret is not None
            self._add_application(unit, admin_id, secret)
            unit.identity.add_rule(
                subject_type=SubjectType.APP,
                subject_id=admin_id,
                role=Role.SYSTEM_ADMINISTRATOR,
                scope_type=ScopeType.SYSTEM,
                scope_id=SYSTEM,
                created_by=BOOTSTRAP_ACTOR,
                now=now,
            )
        return BootstrapResult(cluster.id, department.id, project.id, admin_id, generated)

    def _add_application(self, unit: UnitOfWork, client_id: str, secret: str) -> Application:
        return unit.identity.add_application(
            client_id=client_id,
            secret_hash=hash_secret(secret),
            created_by=BOOTSTRAP_ACTOR,
            now=self._clock(),
        )

    def create_application(
        self, client_id: str, *, secret: str | None = None
    ) -> tuple[Application, str]:
        """A new application and its secret (generated unless given), shown only this once."""
        secret = secret or generate_secret()
        with self._db.write() as unit:
            return self._add_application(unit, client_id, secret), secret

    def grant(
        self,
        *,
        client_id: str | None = None,
        user: str | None = None,
        role: Role,
        scope_type: ScopeType,
        scope_id: str,
    ) -> AccessRule:
        """Give `role` in the scope to an application (`client_id`) or a user (their email)."""
        with self._db.write() as unit:
            if user is not None:
                subject_type, subject_id = SubjectType.USER, user.lower()
                if unit.users.named(subject_id) is None:
                    raise NotFound(f"no user is named {user!r}")
            elif client_id is not None:
                subject_type, subject_id = SubjectType.APP, client_id
                if unit.identity.application(client_id) is None:
                    raise NotFound(f"no application is named {client_id!r}")
            else:
                raise ValueError("name an application or a user")
            scope_id = _checked_scope(unit, scope_type, scope_id)
            return unit.identity.add_rule(
                subject_type=subject_type,
                subject_id=subject_id,
                role=role,
                scope_type=scope_type,
                scope_id=scope_id,
                created_by=BOOTSTRAP_ACTOR,
                now=self._clock(),
            )

    def revoke(self, rule_id: int) -> None:
        with self._db.write() as unit:
            if not unit.identity.delete_rule(rule_id, by=BOOTSTRAP_ACTOR, now=self._clock()):
                raise NotFound(f"no access rule has the id {rule_id}")

    def applications(self) -> list[Application]:
        with self._db.read() as unit:
            return unit.identity.applications()

    def rules(self) -> list[AccessRule]:
        with self._db.read() as unit:
            return unit.identity.rules()


def _checked_scope(unit: UnitOfWork, scope_type: ScopeType, scope_id: str) -> str:
    found: object
    match scope_type:
        case ScopeType.SYSTEM:
            return SYSTEM
        case ScopeType.CLUSTER:
            found = unit.organization.cluster(scope_id)
        case ScopeType.DEPARTMENT:
            found = unit.organization.department(scope_id)
        case ScopeType.PROJECT:
            found = unit.organization.project(scope_id)
    if found is None:
        raise NotFound(f"no {scope_type.value} has the id {scope_id!r}")
    return scope_id
