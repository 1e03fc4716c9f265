"""Access rules evaluated: may this caller do this action on this kind of resource in this scope?

A rule grants its role's permissions in its scope and everything below it (system ⊃ cluster ⊃
department ⊃ project). Which organization units a caller may see follows from this in the
organization service (the department and cluster of a readable project are visible too).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lockstep.auth.roles import BY_ROLE, Action, Resource
from lockstep.domain.errors import Forbidden
from lockstep.domain.identity import AccessRule, Role, ScopeType, SubjectType

__all__ = ["Access", "Action", "Resource", "Scope"]


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a resource lives. Unset levels are above the resource (a cluster has no project)."""

    cluster_id: str | None = None
    department_id: str | None = None
    project_id: str | None = None


def _covers(rule: AccessRule, scope: Scope) -> bool:
    """The rule's scope contains `scope`."""
    match rule.scope_type:
        case ScopeType.SYSTEM | ScopeType.TENANT:
            return True
        case ScopeType.CLUSTER:
            return scope.cluster_id == rule.scope_id
        case ScopeType.DEPARTMENT:
            return scope.department_id == rule.scope_id
        case ScopeType.PROJECT:
            return scope.project_id == rule.scope_id


class Access:
    """The access rules of one caller."""

    def __init__(self, rules: Iterable[AccessRule]) -> None:
        self.rules = tuple(rules)

    def allows(self, action: Action, resource: Resource, scope: Scope) -> bool:
        return any(
            BY_ROLE[rule.role].allows(action, resource) and _covers(rule, scope)
            for rule in self.rules
        )

    def may_grant(self, role: Role, scope: Scope) -> bool:
        """Whether everything `role` allows, this caller may do in `scope` itself: nobody
        grants a role wider than their own, in a scope wider than their own."""
        return all(
            self.allows(action, resource, scope)
            for resource, actions in BY_ROLE[role].permissions.items()
            for action in actions
        )

    def check(self, action: Action, resource: Resource, scope: Scope) -> None:
        """Raise `Forbidden` unless allowed."""
        if not self.allows(action, resource, scope):
            raise Forbidden(f"you may not {action.value} {resource.value} in {_describe(scope)}")

    @classmethod
    def of_operator(cls) -> Access:
        """Everything, everywhere: the rights of `lockstep admin`."""
        from datetime import UTC, datetime

        rule = AccessRule(
            id=0,
            subject_type=SubjectType.OPERATOR,
            subject_id="operator",
            role=Role.SYSTEM_ADMINISTRATOR,
            scope_type=ScopeType.SYSTEM,
            scope_id="system",
            created_by="lockstep",
            created_at=datetime.fromtimestamp(0, UTC),
        )
        return cls([rule])

    @property
    def is_system_wide(self) -> bool:
        return any(rule.scope_type in {ScopeType.SYSTEM, ScopeType.TENANT} for rule in self.rules)


def _describe(scope: Scope) -> str:
    if scope.project_id is not None:
        return f"project {scope.project_id}"
    if scope.department_id is not None:
        return f"department {scope.department_id}"
    if scope.cluster_id is not None:
        return f"cluster {scope.cluster_id}"
    return "this tenant"
