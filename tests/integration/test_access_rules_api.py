"""`/api/v1/authorization/…` over HTTP on both stores: the predefined roles and their
permissions, access rules granted to users (by id or email), groups and applications, listed
with the contract's filters, revoked (kept, and refused at once); who may grant what (nobody a
role wider than their own, in a scope wider than their own); and the caller's own rules and
permissions."""

from __future__ import annotations

from typing import Any

import pytest

from lockstep.config import Settings
from lockstep.domain.identity import Role, ScopeType
from lockstep.store.database import Database
from tests.support.access import app_with_role, new_project
from tests.support.api import Api
from tests.support.contract import assert_conforms
from tests.support.users import new_user, tokens, user_with_role

RULES = "/api/v1/authorization/access-rules"
ROLE_IDS = {
    "System administrator": 1,
    "Department administrator": 2,
    "Editor": 3,
    "Research manager": 4,
    "L1 researcher": 5,
    "L2 researcher": 6,
    "ML engineer": 7,
    "Viewer": 8,
}


def rule(
    subject_type: str, subject_id: str, role: str, scope_type: str, scope_id: str
) -> dict[str, Any]:
    return {
        "subjectType": subject_type,
        "subjectId": subject_id,
        "roleId": ROLE_IDS[role],
        "scopeType": scope_type,
        "scopeId": scope_id,
    }


def granted(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    response = api.post(RULES, json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = assert_conforms(response, RULES)
    return created


def new_department(api: Api, name: str) -> str:
    response = api.post(
        "/api/v1/org-unit/departments", json={"name": name, "clusterId": api.cluster_id()}
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def project_in(api: Api, name: str, department_id: str) -> str:
    response = api.post(
        "/api/v1/org-unit/projects",
        json={
            "name": name,
            "clusterId": api.cluster_id(),
            "parentId": department_id,
            "resources": [],
        },
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_the_predefined_roles_are_listed_with_their_permissions(api: Api) -> None:
    listed = assert_conforms(api.get("/api/v1/authorization/roles"), "/api/v1/authorization/roles")
    assert {r["name"]: r["id"] for r in listed} == ROLE_IDS
    assert all(r["custom"] is False and r["effectiveEnabled"] is True for r in listed)
    by_name = {r["name"]: r for r in listed}
    administrator = {
        p["resourceType"]: p["actions"] for p in by_name["System administrator"]["permissions"]
    }
    assert administrator["users"] == ["create", "read", "update", "delete"]
    viewer = {p["resourceType"]: p["actions"] for p in by_name["Viewer"]["permissions"]}
    assert viewer["workloads"] == ["read"] and "users" not in viewer
    l2 = {p["resourceType"]: p["actions"] for p in by_name["L2 researcher"]["permissions"]}
    assert l2["workloads"] == ["create", "read", "update", "delete"]
    assert l2["credentials"] == ["read"]

    one = api.get("/api/v1/authorization/roles/5")
    assert (
        assert_conforms(one, "/api/v1/authorization/roles/{roleIdPath}") == by_name["L1 researcher"]
    )
    missing = api.get("/api/v1/authorization/roles/99")
    assert missing.status_code == 404
    assert missing.json() == {"code": 404, "message": "no role has the id 99"}
    # Any signed-in caller reads them, a viewer too.
    viewer_api = app_with_role(api, "reader", Role.VIEWER, "1")
    assert viewer_api.get("/api/v1/authorization/roles").json() == listed


def test_a_rule_names_a_user_by_id_or_email_and_takes_effect_at_once(api: Api) -> None:
    user_id, password = new_user(api, "ada@example.com")
    me = Api(api.client, tokens(api.client, "ada@example.com", password)["accessToken"])
    assert me.get("/api/v1/org-unit/projects/1").status_code == 403

    by_id = granted(api, rule("user", user_id, "L2 researcher", "project", "1"))
    assert by_id["subjectId"] == user_id and by_id["roleName"] == "L2 researcher"
    assert by_id["scopeName"] == "default" and by_id["clusterId"] == api.cluster_id()
    assert by_id["createdBy"] == "admin" and by_id["deletedAt"] is None
    assert by_id["status"] == {"phase": "Ready"}
    assert me.get("/api/v1/org-unit/projects/1").status_code == 200
    again = granted(api, rule("user", user_id, "L2 researcher", "project", "1"))
    assert again["id"] == by_id["id"]  # the same rule: granting twice changes nothing

    by_email = granted(api, rule("user", "ADA@example.com", "Viewer", "project", "1"))
    assert by_email["subjectId"] == "ada@example.com"
    mine = me.get("/api/v1/authorization/me/access-rules")
    body = assert_conforms(mine, "/api/v1/authorization/me/access-rules")["accessRules"]
    assert body["totalRecords"] == body["displayRecords"] == 2
    assert {r["id"] for r in body["accessRules"]} == {by_id["id"], by_email["id"]}

    for created in (by_id, by_email):
        deleted = api.delete(f"{RULES}/{created['id']}")
        assert deleted.status_code == 204
    assert me.get("/api/v1/org-unit/projects/1").status_code == 403
    assert api.delete(f"{RULES}/{by_id['id']}").status_code == 404
    gone = api.get(f"{RULES}/{by_id['id']}")
    assert assert_conforms(gone, "/api/v1/authorization/access-rules/{accessRuleId}")["deletedAt"]


def test_a_group_rule_reaches_every_user_of_the_group(api: Api, settings: Settings) -> None:
    user_id, password = new_user(api, "grace@example.com")
    database = Database(settings.resolved_database_url)
    try:
        with database.write() as unit:
            unit.users.set_groups(user_id, ["vision-team"])
    finally:
        database.dispose()
    granted(api, rule("group", "vision-team", "Viewer", "project", "1"))
    me = Api(api.client, tokens(api.client, "grace@example.com", password)["accessToken"])
    assert me.get("/api/v1/org-unit/projects/1").status_code == 200
    mine = me.get("/api/v1/authorization/me/access-rules").json()["accessRules"]["accessRules"]
    assert [(r["subjectType"], r["subjectId"]) for r in mine] == [("group", "vision-team")]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (
            rule("user", "ada@example.com", "Viewer", "project", "1") | {"roleId": 99},
            400,
            "roleId: 99 is no role",
        ),
        (
            rule("user", "ada@example.com", "Viewer", "project", "1") | {"subjectType": "robot"},
            400,
            "subjectType",
        ),
        (
            rule("user", "ada@example.com", "Viewer", "project", "1") | {"scopeType": "galaxy"},
            400,
            "scopeType",
        ),
        (
            rule("user", "ada@example.com", "Viewer", "project", "999"),
            404,
            "no project has the id '999'",
        ),
        (
            rule("user", "ada@example.com", "Viewer", "department", "999"),
            404,
            "no department has the id",
        ),
        (
            rule("user", "not-a-user", "Viewer", "project", "1"),
            404,
            "no user has the id or email 'not-a-user'",
        ),
        (rule("app", "nobody", "Viewer", "project", "1"), 404, "no application or service account"),
        (rule("group", "x" * 256, "Viewer", "project", "1"), 400, "subjectId"),
        (
            rule("user", "ada@example.com", "Viewer", "project", "1") | {"clusterId": "other"},
            400,
            "clusterId: must be",
        ),
        (
            {"subjectType": "user", "roleId": 8, "scopeType": "project", "scopeId": "1"},
            400,
            "subjectId: required",
        ),
    ],
    ids=[
        "role",
        "subject type",
        "scope type",
        "project",
        "department",
        "user",
        "application",
        "group name",
        "cluster",
        "missing",
    ],
)
def test_a_bad_rule_is_refused_naming_the_field_and_nothing_is_stored(
    api: Api, body: dict[str, Any], status: int, message: str
) -> None:
    before = api.get(RULES, params={"includeDeleted": "true"}).json()
    response = api.post(RULES, json=body)
    assert response.status_code == status, response.text
    assert message in response.json()["message"]
    assert api.get(RULES, params={"includeDeleted": "true"}).json() == before


def test_nobody_grants_a_role_wider_than_their_own_or_beyond_their_scope(api: Api) -> None:
    research = new_department(api, "research")
    inside = project_in(api, "vision", research)
    outside = new_project(api, "elsewhere")
    _, department_admin = user_with_role(
        api, "dana@example.com", Role.DEPARTMENT_ADMINISTRATOR, research, scope=ScopeType.DEPARTMENT
    )
    _, researcher = user_with_role(api, "rita@example.com", Role.L1_RESEARCHER, inside)
    new_user(api, "new@example.com")

    allowed = granted(
        department_admin, rule("user", "new@example.com", "L1 researcher", "project", inside)
    )
    assert allowed["createdBy"] == "dana@example.com"
    for body, message in [
        (
            rule("user", "new@example.com", "System administrator", "project", inside),
            "it allows more than your own",
        ),
        (
            rule("user", "new@example.com", "L1 researcher", "project", outside),
            "you may not create access rules in project",
        ),
        (
            rule(
                "user", "new@example.com", "Department administrator", "cluster", api.cluster_id()
            ),
            "you may not create access rules in cluster",
        ),
        (
            rule("user", "new@example.com", "Viewer", "system", "system"),
            "you may not create access rules in this tenant",
        ),
    ]:
        refused = department_admin.post(RULES, json=body)
        assert refused.status_code == 403, refused.text
        assert message in refused.json()["message"]
    for body in [
        rule("user", "new@example.com", "Viewer", "project", inside),
        rule("user", "new@example.com", "L1 researcher", "project", inside),
    ]:
        assert researcher.post(RULES, json=body).status_code == 403

    # The department's administrator sees and revokes the rules of their department only.
    seen = {r["id"] for r in department_admin.get(RULES).json()["accessRules"]}
    everything = {r["id"] for r in api.get(RULES).json()["accessRules"]}
    assert allowed["id"] in seen and seen < everything
    administrators = [r for r in api.get(RULES).json()["accessRules"] if r["roleId"] == 1]
    assert department_admin.delete(f"{RULES}/{administrators[0]['id']}").status_code == 404
    assert department_admin.delete(f"{RULES}/{allowed['id']}").status_code == 204


def test_the_list_filters_sorts_and_pages(api: Api) -> None:
    new_user(api, "a@example.com")
    new_user(api, "b@example.com")
    first = granted(api, rule("user", "a@example.com", "Viewer", "project", "1"))
    second = granted(api, rule("user", "b@example.com", "L1 researcher", "project", "1"))
    third = granted(api, rule("user", "b@example.com", "Editor", "cluster", api.cluster_id()))
    assert api.delete(f"{RULES}/{first['id']}").status_code == 204

    def ids(**params: Any) -> list[int]:
        response = api.get(RULES, params=params)
        body = assert_conforms(response, RULES)
        assert body["displayRecords"] == len(body["accessRules"]) <= body["totalRecords"]
        return [r["id"] for r in body["accessRules"]]

    assert ids(subjectType="user") == [second["id"], third["id"]]
    assert ids(subjectType="user", includeDeleted="true") == [
        first["id"],
        second["id"],
        third["id"],
    ]
    assert ids(subjectIds="b@example.com,nobody@example.com") == [second["id"], third["id"]]
    assert ids(scopeType="cluster") == [third["id"]]
    assert ids(scopeId="1", subjectType="user") == [second["id"]]
    assert ids(roleId=5) == [second["id"]]
    assert ids(filterBy="roleName==Editor") == [third["id"]]
    assert ids(filterBy="subjectId=@b@,scopeType==project") == [second["id"]]
    assert ids(subjectType="user", sortBy="roleName", sortOrder="desc") == [
        second["id"],
        third["id"],
    ]
    assert ids(subjectType="user", limit=1, offset=1) == [third["id"]]
    assert ids(search="EDITOR") == [third["id"]]
    assert ids(clusterId=api.cluster_id(), subjectType="user") == [second["id"], third["id"]]
    assert ids(lastUpdated="2999-01-01T00:00:00Z") == []
    assert api.get(RULES, params={"subjectType": "user", "limit": 1}).json()["totalRecords"] == 2
    for params, message in [
        ({"sortBy": "password"}, "sortBy: cannot sort by 'password'"),
        ({"filterBy": "secret==x"}, "filterBy: cannot filter on 'secret'"),
        ({"limit": 0}, "limit: must be between 1 and 500"),
        ({"lastUpdated": "yesterday"}, "lastUpdated: 'yesterday' is not an ISO-8601 date-time"),
    ]:
        response = api.get(RULES, params=params)
        assert response.status_code == 400, (params, response.text)
        assert message in response.json()["message"]


def test_permissions_sum_up_what_the_caller_may_do(api: Api) -> None:
    everything = assert_conforms(
        api.get("/api/v1/authorization/permissions"), "/api/v1/authorization/permissions"
    )
    assert {p["resourceType"] for p in everything} >= {"workloads", "users", "access_rules"}
    viewer = app_with_role(api, "looker", Role.VIEWER, "1")
    held = {
        p["resourceType"]: p["actions"]
        for p in viewer.get("/api/v1/authorization/permissions").json()
    }
    assert held["workloads"] == ["read"] and "users" not in held and "access_rules" not in held
    nobody = app_with_role(api, "ml", Role.ML_ENGINEER, "1")
    held = {
        p["resourceType"]: p["actions"]
        for p in nobody.get("/api/v1/authorization/permissions").json()
    }
    assert "workloads" not in held and held["project"] == ["read"]


def test_the_last_tenant_administrator_rule_stays(api: Api) -> None:
    (administrator,) = [
        r for r in api.get(RULES).json()["accessRules"] if r["roleName"] == "System administrator"
    ]
    refused = api.delete(f"{RULES}/{administrator['id']}")
    assert refused.status_code == 403
    assert "last rule of a System administrator" in refused.json()["message"]
    new_user(api, "second@example.com")
    granted(api, rule("user", "second@example.com", "System administrator", "system", "system"))
    assert api.delete(f"{RULES}/{administrator['id']}").status_code == 204
    assert api.get("/api/v1/users").status_code == 403  # the application holds no rule now
