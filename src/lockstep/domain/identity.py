"""Who may do what: applications (service accounts), roles, scopes and access rules."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Role(StrEnum):
    """The predefined roles, as Run:ai names them (their permissions: auth/roles.py)."""

    SYSTEM_ADMINISTRATOR = "System administrator"
    DEPARTMENT_ADMINISTRATOR = "Department administrator"
    EDITOR = "Editor"
    RESEARCH_MANAGER = "Research manager"
    L1_RESEARCHER = "L1 researcher"
    L2_RESEARCHER = "L2 researcher"
    ML_ENGINEER = "ML engineer"
    VIEWER = "Viewer"


class ScopeType(StrEnum):
    SYSTEM = "system"
    TENANT = "tenant"
    """The whole tenant: with lockstep's one tenant, the same reach as `system`."""
    CLUSTER = "cluster"
    DEPARTMENT = "department"
    PROJECT = "project"


class SubjectType(StrEnum):
    APP = "app"
    SERVICE_ACCOUNT = "service-account"
    USER = "user"
    GROUP = "group"
    """A group a user belongs to (their identity provider says which)."""
    OPERATOR = "operator"
    """Whoever runs `lockstep admin` with direct access to the store; never in a token."""


class ClientKind(StrEnum):
    """What a client id and secret stand for."""

    SERVICE_ACCOUNT = "service-account"
    """An application of the tenant, with access rules of its own (also `/api/v1/apps`)."""
    ACCESS_KEY = "access-key"
    """A user's key: its tokens act as the user (also `/api/v1/user-applications`)."""


@dataclass(frozen=True, slots=True)
class Application:
    """A client id and a hashed secret: a service account, or a user's access key
    (`owner_user_id`). `token_generation` grows when the secret is regenerated, which refuses
    every token obtained before."""

    id: int
    client_id: str
    secret_hash: str
    created_by: str
    created_at: datetime
    uid: str = ""
    """The id the API shows."""
    name: str = ""
    kind: ClientKind = ClientKind.SERVICE_ACCOUNT
    owner_user_id: str | None = None
    enabled: bool = True
    updated_at: datetime | None = None
    last_login: datetime | None = None
    token_generation: int = 0


@dataclass(frozen=True, slots=True)
class AccessRule:
    """`subject` holds `role` in the scope `scope_type`/`scope_id`, until the rule is deleted
    (`deleted_at`: it is kept, and listed when deleted ones are asked for)."""

    id: int
    subject_type: SubjectType
    subject_id: str
    role: Role
    scope_type: ScopeType
    scope_id: str
    created_by: str
    created_at: datetime
    updated_at: datetime | None = None
    deleted_at: datetime | None = None
    deleted_by: str | None = None
