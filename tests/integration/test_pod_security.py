"""Pod Security levels through the API, on each store: a project's level, set by an
administrator, refuses at submission (and in a dry run) every field it forbids with a 400
naming the field and the level, storing nothing; a level that allows it lets the same request
through; only a system-wide administrator chooses a level other than the default."""

from __future__ import annotations

from typing import Any

from lockstep.auth.tokens import OPERATOR
from lockstep.domain.identity import Role, ScopeType
from lockstep.domain.pod_security import PodSecurityLevel
from lockstep.services.organization import OrganizationService
from tests.support.access import app_with_role
from tests.support.api import Api
from tests.support.requests import distributed

DISTRIBUTED = "/api/v1/workloads/distributed"
ESCAPING: dict[str, Any] = {
    "storage": {"hostPath": [{"path": "/", "mountPath": "/host", "readOnly": False}]},
    "security": {"capabilities": ["SYS_ADMIN", "SYS_PTRACE"], "seccompProfileType": "Unconfined"},
}


def organization(api: Api) -> OrganizationService:
    service: OrganizationService = api.client.app.state.services.organization  # type: ignore[attr-defined]
    return service


def project(api: Api, name: str, level: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "clusterId": api.cluster_id(), "resources": []}
    if level is not None:
        body["podSecurityLevel"] = level
    response = api.post("/api/v1/org-unit/projects", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def workloads(api: Api) -> int:
    return int(api.get("/api/v1/workloads/count").json()["count"])


def test_the_default_level_refuses_what_would_escape_the_pod_by_field(api: Api) -> None:
    body = distributed(api.cluster_id(), name="escape")
    body["spec"] |= ESCAPING
    for path in (DISTRIBUTED, f"{DISTRIBUTED}?dryRun=true"):
        refused = api.post(path, json=body)
        assert refused.status_code == 400, refused.text
        message = refused.json()["message"]
        for field in (
            "spec.storage.hostPath[0].path",
            "spec.security.capabilities[0]",
            "spec.security.capabilities[1]",
            "spec.security.seccompProfileType",
        ):
            assert field in message
        assert "(the project's Pod Security level is baseline)" in message
    assert workloads(api) == 0


def test_a_privileged_project_may_ask_it_and_a_restricted_one_refuses_root(api: Api) -> None:
    privileged = project(api, "platform", "privileged")
    assert privileged["podSecurityLevel"] == "privileged"
    body = distributed(api.cluster_id(), name="escape", project_id=privileged["id"], **ESCAPING)
    assert api.post(f"{DISTRIBUTED}?dryRun=true", json=body).status_code == 200
    restricted = project(api, "locked", "restricted")
    plain = distributed(api.cluster_id(), name="plain", project_id=restricted["id"])
    refused = api.post(DISTRIBUTED, json=plain)
    assert refused.status_code == 400
    assert "spec.security.runAsNonRoot: must be true" in refused.json()["message"]
    plain["spec"]["security"] = {"runAsNonRoot": True, "uidGidSource": "custom", "runAsUid": 1000}
    assert api.post(DISTRIBUTED, json=plain).status_code == 202


def test_a_level_changed_applies_to_the_next_submission(api: Api) -> None:
    team = project(api, "team")
    body = distributed(api.cluster_id(), name="debugger", project_id=team["id"])
    body["spec"]["security"] = {"capabilities": ["SYS_PTRACE"]}
    assert api.post(DISTRIBUTED, json=body).status_code == 400
    organization(api).set_pod_security_level(OPERATOR, team["id"], PodSecurityLevel.PRIVILEGED)
    assert api.get(f"/api/v1/org-unit/projects/{team['id']}").json()["podSecurityLevel"] == (
        "privileged"
    )
    assert api.post(DISTRIBUTED, json=body).status_code == 202


def test_only_a_system_administrator_chooses_a_level(api: Api) -> None:
    department_admin = app_with_role(
        api, "dept-admin", Role.SYSTEM_ADMINISTRATOR, "1", scope=ScopeType.DEPARTMENT
    )
    body = {"name": "mine", "clusterId": api.cluster_id(), "resources": []}
    assert department_admin.post("/api/v1/org-unit/projects", json=body).status_code == 201
    escalated = {**body, "name": "rooted", "podSecurityLevel": "privileged"}
    assert department_admin.post("/api/v1/org-unit/projects", json=escalated).status_code == 403
    unknown = {**body, "name": "odd", "podSecurityLevel": "lenient"}
    refused = api.post("/api/v1/org-unit/projects", json=unknown)
    assert refused.status_code == 400 and "podSecurityLevel" in refused.json()["message"]
