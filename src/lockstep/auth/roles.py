"""The predefined roles: what each may do to each kind of resource, the one table that access
checks read (auth/access.py) and that `/api/v1/authorization/roles` shows.

The roles are Run:ai's, with their names and ids, and the permissions Run:ai documents for
them, on the kinds of resource lockstep serves: a role that Run:ai gives only over what
lockstep does not serve (an ML engineer's inferences) holds here only the reading it keeps.
A rule of a role grants its permissions in its scope and everything below it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from lockstep.domain.identity import Role


class Action(StrEnum):
    READ = "read"
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"


class Resource(StrEnum):
    """The kinds of resource access is checked on, named as messages name them."""

    WORKLOADS = "workloads"
    PROJECTS = "projects"
    DEPARTMENTS = "departments"
    CLUSTERS = "clusters"
    ACCESS_RULES = "access rules"
    APPLICATIONS = "applications"
    SECRETS = "secrets"
    CONFIG_MAPS = "config maps"
    USERS = "users"
    IDENTITY_PROVIDERS = "identity providers"
    AUDIT_LOG = "the audit log"


@dataclass(frozen=True, slots=True)
class ContractResource:
    """How the contract's `Permission` names a kind of resource."""

    resource_type: str
    display_name: str
    group_id: str


CONTRACT_RESOURCES: dict[Resource, ContractResource] = {
    Resource.WORKLOADS: ContractResource("workloads", "Workloads", "workload"),
    Resource.PROJECTS: ContractResource("project", "Projects", "organization"),
    Resource.DEPARTMENTS: ContractResource("department", "Departments", "organization"),
    Resource.CLUSTERS: ContractResource("cluster", "Clusters", "physical-resource"),
    Resource.ACCESS_RULES: ContractResource("access_rules", "Access rules", "iam"),
    Resource.APPLICATIONS: ContractResource("apps", "Applications", "iam"),
    Resource.SECRETS: ContractResource("credentials", "Credentials", "workload-asset"),
    Resource.CONFIG_MAPS: ContractResource(
        "cm-volume-assets", "ConfigMap data sources", "workload-asset"
    ),
    Resource.USERS: ContractResource("users", "Users", "iam"),
    Resource.IDENTITY_PROVIDERS: ContractResource("security-settings", "Security settings", "iam"),
    Resource.AUDIT_LOG: ContractResource("events-history", "Event history", "iam"),
}
"""Secrets and config maps, lockstep's own resources, take the contract's nearest kinds;
identity providers, the settings they are part of; the audit log, the contract's
`events-history`, the event history of the tenant."""

DEFINED_AT = datetime(2026, 12, 6, tzinfo=UTC)
"""When this table of roles was written: the `createdAt` and `updatedAt` of every role."""
DEFINED_BY = "lockstep"

ALL = frozenset(Action)
READ = frozenset({Action.READ})
NONE: frozenset[Action] = frozenset()


@dataclass(frozen=True, slots=True)
class RoleDefinition:
    id: int
    role: Role
    description: str
    permissions: dict[Resource, frozenset[Action]]

    def allows(self, action: Action, resource: Resource) -> bool:
        return action in self.permissions.get(resource, NONE)


def _of(**given: frozenset[Action]) -> dict[Resource, frozenset[Action]]:
    """Permissions by resource; every resource not named: none."""
    named = {Resource[name.upper()]: actions for name, actions in given.items()}
    return {resource: named.get(resource, NONE) for resource in Resource}


ROLES: tuple[RoleDefinition, ...] = (
    RoleDefinition(
        1,
        Role.SYSTEM_ADMINISTRATOR,
        "Controls all aspects of the system.",
        {**dict.fromkeys(Resource, ALL), Resource.AUDIT_LOG: READ},
    ),
    RoleDefinition(
        2,
        Role.DEPARTMENT_ADMINISTRATOR,
        "Creates, views, edits and deletes departments, projects and their workloads, secrets "
        "and config maps; assigns roles no wider than its own within them.",
        _of(
            departments=ALL,
            projects=ALL,
            workloads=ALL,
            secrets=ALL,
            config_maps=ALL,
            access_rules=ALL,
            clusters=READ,
        ),
    ),
    RoleDefinition(
        3,
        Role.EDITOR,
        "Manages departments and projects; views their workloads.",
        _of(
            departments=ALL,
            projects=ALL,
            workloads=READ,
            secrets=READ,
            config_maps=READ,
            clusters=READ,
        ),
    ),
    RoleDefinition(
        4,
        Role.RESEARCH_MANAGER,
        "Creates, views, edits and deletes the assets workloads use (secrets, config maps); "
        "views projects and their workloads.",
        _of(
            secrets=ALL,
            config_maps=ALL,
            workloads=READ,
            projects=READ,
            departments=READ,
            clusters=READ,
        ),
    ),
    RoleDefinition(
        5,
        Role.L1_RESEARCHER,
        "Creates, views, edits and deletes workloads and the assets they use.",
        _of(
            workloads=ALL,
            secrets=ALL,
            config_maps=ALL,
            projects=READ,
            departments=READ,
            clusters=READ,
        ),
    ),
    RoleDefinition(
        6,
        Role.L2_RESEARCHER,
        "Creates, views, edits and deletes workloads; views the assets they use.",
        _of(
            workloads=ALL,
            secrets=READ,
            config_maps=READ,
            projects=READ,
            departments=READ,
            clusters=READ,
        ),
    ),
    RoleDefinition(
        7,
        Role.ML_ENGINEER,
        "Manages inferences, which lockstep does not serve; views departments, projects and "
        "clusters.",
        _of(projects=READ, departments=READ, clusters=READ),
    ),
    RoleDefinition(
        8,
        Role.VIEWER,
        "Views departments, projects, clusters, workloads and their assets; changes nothing.",
        _of(
            workloads=READ,
            secrets=READ,
            config_maps=READ,
            projects=READ,
            departments=READ,
            clusters=READ,
        ),
    ),
)

BY_ROLE: dict[Role, RoleDefinition] = {definition.role: definition for definition in ROLES}
BY_ID: dict[int, RoleDefinition] = {definition.id: definition for definition in ROLES}
PERMISSIONS: dict[Role, dict[Resource, frozenset[Action]]] = {
    definition.role: definition.permissions for definition in ROLES
}
