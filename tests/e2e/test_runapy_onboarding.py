"""Onboarding people with the official Run:ai client (`runapy`), unmodified: the flow of its
example `examples/add_users_to_project.py` — the role's id by its name, the project's id by
its name (`filterBy`), the users' ids by their emails, then an access rule per user on the
project — against a live lockstep. (The example calls the roles list `get_roles` and the users
list `get_users_0`, the names an older runapy gave them; the pinned runapy names them
`get_roles_v1` and `get_users`: the same requests.) Then each user signs in and
holds exactly the role: they submit to that project and to no other."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.api import Api
from tests.support.requests import single_pod
from tests.support.server import LiveServer
from tests.support.users import tokens

runai = pytest.importorskip("runai", reason="the runapy client is part of the test extra")

from runai.api_client import ApiClient  # noqa: E402
from runai.configuration import Configuration  # noqa: E402
from runai.models.access_rule_creation_fields import AccessRuleCreationFields  # noqa: E402
from runai.models.scope_type import ScopeType  # noqa: E402
from runai.models.subject_type import SubjectType  # noqa: E402
from runai.runai_client import RunaiClient  # noqa: E402

PROJECT_NAME = "project-a"
ROLE_NAME = "L2 researcher"
EMAILS = ["test@example.com", "r-test@example.com", "runai-testb@example.com"]


def test_users_are_added_to_a_project_as_the_runapy_example_does(
    live_server: LiveServer,
) -> None:
    admin = live_server.api()
    cluster = admin.cluster_id()
    made = admin.post(
        "/api/v1/org-unit/projects",
        json={"name": PROJECT_NAME, "clusterId": cluster, "resources": []},
    )
    assert made.status_code == 201, made.text
    passwords = {}
    for email in EMAILS:
        created = admin.post("/api/v1/users", json={"email": email})
        assert created.status_code == 201, created.text
        passwords[email] = created.json()["tempPassword"]

    configuration = Configuration(
        client_id="admin",
        client_secret="admin-secret-for-tests",
        runai_base_url=live_server.url,
        retry_enabled=False,
    )
    client = RunaiClient(ApiClient(configuration))  # type: ignore[no-untyped-call]
    authorization = client.authentication_and_authorization

    role_id = -1
    for role in authorization.roles.get_roles_v1().data:
        if role["name"] == ROLE_NAME:
            role_id = role["id"]
    assert role_id != -1
    project: dict[str, Any] = client.organizations.projects.get_projects(
        filter_by=[f"name=={PROJECT_NAME}"]
    ).data["projects"][0]
    project_id = project["id"]
    user_ids = dict.fromkeys(EMAILS, "")
    for user in authorization.users.get_users().data:
        if user["username"] in user_ids:
            user_ids[user["username"]] = user["id"]
    assert all(user_ids.values())

    for user_id in user_ids.values():
        response = authorization.access_rules.create_access_rule(
            access_rule_creation_fields=AccessRuleCreationFields(
                subject_type=SubjectType.USER,
                subject_id=user_id,
                role_id=role_id,
                scope_id=project_id,
                scope_type=ScopeType.PROJECT,
            )
        )
        assert response.status_code == 201
        assert response.data["roleName"] == ROLE_NAME
        assert response.data["scopeName"] == PROJECT_NAME

    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        for email in EMAILS:
            me = Api(http, tokens(http, email, passwords[email])["accessToken"])
            mine = me.get("/api/v1/authorization/me/access-rules").json()["accessRules"]
            assert [(r["roleName"], r["scopeId"]) for r in mine["accessRules"]] == [
                (ROLE_NAME, project_id)
            ]
            name = email.split("@")[0]
            inside = me.post(
                "/api/v1/workloads/trainings",
                json=single_pod(cluster, name=name, project_id=project_id),
            )
            assert inside.status_code == 202, inside.text
            outside = me.post(
                "/api/v1/workloads/trainings", json=single_pod(cluster, name=name, project_id="1")
            )
            assert outside.status_code == 403, outside.text
