"""The permission table: for every predefined role, every operation lockstep serves and a
target inside and outside the role's rule, the answer is the one the role allows — computed
from `PERMISSIONS` (auth/roles.py), the one table that every access check also reads, never
written down per role here.

Each role is held by an application over the *inside* department (a rule there covers that
department and everything below it: its project and what is in it). Each operation names
here the kind of resource and the action it needs and where its target lives: in the inside
department or project (`inside`, under the rule), in the outside department or project
(`outside`, beside it), the cluster (above it), the tenant (users, the audit log: only a
system-wide rule covers them) or the caller itself. A control caller, the bootstrap
administrator (System administrator over the whole system), must be allowed everything, which
also shows that every request sent is one that only a permission could refuse.

The answers follow lockstep's documented conventions, written once as functions of the table
(`expected`), not per operation:

- checked: the operation's success status when the role may do the action there, else 403;
- hidden (a workload, an access rule): one the caller may not read is answered 404, as a
  missing one; one it may read but not change, 403;
- listed (the lists, counts, queue and telemetry): 200, naming the target iff the caller may
  read it;
- organization units are read with their visibility: the department and the cluster of a
  project the caller may read are visible too (services/organization.py), and what is read of
  them (their nodes, their metrics: docs/metrics.md, "each endpoint checks access as reading
  its subject does") is read as they are;
- every caller with a token reads the roles, its own permissions and its own rules; a user,
  whatever their role, changes their own password and manages their own access keys (those
  calls are made by a user holding the role, since an application has neither).

`/api/v1/token`, `/healthz` and `/readyz` need no token and are not in the table.

One in-process server on SQLite only for the module (access checks are above the store): the
things the operations act on are made once by the administrator, and a destructive operation
acts on a fresh thing of its own, so that no case changes what another sees. Workloads ask for
more CPU than exists and never run, except one short one per target, for its pod and logs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any

import httpx
import pytest

from lockstep.auth.roles import BY_ROLE, CONTRACT_RESOURCES, PERMISSIONS, Action, Resource
from lockstep.domain.clock import iso
from lockstep.domain.identity import Role, ScopeType
from lockstep.domain.listing import MAX_LIMIT
from tests.conftest import in_process, make_settings
from tests.integration.test_health import LOCKSTEP_OPERATIONS
from tests.support.access import app_with_role
from tests.support.api import Api, poll
from tests.support.requests import distributed, single_pod
from tests.support.users import PASSWORD, new_user, tokens

NEEDS_NO_TOKEN = {
    ("/api/v1/token", "post"),
    ("/healthz", "get"),
    ("/readyz", "get"),
}
"""Served without a token, so no role decides them: not in the table."""


# --- who asks, and where the target is -------------------------------------------------------


class Where(StrEnum):
    """Where an operation's target lives, seen from a rule over the inside department."""

    INSIDE = "inside"
    """The inside department, its project, or a thing in that project: under the rule."""
    OUTSIDE = "outside"
    """The outside department, its project, or a thing in it: beside the rule."""
    CLUSTER = "cluster"
    """The cluster (its nodes, its node pools, a new department of it): above the rule."""
    TENANT = "tenant"
    """The tenant: users, and the roles, which are the same for everyone."""
    SELF = "self"
    """The caller itself: its permissions, its rules, its password."""


PLACES = (Where.INSIDE, Where.OUTSIDE)

REACH: dict[ScopeType, frozenset[Where]] = {
    ScopeType.DEPARTMENT: frozenset({Where.INSIDE}),
    ScopeType.SYSTEM: frozenset({Where.INSIDE, Where.OUTSIDE, Where.CLUSTER, Where.TENANT}),
}
"""What a rule covers: one over the inside department, that department and what is below it;
one over the system, everything."""


@dataclass(frozen=True, slots=True)
class Holder:
    """A caller holding one role in one scope."""

    role: Role
    scope: ScopeType

    @property
    def label(self) -> str:
        if self.scope is ScopeType.DEPARTMENT:
            return self.role.value
        return f"{self.role.value}, system-wide"


HOLDERS = [Holder(role, ScopeType.DEPARTMENT) for role in PERMISSIONS] + [
    Holder(Role.SYSTEM_ADMINISTRATOR, ScopeType.SYSTEM)
]
"""Every predefined role over the inside department, and the control: the bootstrap
administrator, System administrator over the system."""


# --- the table's answers ---------------------------------------------------------------------


def allows(holder: Holder, resource: Resource, action: Action, where: Where) -> bool:
    """The table: the holder's role may do `action` to `resource`, and its rule covers `where`."""
    return where in REACH[holder.scope] and action in PERMISSIONS[holder.role][resource]


def reads(holder: Holder, resource: Resource, where: Where) -> bool:
    """May read, with the organization's visibility: the department of a project the holder
    may read is visible, and so is the cluster (which holds both projects)."""
    if allows(holder, resource, Action.READ, where):
        return True
    match resource:
        case Resource.DEPARTMENTS:
            return allows(holder, Resource.PROJECTS, Action.READ, where)
        case Resource.CLUSTERS:
            return any(allows(holder, Resource.PROJECTS, Action.READ, place) for place in PLACES)
        case _:
            return False


def permitted(holder: Holder, resource: Resource, action: Action, where: Where) -> bool:
    return (
        reads(holder, resource, where)
        if action is Action.READ
        else allows(holder, resource, action, where)
    )


def may_grant(holder: Holder, granted: Role, where: Where) -> bool:
    """Nobody grants (or revokes) a role that allows more than their own do there."""
    return all(
        allows(holder, resource, action, where)
        for resource, actions in PERMISSIONS[granted].items()
        for action in actions
    )


class Convention(StrEnum):
    CHECKED = "403 unless permitted"
    HIDDEN = "404 unless readable, else 403 unless permitted"
    LISTED = "200, naming the target iff readable"
    EVERY_CALLER = "the same for every caller with a token"


@dataclass(frozen=True, slots=True)
class Expected:
    status: int
    listed: bool | None = None
    """For a listing: whether the target is in it."""


def expected(holder: Holder, operation: Operation, where: Where) -> Expected:
    """What the table says `holder` gets from `operation` on the target at `where`."""
    if operation.convention is Convention.EVERY_CALLER:
        return Expected(operation.success)
    resource, action = operation.resource, operation.action
    assert resource is not None and action is not None, operation.label
    if operation.convention is Convention.LISTED:
        return Expected(200, listed=reads(holder, resource, where))
    if operation.convention is Convention.HIDDEN and not reads(holder, resource, where):
        return Expected(404)
    allowed = permitted(holder, resource, action, where) and (
        operation.granted is None or may_grant(holder, operation.granted, where)
    )
    return Expected(operation.success if allowed else 403)


# --- what the operations act on --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Place:
    """What the administrator made at one target."""

    department_id: str
    project_id: str
    workload_id: str
    """A workload waiting forever: it asks for more CPU than exists."""
    workload_name: str
    ran_id: str
    """A workload that ran to its end: it has a pod, and logs."""
    pod_name: str
    pod_id: str
    secret: str
    config_map: str
    claim: str
    rule_id: str
    """A Viewer rule over the project, of another subject."""
    rule_subject: str


@dataclass
class World:
    admin: Api
    callers: dict[Holder, Api]
    cluster_id: str
    node: str
    places: dict[Where, Place]
    someone: Api
    """A user of no role, signed in: the target of the operations on users, and the owner of
    access keys an administrator acts on."""
    user_id: str
    """Theirs."""
    account_id: str
    """A service account."""
    serial: Iterator[int] = field(default_factory=itertools.count)
    users: dict[Holder, tuple[Api, str]] = field(default_factory=dict)
    """A user holding each holder's role where it holds it (for the operations on one's own),
    signed in, and their password."""

    def unique(self, stem: str) -> str:
        return f"{stem}-{next(self.serial)}"

    def user(self, holder: Holder, *, own: bool = False) -> tuple[Api, str]:
        """The user holding the holder's role; with `own`, a new one for this call alone."""
        if own or holder not in self.users:
            email = f"{self.unique(holder.role.name.lower())}@example.com"
            scope_id = "system"
            if holder.scope is ScopeType.DEPARTMENT:
                scope_id = self.place(Where.INSIDE).department_id
            _, password = new_user(self.admin, email)
            identity = self.admin.client.app.state.services.identity  # type: ignore[attr-defined]
            identity.grant(user=email, role=holder.role, scope_type=holder.scope, scope_id=scope_id)
            user = Api(self.admin.client, tokens(self.admin.client, email, password)["accessToken"])
            if own:
                return user, password
            self.users[holder] = user, password
        return self.users[holder]

    def place(self, where: Where) -> Place:
        return self.places[where]

    def ids(self, where: Where) -> dict[str, str]:
        """The path parameters naming the target at `where`."""
        ids = {
            "clusterUuid": self.cluster_id,
            "nodeId": self.node,
            "nodepoolName": "default",
            "userId": self.user_id,
            "serviceAccountId": self.account_id,
            "appId": self.account_id,
            "roleIdPath": str(BY_ROLE[Role.VIEWER].id),
            "idp": SHARED_IDP,
        }
        place = self.places.get(where)
        if place is not None:
            ids |= {
                "departmentId": place.department_id,
                "projectId": place.project_id,
                "workloadId": place.workload_id,
                "podName": place.pod_name,
                "podId": place.pod_id,
                "accessRuleId": place.rule_id,
            }
        return ids


def created(response: httpx.Response, status: int = 201) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    return body


def waiting_workload_of(cluster_id: str, project_id: str, name: str) -> dict[str, Any]:
    """A distributed workload's request that can never be placed: it stays Pending."""
    return distributed(
        cluster_id, name=name, project_id=project_id, workers=1, compute={"cpuCoreRequest": 100000}
    )


def waiting_workload(world: World, where: Where) -> dict[str, Any]:
    project_id = world.place(where).project_id
    return waiting_workload_of(world.cluster_id, project_id, world.unique("waits"))


def made_workload(world: World, where: Where) -> str:
    return str(world.admin.create(waiting_workload(world, where))["workloadId"])


# Fresh things, made by the administrator for one destructive call: the ids they override.

Fresh = Callable[[World, Where], dict[str, str]]


def fresh_workload(world: World, where: Where) -> dict[str, str]:
    return {"workloadId": made_workload(world, where)}


def fresh_suspended(world: World, where: Where) -> dict[str, str]:
    workload_id = made_workload(world, where)
    suspended = world.admin.post(f"{DISTRIBUTED}/{workload_id}/suspend")
    assert suspended.status_code == 202, suspended.text
    return {"workloadId": workload_id}


def fresh_value(collection: str) -> Fresh:
    def make(world: World, where: Where) -> dict[str, str]:
        name = world.unique("fresh")
        project_id = world.place(where).project_id
        body = {"name": name, "data": {"KEY": "value"}}
        created(world.admin.post(f"{PROJECTS}/{project_id}/{collection}", json=body))
        return {"name": name}

    return make


def fresh_claim(world: World, where: Where) -> dict[str, str]:
    name = world.unique("fresh")
    project_id = world.place(where).project_id
    body = {"name": name, "size": "1Mi"}
    created(world.admin.post(f"{PROJECTS}/{project_id}/claims", json=body))
    return {"name": name}


def fresh_user(world: World, where: Where) -> dict[str, str]:
    user_id, _ = new_user(world.admin, f"{world.unique('fresh')}@example.com")
    return {"userId": user_id}


def fresh_account(parameter: str) -> Fresh:
    def make(world: World, where: Where) -> dict[str, str]:
        account = created(world.admin.post(ACCOUNTS, json={"name": world.unique("account")}))
        return {parameter: str(account["id"])}

    return make


def fresh_key(parameter: str) -> Fresh:
    """An access key of somebody else's."""

    def make(world: World, where: Where) -> dict[str, str]:
        key = created(world.someone.post(KEYS, json={"name": world.unique("key")}))
        return {parameter: str(key["id"])}

    return make


def fresh_rule(granted: Role) -> Fresh:
    def make(world: World, where: Where) -> dict[str, str]:
        body = rule_body(world, where, granted)
        return {"accessRuleId": str(created(world.admin.post(RULES, json=body))["id"])}

    return make


def rule_body(world: World, where: Where, granted: Role) -> dict[str, Any]:
    return {
        "subjectType": "user",
        "subjectId": f"{world.unique('subject')}@example.com",
        "roleId": BY_ROLE[granted].id,
        "scopeType": "project",
        "scopeId": world.place(where).project_id,
    }


# Request bodies: valid and unique, so that only a permission can refuse them.

Body = Callable[[World, Where], dict[str, Any]]


def project_body(world: World, where: Where) -> dict[str, Any]:
    return {
        "name": world.unique("project"),
        "clusterId": world.cluster_id,
        "parentId": world.place(where).department_id,
        "resources": [],
    }


def department_body(world: World, where: Where) -> dict[str, Any]:
    return {"name": world.unique("department"), "clusterId": world.cluster_id}


def value_body(world: World, where: Where) -> dict[str, Any]:
    return {"name": world.unique("value"), "data": {"KEY": "value"}}


def replaced(world: World, where: Where) -> dict[str, Any]:
    return {"data": {"KEY": "value"}}


def claim_body(world: World, where: Where) -> dict[str, Any]:
    return {"name": world.unique("claim"), "size": "1Mi"}


def name_body(world: World, where: Where) -> dict[str, Any]:
    return {"name": world.unique("client")}


def enabled_body(world: World, where: Where) -> dict[str, Any]:
    return {"enabled": True}


def idp_body(world: World, where: Where) -> dict[str, Any]:
    return idp_named(world.unique("idp"))


def idp_named(name: str) -> dict[str, Any]:
    """An OpenID Connect provider (nothing is asked of it until someone signs in)."""
    return {
        "name": name,
        "type": "oidc",
        "oidcData": {
            "clientId": "lockstep",
            "clientSecret": "a-secret",
            "discoverDocumentUrl": "https://idp.example.com/.well-known/openid-configuration",
        },
    }


def idp_replaced(world: World, where: Where) -> dict[str, Any]:
    body = idp_body(world, where)
    del body["name"]
    return body


def fresh_idp(world: World, where: Where) -> dict[str, str]:
    return {"idp": str(created(world.admin.post(IDPS, json=idp_body(world, where)))["alias"])}


def mail_mapper(world: World, where: Where) -> dict[str, Any]:
    return {"email": "mail"}


def user_body(world: World, where: Where) -> dict[str, Any]:
    return {"email": f"{world.unique('new')}@example.com"}


def grant_body(granted: Role) -> Body:
    def body(world: World, where: Where) -> dict[str, Any]:
        return rule_body(world, where, granted)

    return body


# Query parameters.

Params = Callable[[World, Where], dict[str, Any]]


def metrics(metric_type: str) -> Params:
    def params(world: World, where: Where) -> dict[str, Any]:
        now = datetime.now(UTC)
        return {
            "metricType": metric_type,
            "start": iso(now - timedelta(minutes=10)),
            "end": iso(now + timedelta(seconds=1)),
            "numberOfSamples": 1,
        }

    return params


def last_hour(world: World, where: Where) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {"start": iso(now - timedelta(hours=1)), "end": iso(now)}


def named_workload(world: World, where: Where) -> dict[str, Any]:
    return {"filterBy": f"name=={world.place(where).workload_name}", "limit": MAX_LIMIT}


def rules_of_target(world: World, where: Where) -> dict[str, Any]:
    return {"subjectIds": world.place(where).rule_subject}


def longest(world: World, where: Where) -> dict[str, Any]:
    return {"limit": MAX_LIMIT}


def constant(**given: Any) -> Params:
    def params(world: World, where: Where) -> dict[str, Any]:
        return dict(given)

    return params


# Whether a listing names the target.

Listed = Callable[[Any, World, Where], bool]


def names_workload(body: Any, world: World, where: Where) -> bool:
    return any(item["id"] == world.place(where).workload_id for item in body["workloads"])


def counts_workload(body: Any, world: World, where: Where) -> bool:
    assert body["count"] in (0, 1), body
    return bool(body["count"] == 1)


def names_cluster(body: Any, world: World, where: Where) -> bool:
    return any(item["uuid"] == world.cluster_id for item in body)


def names_project(body: Any, world: World, where: Where) -> bool:
    return any(str(item["id"]) == world.place(where).project_id for item in body["projects"])


def names_department(body: Any, world: World, where: Where) -> bool:
    wanted = world.place(where).department_id
    return any(str(item["id"]) == wanted for item in body["departments"])


def queues_project(body: Any, world: World, where: Where) -> bool:
    return any(str(item["projectId"]) == world.place(where).project_id for item in body["projects"])


def grouped_by(value: Callable[[Place], str]) -> Listed:
    """Telemetry grouped by one field: a group of the target's is shown."""

    def listed(body: Any, world: World, where: Where) -> bool:
        wanted = value(world.place(where))
        return any(
            str(group["value"]) == wanted
            for item in body["values"]
            for group in item.get("groups", ())
        )

    return listed


def names_rule(body: Any, world: World, where: Where) -> bool:
    return any(str(item["id"]) == world.place(where).rule_id for item in body["accessRules"])


# Further checks of an answer: what is wrong with it, or None.

Check = Callable[[httpx.Response, Holder], str | None]


def own_permissions(response: httpx.Response, holder: Holder) -> str | None:
    """The caller's permissions are its role's, as the table has them."""
    shown = {
        (item["resourceType"], action) for item in response.json() for action in item["actions"]
    }
    held = {
        (CONTRACT_RESOURCES[resource].resource_type, action.value)
        for resource, actions in PERMISSIONS[holder.role].items()
        for action in actions
    }
    return None if shown == held else f"permissions {sorted(shown)}, the table's {sorted(held)}"


def own_rule(response: httpx.Response, holder: Holder) -> str | None:
    rules = response.json()["accessRules"]["accessRules"]
    wanted = {"roleId": BY_ROLE[holder.role].id, "scopeType": holder.scope.value}
    found = any(all(rule[key] == value for key, value in wanted.items()) for rule in rules)
    return None if found else f"the caller's own rule {wanted} is not among {rules}"


# --- the operations --------------------------------------------------------------------------


Own = Callable[[World, Api, str], tuple[dict[str, str], dict[str, Any] | None]]
"""Given a user's client and password: the path ids and the body of a call about their own."""


@dataclass(frozen=True, slots=True)
class Prepared:
    caller: Api
    path: str
    params: dict[str, Any]
    body: dict[str, Any] | None


HOME: dict[Resource, tuple[Where, ...]] = {
    **dict.fromkeys(
        (
            Resource.WORKLOADS,
            Resource.PROJECTS,
            Resource.DEPARTMENTS,
            Resource.SECRETS,
            Resource.CONFIG_MAPS,
            Resource.ACCESS_RULES,
        ),
        PLACES,
    ),
    Resource.CLUSTERS: (Where.CLUSTER,),
    Resource.USERS: (Where.TENANT,),
    Resource.APPLICATIONS: (Where.TENANT,),
    Resource.IDENTITY_PROVIDERS: (Where.TENANT,),
    Resource.AUDIT_LOG: (Where.TENANT,),
}
"""Where the targets of an operation on each kind of resource are: a thing of a department or
project, once inside the rule and once outside it; the cluster; the tenant."""


@dataclass(frozen=True, slots=True)
class Operation:
    method: str
    path: str
    """As `LOCKSTEP_OPERATIONS` names it."""
    needs: tuple[Resource, Action] | None
    """The permission the operation needs on its target (None: none, every caller)."""
    convention: Convention
    success: int
    at: tuple[Where, ...] | None = None
    """Where its targets are, when not the home of its resource (`HOME`)."""
    fresh: Fresh | None = None
    body: Body | None = None
    params: Params | None = None
    listed: Listed | None = None
    check: Check | None = None
    granted: Role | None = None
    """Granting or revoking a rule of this role: the caller must hold all it allows."""
    own: Own | None = None
    """The call is about the caller's own things, which only a user has: it is made by a user
    holding the role, with the ids and body this gives."""
    signs_out: bool = False
    """The call refuses its caller's tokens: its user is one of its own."""

    @property
    def resource(self) -> Resource | None:
        return None if self.needs is None else self.needs[0]

    @property
    def action(self) -> Action | None:
        return None if self.needs is None else self.needs[1]

    @property
    def wheres(self) -> tuple[Where, ...]:
        if self.at is not None:
            return self.at
        assert self.needs is not None, self.label
        return HOME[self.needs[0]]

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def case_id(self) -> str:
        granted = "" if self.granted is None else f" of a {self.granted.value}"
        return self.label + granted

    def prepare(self, world: World, holder: Holder, where: Where) -> Prepared:
        if self.own is not None:
            user, password = world.user(holder, own=self.signs_out)
            ids, body = self.own(world, user, password)
            return Prepared(user, self.path.format(**ids), {}, body)
        ids = world.ids(where)
        if self.fresh is not None:
            ids |= self.fresh(world, where)
        return Prepared(
            world.callers[holder],
            self.path.format(**ids),
            {} if self.params is None else self.params(world, where),
            None if self.body is None else self.body(world, where),
        )


def own_password(world: World, user: Api, password: str) -> tuple[dict[str, str], dict[str, Any]]:
    return {}, {"currentPassword": password, "newPassword": PASSWORD}


def own_keys(world: World, user: Api, password: str) -> tuple[dict[str, str], None]:
    return {}, None


def new_key(world: World, user: Api, password: str) -> tuple[dict[str, str], dict[str, Any]]:
    return {}, {"name": world.unique("key")}


def own_key(parameter: str) -> Own:
    """A new access key of the user's, made by them."""

    def make(world: World, user: Api, password: str) -> tuple[dict[str, str], None]:
        key = created(user.post(KEYS, json={"name": world.unique("key")}))
        return {parameter: str(key["id"])}, None

    return make


def _ended(world: World, where: Where) -> dict[str, str]:
    """The workload that ran: it has a pod."""
    return {"workloadId": world.place(where).ran_id}


def _named(attribute: str) -> Fresh:
    def name(world: World, where: Where) -> dict[str, str]:
        return {"name": str(getattr(world.place(where), attribute))}

    return name


def _values(collection: str, resource: Resource, attribute: str) -> list[Operation]:
    """The five operations of a project's secrets or config maps."""
    many = f"{PROJECTS}/{{projectId}}/{collection}"
    one, shared, fresh = many + "/{name}", _named(attribute), fresh_value(collection)
    return [
        Operation("GET", many, (resource, READ), CHECKED, 200),
        Operation("POST", many, (resource, CREATE), CHECKED, 201, body=value_body),
        Operation("GET", one, (resource, READ), CHECKED, 200, fresh=shared),
        Operation("PUT", one, (resource, UPDATE), CHECKED, 200, fresh=shared, body=replaced),
        Operation("DELETE", one, (resource, DELETE), CHECKED, 204, fresh=fresh),
    ]


READ, CREATE, UPDATE, DELETE = Action.READ, Action.CREATE, Action.UPDATE, Action.DELETE
CHECKED, HIDDEN, LISTED = Convention.CHECKED, Convention.HIDDEN, Convention.LISTED
EVERY_CALLER = Convention.EVERY_CALLER
R = Resource
WORKLOAD = "/api/v1/workloads/{workloadId}"
DISTRIBUTED = "/api/v1/workloads/distributed"
ONE_DISTRIBUTED = DISTRIBUTED + "/{workloadId}"
PROJECTS = "/api/v1/org-unit/projects"
PROJECT = PROJECTS + "/{projectId}"
DEPARTMENTS = "/api/v1/org-unit/departments"
CLUSTER = "/api/v1/clusters/{clusterUuid}"
USERS = "/api/v1/users"
USER = USERS + "/{userId}"
ACCOUNTS = "/api/v1/service-accounts"
KEYS = "/api/v1/access-keys"
ADMINISTRATION = "/api/v1/administration/"
AUTHORIZATION = "/api/v1/authorization"
RULES = AUTHORIZATION + "/access-rules"
IDPS = "/api/v1/idps"
SHARED_IDP = "shared"
SELF, TENANT = (Where.SELF,), (Where.TENANT,)
CPU, GPU_QUOTA, TOTAL_GPU = metrics("CPU_USAGE_CORES"), metrics("GPU_QUOTA"), metrics("TOTAL_GPU")

OPERATIONS: list[Operation] = [
    # Workloads, their pods, logs, history and metrics, and the queue they wait in.
    Operation("POST", DISTRIBUTED, (R.WORKLOADS, CREATE), CHECKED, 202, body=waiting_workload),
    Operation("GET", ONE_DISTRIBUTED, (R.WORKLOADS, READ), HIDDEN, 200),
    Operation("DELETE", ONE_DISTRIBUTED, (R.WORKLOADS, DELETE), HIDDEN, 202, fresh=fresh_workload),
    Operation(
        "POST",
        ONE_DISTRIBUTED + "/suspend",
        (R.WORKLOADS, UPDATE),
        HIDDEN,
        202,
        fresh=fresh_workload,
    ),
    Operation(
        "POST",
        ONE_DISTRIBUTED + "/resume",
        (R.WORKLOADS, UPDATE),
        HIDDEN,
        202,
        fresh=fresh_suspended,
    ),
    Operation(
        "GET",
        "/api/v1/workloads",
        (R.WORKLOADS, READ),
        LISTED,
        200,
        params=named_workload,
        listed=names_workload,
    ),
    Operation(
        "GET",
        "/api/v1/workloads/count",
        (R.WORKLOADS, READ),
        LISTED,
        200,
        params=named_workload,
        listed=counts_workload,
    ),
    Operation("GET", WORKLOAD, (R.WORKLOADS, READ), HIDDEN, 200),
    Operation("GET", WORKLOAD + "/pods", (R.WORKLOADS, READ), HIDDEN, 200),
    Operation("GET", WORKLOAD + "/events", (R.WORKLOADS, READ), HIDDEN, 200),
    Operation("GET", WORKLOAD + "/history", (R.WORKLOADS, READ), HIDDEN, 200),
    Operation(
        "GET", WORKLOAD + "/pods/{podName}/logs", (R.WORKLOADS, READ), HIDDEN, 200, fresh=_ended
    ),
    Operation("GET", WORKLOAD + "/metrics", (R.WORKLOADS, READ), HIDDEN, 200, params=CPU),
    Operation(
        "GET",
        WORKLOAD + "/pods/{podId}/metrics",
        (R.WORKLOADS, READ),
        HIDDEN,
        200,
        fresh=_ended,
        params=CPU,
    ),
    Operation(
        "GET",
        "/api/v1/workloads/telemetry",
        (R.WORKLOADS, READ),
        LISTED,
        200,
        params=constant(telemetryType="WORKLOADS_COUNT", groupBy="ProjectId"),
        listed=grouped_by(lambda place: place.project_id),
    ),
    Operation(
        "GET", "/api/v1/scheduling/queue", (R.WORKLOADS, READ), LISTED, 200, listed=queues_project
    ),
    # Claims: a project's, used by its workloads, and checked as its workloads are.
    Operation("GET", PROJECT + "/claims", (R.WORKLOADS, READ), CHECKED, 200),
    Operation("POST", PROJECT + "/claims", (R.WORKLOADS, CREATE), CHECKED, 201, body=claim_body),
    Operation(
        "GET", PROJECT + "/claims/{name}", (R.WORKLOADS, READ), CHECKED, 200, fresh=_named("claim")
    ),
    Operation(
        "DELETE", PROJECT + "/claims/{name}", (R.WORKLOADS, DELETE), CHECKED, 204, fresh=fresh_claim
    ),
    # Secrets and config maps of a project.
    *_values("secrets", Resource.SECRETS, "secret"),
    *_values("configmaps", Resource.CONFIG_MAPS, "config_map"),
    # The organization: projects, departments (a new one is the cluster's), the cluster.
    Operation(
        "GET", PROJECTS, (R.PROJECTS, READ), LISTED, 200, params=longest, listed=names_project
    ),
    Operation("POST", PROJECTS, (R.PROJECTS, CREATE), CHECKED, 201, body=project_body),
    Operation("GET", PROJECT, (R.PROJECTS, READ), CHECKED, 200),
    Operation("GET", PROJECT + "/metrics", (R.PROJECTS, READ), CHECKED, 200, params=GPU_QUOTA),
    Operation(
        "GET",
        PROJECTS + "/telemetry",
        (R.PROJECTS, READ),
        LISTED,
        200,
        params=constant(telemetryType="GPU_QUOTA", groupBy="ParentId"),
        listed=grouped_by(lambda place: place.department_id),
    ),
    Operation(
        "GET",
        DEPARTMENTS,
        (R.DEPARTMENTS, READ),
        LISTED,
        200,
        params=longest,
        listed=names_department,
    ),
    Operation(
        "POST",
        DEPARTMENTS,
        (R.DEPARTMENTS, CREATE),
        CHECKED,
        201,
        at=(Where.CLUSTER,),
        body=department_body,
    ),
    Operation("GET", DEPARTMENTS + "/{departmentId}", (R.DEPARTMENTS, READ), CHECKED, 200),
    Operation(
        "GET",
        DEPARTMENTS + "/{departmentId}/metrics",
        (R.DEPARTMENTS, READ),
        CHECKED,
        200,
        params=GPU_QUOTA,
    ),
    Operation("GET", "/api/v1/clusters", (R.CLUSTERS, READ), LISTED, 200, listed=names_cluster),
    Operation("GET", CLUSTER, (R.CLUSTERS, READ), CHECKED, 200),
    Operation("GET", CLUSTER + "/nodes", (R.CLUSTERS, READ), CHECKED, 200, params=longest),
    Operation("GET", CLUSTER + "/metrics", (R.CLUSTERS, READ), CHECKED, 200, params=TOTAL_GPU),
    Operation(
        "GET",
        CLUSTER + "/nodepools/{nodepoolName}/metrics",
        (R.CLUSTERS, READ),
        CHECKED,
        200,
        params=TOTAL_GPU,
    ),
    Operation(
        "GET", "/api/v1/nodes/{nodeId}/metrics", (R.CLUSTERS, READ), CHECKED, 200, params=CPU
    ),
    # Users: the tenant's; and a user's own password.
    Operation("GET", USERS, (R.USERS, READ), CHECKED, 200),
    Operation("POST", USERS, (R.USERS, CREATE), CHECKED, 201, body=user_body),
    Operation("GET", USER, (R.USERS, READ), CHECKED, 200),
    Operation("DELETE", USER, (R.USERS, DELETE), CHECKED, 204, fresh=fresh_user),
    Operation("POST", USER + "/password", (R.USERS, UPDATE), CHECKED, 200, fresh=fresh_user),
    Operation("POST", USER + "/logout", (R.USERS, UPDATE), CHECKED, 200, fresh=fresh_user),
    Operation(
        "POST",
        "/api/v1/me/password",
        None,
        EVERY_CALLER,
        200,
        at=SELF,
        own=own_password,
        signs_out=True,
    ),
    # Identity providers: the tenant's.
    Operation("GET", IDPS, (R.IDENTITY_PROVIDERS, READ), CHECKED, 200),
    Operation("POST", IDPS, (R.IDENTITY_PROVIDERS, CREATE), CHECKED, 201, body=idp_body),
    Operation("GET", IDPS + "/{idp}", (R.IDENTITY_PROVIDERS, READ), CHECKED, 200),
    Operation(
        "PUT", IDPS + "/{idp}", (R.IDENTITY_PROVIDERS, UPDATE), CHECKED, 200, body=idp_replaced
    ),
    Operation(
        "DELETE", IDPS + "/{idp}", (R.IDENTITY_PROVIDERS, DELETE), CHECKED, 200, fresh=fresh_idp
    ),
    Operation("GET", IDPS + "/{idp}/mappers", (R.IDENTITY_PROVIDERS, READ), CHECKED, 200),
    Operation(
        "PUT",
        IDPS + "/{idp}/mappers",
        (R.IDENTITY_PROVIDERS, UPDATE),
        CHECKED,
        202,
        body=mail_mapper,
    ),
    # Service accounts (and the deprecated applications): the tenant's.
    *(
        operation
        for accounts, one in ((ACCOUNTS, "/{serviceAccountId}"), ("/api/v1/apps", "/{appId}"))
        for parameter in [one.strip("/{}")]
        for operation in (
            Operation("GET", accounts, (R.APPLICATIONS, READ), CHECKED, 200),
            Operation("POST", accounts, (R.APPLICATIONS, CREATE), CHECKED, 201, body=name_body),
            Operation("GET", accounts + one, (R.APPLICATIONS, READ), CHECKED, 200),
            Operation(
                "PATCH", accounts + one, (R.APPLICATIONS, UPDATE), CHECKED, 200, body=enabled_body
            ),
            Operation(
                "DELETE",
                accounts + one,
                (R.APPLICATIONS, DELETE),
                CHECKED,
                204,
                fresh=fresh_account(parameter),
            ),
            Operation("POST", accounts + one + "/secret", (R.APPLICATIONS, UPDATE), CHECKED, 200),
        )
    ),
    # A user's own access keys (and the deprecated user applications); everyone's, for those
    # who may manage applications tenant-wide.
    *(
        operation
        for keys, one in ((KEYS, "/{accessKeyId}"), ("/api/v1/user-applications", "/{appId}"))
        for parameter in [one.strip("/{}")]
        for operation in (
            Operation("GET", keys, None, EVERY_CALLER, 200, at=SELF, own=own_keys),
            Operation("POST", keys, None, EVERY_CALLER, 201, at=SELF, own=new_key),
            Operation("GET", keys + one, None, EVERY_CALLER, 200, at=SELF, own=own_key(parameter)),
            Operation(
                "DELETE", keys + one, None, EVERY_CALLER, 204, at=SELF, own=own_key(parameter)
            ),
            Operation(
                "POST",
                keys + one + "/secret",
                None,
                EVERY_CALLER,
                200,
                at=SELF,
                own=own_key(parameter),
            ),
        )
    ),
    *(
        operation
        for keys, one in (("access-keys", "/{accessKeyId}"), ("user-applications", "/{appId}"))
        for operation in (
            Operation("GET", ADMINISTRATION + keys, (R.APPLICATIONS, READ), CHECKED, 200),
            Operation(
                "DELETE",
                ADMINISTRATION + keys + one,
                (R.APPLICATIONS, DELETE),
                CHECKED,
                204,
                fresh=fresh_key(one.strip("/{}")),
            ),
        )
    ),
    # The audit log: the tenant's.
    Operation("GET", "/api/v1/audit/log", (R.AUDIT_LOG, READ), CHECKED, 200, params=last_hour),
    Operation("GET", "/api/v1/audit/log/file", (R.AUDIT_LOG, READ), CHECKED, 200, params=last_hour),
    # Roles (the same for everyone), the caller's own permissions and rules, access rules.
    Operation("GET", AUTHORIZATION + "/roles", None, EVERY_CALLER, 200, at=TENANT),
    Operation("GET", AUTHORIZATION + "/roles/{roleIdPath}", None, EVERY_CALLER, 200, at=TENANT),
    Operation(
        "GET",
        AUTHORIZATION + "/permissions",
        None,
        EVERY_CALLER,
        200,
        at=SELF,
        check=own_permissions,
    ),
    Operation(
        "GET", AUTHORIZATION + "/me/access-rules", None, EVERY_CALLER, 200, at=SELF, check=own_rule
    ),
    Operation(
        "GET",
        RULES,
        (R.ACCESS_RULES, READ),
        LISTED,
        200,
        params=rules_of_target,
        listed=names_rule,
    ),
    *(
        Operation(
            "POST",
            RULES,
            (R.ACCESS_RULES, CREATE),
            CHECKED,
            201,
            body=grant_body(granted),
            granted=granted,
        )
        for granted in PERMISSIONS
    ),
    Operation("GET", RULES + "/{accessRuleId}", (R.ACCESS_RULES, READ), HIDDEN, 200),
    *(
        Operation(
            "DELETE",
            RULES + "/{accessRuleId}",
            (R.ACCESS_RULES, DELETE),
            HIDDEN,
            204,
            fresh=fresh_rule(granted),
            granted=granted,
        )
        for granted in PERMISSIONS
    ),
]
"""Every operation lockstep serves with a token: the permission it needs and how it answers."""

CASES = [
    pytest.param(operation, where, id=f"{operation.case_id} {where.value}")
    for operation in OPERATIONS
    for where in operation.wheres
]


# --- the world the cases act on --------------------------------------------------------------


def _department(admin: Api, cluster_id: str, name: str) -> str:
    response = admin.post(DEPARTMENTS, json={"name": name, "clusterId": cluster_id})
    return str(created(response)["id"])


def _project(admin: Api, cluster_id: str, name: str, department_id: str) -> str:
    body = {"name": name, "clusterId": cluster_id, "parentId": department_id, "resources": []}
    return str(created(admin.post(PROJECTS, json=body))["id"])


def _place(admin: Api, cluster_id: str, where: Where) -> Place:
    """A department and its project, and in the project: a workload that ran (one pod, one
    short Python process), one waiting forever, a secret, a config map, a claim, and a Viewer
    rule of somebody else."""
    department_id = _department(admin, cluster_id, where.value)
    project_id = _project(admin, cluster_id, f"{where.value}-project", department_id)
    short = single_pod(cluster_id, name=f"ran-{where.value}", project_id=project_id)
    ran_id = str(admin.create(short, kind="trainings")["workloadId"])
    waiting = waiting_workload_of(cluster_id, project_id, f"waits-{where.value}")
    workload_id = str(admin.create(waiting)["workloadId"])
    project = f"{PROJECTS}/{project_id}"
    for collection in ("secrets", "configmaps"):
        body = {"name": f"{collection}-{where.value}", "data": {"KEY": "value"}}
        created(admin.post(f"{project}/{collection}", json=body))
    created(admin.post(f"{project}/claims", json={"name": f"claim-{where.value}"}))
    subject = f"somebody-{where.value}@example.com"
    rule = {
        "subjectType": "user",
        "subjectId": subject,
        "roleId": BY_ROLE[Role.VIEWER].id,
        "scopeType": "project",
        "scopeId": project_id,
    }
    rule_id = str(created(admin.post(RULES, json=rule))["id"])
    pod = _ended_pod(admin, ran_id)
    return Place(
        department_id=department_id,
        project_id=project_id,
        workload_id=workload_id,
        workload_name=f"waits-{where.value}",
        ran_id=ran_id,
        pod_name=str(pod["name"]),
        pod_id=str(pod["id"]),
        secret=f"secrets-{where.value}",
        config_map=f"configmaps-{where.value}",
        claim=f"claim-{where.value}",
        rule_id=rule_id,
        rule_subject=subject,
    )


def _ended_pod(admin: Api, workload_id: str) -> dict[str, Any]:
    admin.wait_for(workload_id, {"Completed"}, timeout=60)

    def ended() -> dict[str, Any] | None:
        pods: list[dict[str, Any]] = admin.get(f"/api/v1/workloads/{workload_id}/pods").json()[
            "pods"
        ]
        return pods[0] if pods and pods[0]["k8sPhase"] != "Running" else None

    return poll(ended, timeout=30, what=f"the pod of {workload_id} to end")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """One server for the module, on SQLite, with what the cases act on."""
    directory: Path = tmp_path_factory.mktemp("permissions")
    settings = make_settings(directory / "data", f"sqlite:///{directory / 'store.db'}")
    # Every case with a user caller signs in: more than a minute's allowance of one address.
    settings = settings.model_copy(update={"token_requests_per_minute": 100_000})
    with in_process(settings) as client:
        admin = Api.login(client)
        cluster_id = admin.cluster_id()
        places = {where: _place(admin, cluster_id, where) for where in PLACES}
        callers = {
            holder: app_with_role(
                admin,
                f"role-{BY_ROLE[holder.role].id}",
                holder.role,
                places[Where.INSIDE].department_id,
                scope=ScopeType.DEPARTMENT,
            )
            for holder in HOLDERS
            if holder.scope is ScopeType.DEPARTMENT
        }
        callers[Holder(Role.SYSTEM_ADMINISTRATOR, ScopeType.SYSTEM)] = admin
        user_id, password = new_user(admin, "someone@example.com")
        someone = Api(client, tokens(client, "someone@example.com", password)["accessToken"])
        account = created(admin.post(ACCOUNTS, json={"name": "an-account"}))
        created(admin.post(IDPS, json=idp_named(SHARED_IDP)))
        node = admin.get(f"/api/v1/clusters/{cluster_id}/nodes").json()["nodes"][0]["name"]
        yield World(
            admin, callers, cluster_id, str(node), places, someone, user_id, str(account["id"])
        )


# --- the tests -------------------------------------------------------------------------------


def test_the_table_names_every_operation_lockstep_serves() -> None:
    table = {(operation.path, operation.method.lower()) for operation in OPERATIONS}
    assert not table & NEEDS_NO_TOKEN
    assert table | NEEDS_NO_TOKEN == LOCKSTEP_OPERATIONS, {
        "served, not in the table": sorted(LOCKSTEP_OPERATIONS - table - NEEDS_NO_TOKEN),
        "in the table, not served": sorted(table - LOCKSTEP_OPERATIONS),
    }


def test_every_role_has_a_row_of_every_resource() -> None:
    assert set(PERMISSIONS) == set(Role)
    assert all(set(row) == set(Resource) for row in PERMISSIONS.values())


@pytest.mark.parametrize("holder", HOLDERS, ids=[holder.label for holder in HOLDERS])
@pytest.mark.parametrize(("operation", "where"), CASES)
def test_the_answer_is_the_one_the_role_allows(
    world: World, operation: Operation, where: Where, holder: Holder
) -> None:
    want = expected(holder, operation, where)
    call = operation.prepare(world, holder, where)
    response = call.caller.request(operation.method, call.path, params=call.params, json=call.body)
    said = f"{holder.label} {operation.case_id} on the {where.value} target ({call.path})"
    assert response.status_code == want.status, (
        f"{said}: expected {want.status} ({operation.convention.value}), "
        f"got {response.status_code}: {response.text[:400]}"
    )
    if want.listed is not None:
        assert operation.listed is not None
        shown = operation.listed(response.json(), world, where)
        assert shown is want.listed, (
            f"{said}: the target should {'' if want.listed else 'not '}be listed; "
            f"{response.text[:400]}"
        )
    if operation.check is not None:
        problem = operation.check(response, holder)
        assert problem is None, f"{said}: {problem}"
