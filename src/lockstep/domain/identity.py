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


@dataclass(frozen=True, slots=True)
class Application:
    """A service account: a client id and a hashed secret."""

    id: int
    client_id: str
    secret_hash: str
    created_by: str
    created_at: datetime


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
