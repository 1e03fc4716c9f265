"""Access rules over the API (`/api/v1/authorization/access-rules`, `/me/access-rules`,
`/permissions`): who holds which role where, granted and revoked by whoever may.

To grant or revoke a rule, the caller needs to create (or delete) access rules in the rule's
scope, and to hold, in that scope, everything the rule's role allows: nobody grants a role
wider than their own in a scope wider than their own, nor revokes one. A caller sees the rules
of the scopes where they may read access rules, and always their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from lockstep.auth.access import Access, Action, Resource, Scope
from lockstep.auth.roles import BY_ID
from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock
from lockstep.domain.errors import Conflict, Forbidden, InvalidRequest, NotFound
from lockstep.domain.identity import AccessRule, Role, ScopeType, SubjectType
from lockstep.domain.listing import Filter, SortOrder, matches
from lockstep.domain.users import email_violation
from lockstep.services.access import access_of, subjects_of_user
from lockstep.store.database import Database, UnitOfWork

SYSTEM = "system"
MAX_GROUP_NAME = 255
MAX_LIVE_RULES = 100_000
"""The most access rules in force at once (each list reads them all)."""


@dataclass(frozen=True, slots=True)
class RuleRequest:
    subject_type: SubjectType
    subject_id: str
    role_id: int
    scope_type: ScopeType
    scope_id: str
    cluster_id: str | None = None


@dataclass(frozen=True, slots=True)
class ShownRule:
    """A rule with what its answer names besides: its scope's name and cluster."""

    rule: AccessRule
    scope_name: str
    cluster_id: str | None


@dataclass(frozen=True, slots=True)
class RuleQuery:
    filters: tuple[Filter, ...] = ()
    sort_by: str | None = None
    sort_order: SortOrder = SortOrder.ASC
    offset: int = 0
    limit: int = 50
    search: str | None = None
    include_deleted: bool = False
    subject_type: str | None = None
    subject_ids: frozenset[str] | None = None
    subject_part: str | None = None
    scope_type: str | None = None
    scope_id: str | None = None
    role_id: int | None = None
    cluster_id: str | None = None
    updated_since: datetime | None = None
    """Only the rules updated since (`lastUpdated`)."""


@dataclass(frozen=True, slots=True)
class RulePage:
    total: int
    rules: list[ShownRule]


RULE_FIELDS: dict[str, Callable[[ShownRule], object]] = {
    "subjectId": lambda s: s.rule.subject_id,
    "subjectType": lambda s: s.rule.subject_type.value,
    "roleId": lambda s: role_id(s.rule.role),
    "scopeId": lambda s: s.rule.scope_id,
    "scopeType": lambda s: s.rule.scope_type.value,
    "roleName": lambda s: s.rule.role.value,
    "scopeName": lambda s: s.scope_name,
    "createdAt": lambda s: s.rule.created_at,
    "deletedAt": lambda s: s.rule.deleted_at,
    "createdBy": lambda s: s.rule.created_by,
    "phase": lambda s: None if s.rule.deleted_at else "Ready",
}
"""What `filterBy` and `sortBy` may name (the contract's `AccessRulesSortFilterFields`)."""

_ROLE_IDS = {definition.role: definition.id for definition in BY_ID.values()}


def role_id(role: Role) -> int:
    return _ROLE_IDS[role]


class AccessRuleService:
    def __init__(self, database: Database, *, clock: Clock) -> None:
        self._db = database
        self._clock = clock

    def create(self, caller: Principal, request: RuleRequest) -> ShownRule:
        """The rule, once the caller may grant it; the same live rule when it exists."""
        definition = BY_ID.get(request.role_id)
        if definition is None:
            known = ", ".join(f"{d.id} ({d.role.value})" for d in BY_ID.values())
            raise InvalidRequest.of("roleId", f"{request.role_id} is no role; roles: {known}")
        with self._db.write() as unit:
            scope, scope_id, scope_name, cluster_id = _scope_of(
                unit, request.scope_type, request.scope_id
            )
            if request.cluster_id is not None and cluster_id not in {None, request.cluster_id}:
                raise InvalidRequest.of(
                    "clusterId", f"must be {cluster_id}, the cluster of the scope, or left out"
                )
            access = access_of(unit, caller)
            _check_granting(access, Action.CREATE, definition.role, scope)
            subject_id = _checked_subject(unit, request.subject_type, request.subject_id)
            existing = unit.identity.same_rule(
                subject_type=request.subject_type,
                subject_id=subject_id,
                role=definition.role,
                scope_type=request.scope_type,
                scope_id=scope_id,
            )
            if existing is None and unit.identity.count_rules() >= MAX_LIVE_RULES:
                raise Conflict(f"lockstep holds at most {MAX_LIVE_RULES} access rules in force")
            rule = existing or unit.identity.add_rule(
                subject_type=request.subject_type,
                subject_id=subject_id,
                role=definition.role,
                scope_type=request.scope_type,
                scope_id=scope_id,
                created_by=caller.name,
                now=self._clock(),
            )
            return ShownRule(rule, scope_name, cluster_id)

    def rule(self, caller: Principal, rule_id: int) -> ShownRule:
        with self._db.read() as unit:
            rule = unit.identity.rule(rule_id)
            shown = None if rule is None else _shown(unit, rule)
            if shown is None or not _visible(unit, access_of(unit, caller), caller, shown):
                raise NotFound(f"no access rule has the id {rule_id}")
            return shown

    def delete(self, caller: Principal, rule_id: int) -> None:
        """Mark the rule deleted, once the caller may revoke it; it is refused at once."""
        with self._db.write() as unit:
            rule = unit.identity.rule(rule_id)
            shown = None if rule is None or rule.deleted_at else _shown(unit, rule)
            access = access_of(unit, caller)
            if shown is None or not _visible(unit, access, caller, shown):
                raise NotFound(f"no access rule has the id {rule_id}")
            _check_granting(access, Action.DELETE, shown.rule.role, _scope(unit, shown.rule))
            if _is_tenant_administrator(shown.rule) and not any(
                _is_tenant_administrator(other) and other.id != rule_id
                for other in unit.identity.rules()
            ):
                raise Forbidden(
                    "this is the last rule of a System administrator over the whole tenant: "
                    "grant another before deleting it"
                )
            unit.identity.delete_rule(rule_id, by=caller.name, now=self._clock())

    def rules(self, caller: Principal, query: RuleQuery) -> RulePage:
        with self._db.read() as unit:
            access = access_of(unit, caller)
            everything = unit.identity.rules(include_deleted=query.include_deleted)
            shown = [s for r in everything if (s := _shown(unit, r)) is not None]
            visible = [s for s in shown if _visible(unit, access, caller, s)]
        chosen = [s for s in visible if _matches(s, query)]
        if query.sort_by is not None:
            read = RULE_FIELDS[query.sort_by]
            chosen.sort(
                key=lambda s: _sortable(read(s)), reverse=query.sort_order is SortOrder.DESC
            )
        return RulePage(len(chosen), chosen[query.offset : query.offset + query.limit])

    def mine(self, caller: Principal, *, offset: int, limit: int, search: str | None) -> RulePage:
        """The caller's own live rules (a user's: by email, by id, by group)."""
        with self._db.read() as unit:
            shown = [s for r in access_of(unit, caller).rules if (s := _shown(unit, r)) is not None]
        query = RuleQuery(search=search)
        chosen = [s for s in shown if _matches(s, query)]
        return RulePage(len(chosen), chosen[offset : offset + limit])

    def permissions(self, caller: Principal) -> dict[Resource, frozenset[Action]]:
        """What the caller may do to each kind of resource, somewhere."""
        with self._db.read() as unit:
            access = access_of(unit, caller)
        held: dict[Resource, set[Action]] = {}
        for rule in access.rules:
            for resource, actions in BY_ID[role_id(rule.role)].permissions.items():
                held.setdefault(resource, set()).update(actions)
        return {resource: frozenset(actions) for resource, actions in held.items() if actions}


def _check_granting(access: Access, action: Action, role: Role, scope: Scope) -> None:
    verb = "grant" if action is Action.CREATE else "revoke"
    access.check(action, Resource.ACCESS_RULES, scope)
    if not access.may_grant(role, scope):
        raise Forbidden(
            f"you may not {verb} the role {role.value!r} there: it allows more than your own "
            "roles do in that scope"
        )


def _is_tenant_administrator(rule: AccessRule) -> bool:
    return rule.role is Role.SYSTEM_ADMINISTRATOR and rule.scope_type in {
        ScopeType.SYSTEM,
        ScopeType.TENANT,
    }


def _checked_subject(unit: UnitOfWork, subject_type: SubjectType, subject_id: str) -> str:
    """The subject id to store: a user named by their id or email (an email no user has yet
    is taken, for a person who will sign in through an identity provider), a group by its
    name, an application or service account by its client id."""
    match subject_type:
        case SubjectType.USER:
            if unit.users.get(subject_id) is not None:
                return subject_id
            if unit.users.named(subject_id.lower()) is not None:
                return subject_id.lower()
            violation = email_violation(subject_id)
            if violation is not None:
                raise NotFound(f"no user has the id or email {subject_id!r}")
            return subject_id.lower()
        case SubjectType.GROUP:
            if not 1 <= len(subject_id) <= MAX_GROUP_NAME:
                raise InvalidRequest.of(
                    "subjectId", f"a group's name has 1 to {MAX_GROUP_NAME} characters"
                )
            return subject_id
        case SubjectType.APP | SubjectType.SERVICE_ACCOUNT:
            if unit.identity.application(subject_id) is None:
                raise NotFound(f"no application or service account is named {subject_id!r}")
            return subject_id
        case _:
            raise InvalidRequest.of("subjectType", "must be user, group, app or service-account")


def _scope_of(
    unit: UnitOfWork, scope_type: ScopeType, scope_id: str
) -> tuple[Scope, str, str, str | None]:
    """The scope to check, the id to store, the scope's name and its cluster; `NotFound`
    when no such unit exists."""
    match scope_type:
        case ScopeType.SYSTEM | ScopeType.TENANT:
            return Scope(), SYSTEM if scope_type is ScopeType.SYSTEM else scope_id, "lockstep", None
        case ScopeType.CLUSTER:
            cluster = unit.organization.cluster(scope_id)
            if cluster is not None:
                return Scope(cluster_id=cluster.id), cluster.id, cluster.name, cluster.id
        case ScopeType.DEPARTMENT:
            department = unit.organization.department(scope_id)
            if department is not None:
                scope = Scope(department.cluster_id, department.id)
                return scope, department.id, department.name, department.cluster_id
        case ScopeType.PROJECT:
            project = unit.organization.project(scope_id)
            if project is not None:
                scope = Scope(project.cluster_id, project.department_id, project.id)
                return scope, project.id, project.name, project.cluster_id
    raise NotFound(f"no {scope_type.value} has the id {scope_id!r}")


def _shown(unit: UnitOfWork, rule: AccessRule) -> ShownRule | None:
    """The rule with its scope's name; None when its scope is gone (a deleted project)."""
    try:
        _, _, name, cluster_id = _scope_of(unit, rule.scope_type, rule.scope_id)
    except NotFound:
        return None
    return ShownRule(rule, name, cluster_id)


def _scope(unit: UnitOfWork, rule: AccessRule) -> Scope:
    return _scope_of(unit, rule.scope_type, rule.scope_id)[0]


def _visible(unit: UnitOfWork, access: Access, caller: Principal, shown: ShownRule) -> bool:
    """The caller may read access rules in the rule's scope, or the rule is their own."""
    rule = shown.rule
    if access.allows(Action.READ, Resource.ACCESS_RULES, _scope(unit, rule)):
        return True
    if caller.subject_type is SubjectType.USER and caller.user_id is not None:
        user = unit.users.get(caller.user_id)
        own = subjects_of_user(caller, () if user is None else user.groups)
    else:
        own = [(caller.subject_type, caller.subject_id)]
    return (rule.subject_type, rule.subject_id) in own


def _matches(shown: ShownRule, query: RuleQuery) -> bool:
    rule = shown.rule
    checks = (
        all(matches(f, RULE_FIELDS[f.field](shown)) for f in query.filters),
        not query.search
        or any(
            query.search.lower() in text.lower()
            for text in (rule.subject_id, rule.role.value, shown.scope_name)
        ),
        query.subject_type is None or rule.subject_type.value == query.subject_type,
        query.subject_ids is None or rule.subject_id in query.subject_ids,
        query.subject_part is None or query.subject_part.lower() in rule.subject_id.lower(),
        query.scope_type is None or rule.scope_type.value == query.scope_type,
        query.scope_id is None or rule.scope_id == query.scope_id,
        query.role_id is None or role_id(rule.role) == query.role_id,
        query.cluster_id is None or shown.cluster_id == query.cluster_id,
        query.updated_since is None
        or (rule.updated_at is not None and rule.updated_at >= query.updated_since),
    )
    return all(checks)


def _sortable(value: object) -> tuple[bool, object]:
    return (value is not None, value if value is not None else "")
