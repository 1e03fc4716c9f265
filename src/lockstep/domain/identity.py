"""Who may do what: applications (service accounts), roles, scopes and access rules."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Role(StrEnum):
    """Roles as Run:ai names them."""

    SYSTEM_ADMINISTRATOR = "System administrator"
    L1_RESEARCHER = "L1 researcher"
    VIEWER = "Viewer"


class ScopeType(StrEnum):
    SYSTEM = "system"
    CLUSTER = "cluster"
    DEPARTMENT = "department"
    PROJECT = "project"


class SubjectType(StrEnum):
    APP = "app"
    USER = "user"
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
    """`subject` holds `role` in the scope `scope_type`/`scope_id`."""

    id: int
    subject_type: SubjectType
    subject_id: str
    role: Role
    scope_type: ScopeType
    scope_id: str
    created_by: str
    created_at: datetime
