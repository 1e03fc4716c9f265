"""Access rules evaluated (auth/access.py): what each role may do, how far each scope type
reaches (system ⊃ cluster ⊃ department ⊃ project), several rules together, and the
`Forbidden` message."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lockstep.auth.access import Access, Action, Resource, Scope
from lockstep.domain.errors import Forbidden, LockstepError
from lockstep.domain.identity import AccessRule, Role, ScopeType, SubjectType

ALL = set(Action)
READ = {Action.READ}
NONE: set[Action] = set()

# What each role may do anywhere its rule reaches, resource by resource.
EXPECTED: dict[Role, dict[Resource, set[Action]]] = {
    role: dict.fromkeys(Resource, NONE) | given
    for role, given in {
        Role.SYSTEM_ADMINISTRATOR: {**dict.fromkeys(Resource, ALL), Resource.AUDIT_LOG: READ},
        Role.DEPARTMENT_ADMINISTRATOR: {
            Resource.DEPARTMENTS: ALL,
            Resource.PROJECTS: ALL,
            Resource.WORKLOADS: ALL,
            Resource.SECRETS: ALL,
            Resource.CONFIG_MAPS: ALL,
            Resource.ACCESS_RULES: ALL,
            Resource.CLUSTERS: READ,
        },
        Role.EDITOR: {
            Resource.DEPARTMENTS: ALL,
            Resource.PROJECTS: ALL,
            Resource.WORKLOADS: READ,
            Resource.SECRETS: READ,
            Resource.CONFIG_MAPS: READ,
            Resource.CLUSTERS: READ,
        },
        Role.RESEARCH_MANAGER: {
            Resource.SECRETS: ALL,
            Resource.CONFIG_MAPS: ALL,
            Resource.WORKLOADS: READ,
            Resource.PROJECTS: READ,
            Resource.DEPARTMENTS: READ,
            Resource.CLUSTERS: READ,
        },
        Role.L1_RESEARCHER: {
            Resource.WORKLOADS: ALL,
            Resource.SECRETS: ALL,
            Resource.CONFIG_MAPS: ALL,
            Resource.PROJECTS: READ,
            Resource.DEPARTMENTS: READ,
            Resource.CLUSTERS: READ,
        },
        Role.L2_RESEARCHER: {
            Resource.WORKLOADS: ALL,
            Resource.SECRETS: READ,
            Resource.CONFIG_MAPS: READ,
            Resource.PROJECTS: READ,
            Resource.DEPARTMENTS: READ,
            Resource.CLUSTERS: READ,
        },
        Role.ML_ENGINEER: {
            Resource.PROJECTS: READ,
            Resource.DEPARTMENTS: READ,
            Resource.CLUSTERS: READ,
        },
        Role.VIEWER: {
            Resource.WORKLOADS: READ,
            Resource.SECRETS: READ,
            Resource.CONFIG_MAPS: READ,
            Resource.PROJECTS: READ,
            Resource.DEPARTMENTS: READ,
            Resource.CLUSTERS: READ,
        },
    }.items()
}
"""Written out again from Run:ai's documentation of the roles, so that a change to the table
the code reads (auth/roles.py) shows here."""

# The organization: clusters c1, c2; departments d1, d2 in c1 and d3 in c2;
# projects p1, p2 in d1, p3 in d2, p4 in d3.
SCOPES: dict[str, Scope] = {
    "tenant": Scope(),
    "c1": Scope(cluster_id="c1"),
    "c2": Scope(cluster_id="c2"),
    "d1": Scope(cluster_id="c1", department_id="d1"),
    "d2": Scope(cluster_id="c1", department_id="d2"),
    "d3": Scope(cluster_id="c2", department_id="d3"),
    "p1": Scope(cluster_id="c1", department_id="d1", project_id="p1"),
    "p2": Scope(cluster_id="c1", department_id="d1", project_id="p2"),
    "p3": Scope(cluster_id="c1", department_id="d2", project_id="p3"),
    "p4": Scope(cluster_id="c2", department_id="d3", project_id="p4"),
}

# rule scope → the scopes it reaches
REACH: dict[tuple[ScopeType, str], set[str]] = {
    (ScopeType.SYSTEM, "system"): set(SCOPES),
    (ScopeType.CLUSTER, "c1"): {"c1", "d1", "d2", "p1", "p2", "p3"},
    (ScopeType.DEPARTMENT, "d1"): {"d1", "p1", "p2"},
    (ScopeType.PROJECT, "p1"): {"p1"},
}


def rule(role: Role, scope_type: ScopeType, scope_id: str) -> AccessRule:
    return AccessRule(
        id=1,
        subject_type=SubjectType.APP,
        subject_id="ci-bot",
        role=role,
        scope_type=scope_type,
        scope_id=scope_id,
        created_by="test",
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
    )


def system(role: Role) -> Access:
    return Access([rule(role, ScopeType.SYSTEM, "system")])


@pytest.mark.parametrize("role", list(Role), ids=str)
@pytest.mark.parametrize("resource", list(Resource), ids=str)
@pytest.mark.parametrize("action", list(Action), ids=str)
def test_role_permissions(role: Role, resource: Resource, action: Action) -> None:
    access = system(role)
    expected = action in EXPECTED[role][resource]
    for scope in SCOPES.values():
        assert access.allows(action, resource, scope) is expected


@pytest.mark.parametrize(("rule_scope", "reached"), REACH.items(), ids=str)
@pytest.mark.parametrize("role", list(Role), ids=str)
def test_scope_reach(rule_scope: tuple[ScopeType, str], reached: set[str], role: Role) -> None:
    access = Access([rule(role, *rule_scope)])
    for name, scope in SCOPES.items():
        assert access.allows(Action.READ, Resource.PROJECTS, scope) is (name in reached), name


def test_ids_are_compared_level_by_level() -> None:
    """A project rule for id '7' says nothing about department '7' or cluster '7'."""
    access = Access([rule(Role.L1_RESEARCHER, ScopeType.PROJECT, "7")])
    assert access.allows(Action.CREATE, Resource.WORKLOADS, Scope("c", "d", "7"))
    assert not access.allows(Action.READ, Resource.WORKLOADS, Scope("7", "7", "8"))
    assert not access.allows(Action.READ, Resource.DEPARTMENTS, Scope(department_id="7"))
    assert not access.allows(Action.READ, Resource.CLUSTERS, Scope(cluster_id="7"))


def test_no_rules_allow_nothing() -> None:
    access = Access([])
    for action in Action:
        for resource in Resource:
            assert not access.allows(action, resource, SCOPES["p1"])
    assert not access.is_system_wide


def test_rules_add_up() -> None:
    access = Access(
        [
            rule(Role.VIEWER, ScopeType.SYSTEM, "system"),
            rule(Role.L1_RESEARCHER, ScopeType.PROJECT, "p1"),
        ]
    )
    assert access.allows(Action.CREATE, Resource.WORKLOADS, SCOPES["p1"])
    assert not access.allows(Action.CREATE, Resource.WORKLOADS, SCOPES["p2"])
    assert access.allows(Action.READ, Resource.WORKLOADS, SCOPES["p4"])
    assert not access.allows(Action.CREATE, Resource.PROJECTS, SCOPES["p1"])


def test_a_narrow_strong_rule_does_not_widen_a_broad_weak_one() -> None:
    access = Access(
        [
            rule(Role.VIEWER, ScopeType.CLUSTER, "c1"),
            rule(Role.SYSTEM_ADMINISTRATOR, ScopeType.DEPARTMENT, "d1"),
        ]
    )
    assert access.allows(Action.DELETE, Resource.PROJECTS, SCOPES["p2"])
    assert not access.allows(Action.DELETE, Resource.PROJECTS, SCOPES["p3"])
    assert access.allows(Action.READ, Resource.PROJECTS, SCOPES["p3"])
    assert not access.is_system_wide


@pytest.mark.parametrize(
    ("action", "resource", "scope", "message"),
    [
        (Action.CREATE, Resource.WORKLOADS, "p2", "you may not create workloads in project p2"),
        (
            Action.DELETE,
            Resource.DEPARTMENTS,
            "d1",
            "you may not delete departments in department d1",
        ),
        (Action.UPDATE, Resource.CLUSTERS, "c1", "you may not update clusters in cluster c1"),
        (
            Action.CREATE,
            Resource.ACCESS_RULES,
            "tenant",
            "you may not create access rules in this tenant",
        ),
        (
            Action.READ,
            Resource.APPLICATIONS,
            "tenant",
            "you may not read applications in this tenant",
        ),
    ],
)
def test_check_raises_forbidden_saying_what_and_where(
    action: Action, resource: Resource, scope: str, message: str
) -> None:
    access = Access([rule(Role.VIEWER, ScopeType.PROJECT, "p1")])
    with pytest.raises(Forbidden) as caught:
        access.check(action, resource, SCOPES[scope])
    assert str(caught.value) == message
    assert isinstance(caught.value, LockstepError)
    assert not caught.value.transient


def test_check_passes_quietly_when_allowed() -> None:
    Access([rule(Role.L1_RESEARCHER, ScopeType.PROJECT, "p1")]).check(
        Action.DELETE, Resource.WORKLOADS, SCOPES["p1"]
    )


def test_operator_may_do_everything_everywhere() -> None:
    """Everything a System administrator may: all of every resource, and reading the audit
    log, which nobody changes."""
    access = Access.of_operator()
    assert access.is_system_wide
    for action in Action:
        for resource in Resource:
            for scope in SCOPES.values():
                changes_the_log = resource is Resource.AUDIT_LOG and action is not Action.READ
                assert access.allows(action, resource, scope) is not changes_the_log


@pytest.mark.parametrize("scope_type", [ScopeType.CLUSTER, ScopeType.DEPARTMENT, ScopeType.PROJECT])
def test_only_a_system_rule_is_system_wide(scope_type: ScopeType) -> None:
    assert not Access([rule(Role.SYSTEM_ADMINISTRATOR, scope_type, "x")]).is_system_wide
    assert system(Role.VIEWER).is_system_wide


def test_a_tenant_rule_reaches_as_far_as_a_system_one() -> None:
    access = Access([rule(Role.VIEWER, ScopeType.TENANT, "1001")])
    assert access.is_system_wide
    assert all(access.allows(Action.READ, Resource.PROJECTS, scope) for scope in SCOPES.values())


@pytest.mark.parametrize(
    ("holder", "scope", "role", "where", "allowed"),
    [
        (
            Role.SYSTEM_ADMINISTRATOR,
            (ScopeType.SYSTEM, "system"),
            Role.SYSTEM_ADMINISTRATOR,
            "tenant",
            True,
        ),
        (
            Role.DEPARTMENT_ADMINISTRATOR,
            (ScopeType.DEPARTMENT, "d1"),
            Role.L1_RESEARCHER,
            "p1",
            True,
        ),
        (Role.DEPARTMENT_ADMINISTRATOR, (ScopeType.DEPARTMENT, "d1"), Role.EDITOR, "d1", True),
        (
            Role.DEPARTMENT_ADMINISTRATOR,
            (ScopeType.DEPARTMENT, "d1"),
            Role.L1_RESEARCHER,
            "p3",
            False,
        ),
        (
            Role.DEPARTMENT_ADMINISTRATOR,
            (ScopeType.DEPARTMENT, "d1"),
            Role.SYSTEM_ADMINISTRATOR,
            "p1",
            False,
        ),
        (Role.DEPARTMENT_ADMINISTRATOR, (ScopeType.DEPARTMENT, "d1"), Role.VIEWER, "c1", False),
        (Role.L1_RESEARCHER, (ScopeType.PROJECT, "p1"), Role.L2_RESEARCHER, "p1", True),
        (Role.L2_RESEARCHER, (ScopeType.PROJECT, "p1"), Role.L1_RESEARCHER, "p1", False),
        (Role.VIEWER, (ScopeType.SYSTEM, "system"), Role.VIEWER, "p1", True),
        (Role.VIEWER, (ScopeType.PROJECT, "p1"), Role.ML_ENGINEER, "p1", True),
        (Role.ML_ENGINEER, (ScopeType.PROJECT, "p1"), Role.VIEWER, "p1", False),
    ],
)
def test_a_role_may_be_granted_only_where_everything_it_allows_is_held(
    holder: Role, scope: tuple[ScopeType, str], role: Role, where: str, allowed: bool
) -> None:
    """`may_grant` alone: whether the caller may create access rules there is checked apart."""
    assert Access([rule(holder, *scope)]).may_grant(role, SCOPES[where]) is allowed
