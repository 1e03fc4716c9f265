"""Identity and access: bearer tokens on every endpoint but the token endpoint, and access
rules checked per project."""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from lockstep.auth.tokens import Principal, TokenAuthority
from lockstep.config import Settings
from lockstep.domain.identity import Role, ScopeType, SubjectType
from lockstep.services.identity import IdentityService
from lockstep.store.database import normalize_url
from tests.support.access import app_with_role, new_project
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api
from tests.support.contract import document
from tests.support.requests import distributed, single_pod
from tests.support.server import LiveServer

PROTECTED = [
    ("GET", "/api/v1/workloads"),
    ("GET", "/api/v1/workloads/count"),
    ("POST", "/api/v1/workloads/distributed"),
    ("GET", f"/api/v1/workloads/distributed/{uuid.UUID(int=1)}"),
    ("DELETE", f"/api/v1/workloads/distributed/{uuid.UUID(int=1)}"),
    ("POST", f"/api/v1/workloads/distributed/{uuid.UUID(int=1)}/suspend"),
    ("POST", f"/api/v1/workloads/distributed/{uuid.UUID(int=1)}/resume"),
    ("GET", f"/api/v1/workloads/{uuid.UUID(int=1)}"),
    ("GET", f"/api/v1/workloads/{uuid.UUID(int=1)}/pods"),
    ("GET", f"/api/v1/workloads/{uuid.UUID(int=1)}/events"),
    ("GET", f"/api/v1/workloads/{uuid.UUID(int=1)}/history"),
    ("GET", "/api/v1/workloads/pods"),
    ("GET", "/api/v1/org-unit/projects"),
    ("POST", "/api/v1/org-unit/projects"),
    ("GET", "/api/v1/org-unit/projects/1"),
    ("GET", "/api/v1/org-unit/departments"),
    ("POST", "/api/v1/org-unit/departments"),
    ("GET", "/api/v1/org-unit/departments/1"),
    ("GET", "/api/v1/clusters"),
    ("GET", f"/api/v1/clusters/{uuid.UUID(int=1)}"),
    ("GET", f"/api/v1/clusters/{uuid.UUID(int=1)}/nodes"),
]


def identity(api: Api) -> IdentityService:
    service: IdentityService = api.client.app.state.services.identity  # type: ignore[attr-defined]
    return service


@pytest.mark.parametrize(("method", "path"), PROTECTED)
def test_every_endpoint_but_token_needs_a_token(module_api: Api, method: str, path: str) -> None:
    response = module_api.client.request(method, path, json={})
    assert response.status_code == 401, response.text
    assert response.json()["code"] == 401
    assert "bearer token is required" in response.json()["message"]


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("Basic YWRtaW46c2VjcmV0", "must be 'Bearer <token>'"),
        ("Bearer not-a-jwt", "not valid"),
        ("Bearer ", "must be 'Bearer <token>'"),
    ],
    ids=["other scheme", "malformed", "empty"],
)
def test_malformed_credentials_are_refused(module_api: Api, header: str, message: str) -> None:
    response = module_api.client.get("/api/v1/workloads", headers={"Authorization": header})
    assert response.status_code == 401
    assert message in response.json()["message"]


def test_wrongly_signed_token_is_refused(module_api: Api) -> None:
    forged = TokenAuthority(b"k" * 64, ttl_seconds=3600).issue(
        Principal(SubjectType.APP, "admin", "admin")
    )
    response = module_api.client.get(
        "/api/v1/workloads", headers={"Authorization": f"Bearer {forged.token}"}
    )
    assert response.status_code == 401
    assert "signature" in response.json()["message"]


def test_expired_token_is_refused(module_api: Api) -> None:
    authority: TokenAuthority = module_api.client.app.state.services.tokens  # type: ignore[attr-defined]
    expired = authority.issue(Principal(SubjectType.APP, "admin", "admin"), now=time.time() - 7200)
    response = module_api.client.get(
        "/api/v1/workloads", headers={"Authorization": f"Bearer {expired.token}"}
    )
    assert response.status_code == 401
    assert "expired" in response.json()["message"]


SPELLINGS = [
    ("AppId", "AppSecret"),
    ("appId", "appSecret"),
    ("appID", "appSecret"),
    ("clientId", "clientSecret"),
    ("clientID", "clientSecret"),
]
UNSUPPORTED_GRANTS = ["external_token_exchange"]
SUPPORTED = (
    "lockstep supports app_token, client_credentials, password, refresh_token, exchange_token"
)


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A real `lockstep serve` on SQLite, reached over HTTP, for the token endpoint."""
    directory = tmp_path_factory.mktemp("tokens")
    server = LiveServer(directory / "data", f"sqlite:///{directory / 'store.db'}").start()
    try:
        with httpx.Client(base_url=server.url, timeout=30.0) as client:
            yield client
    finally:
        server.stop()


@pytest.mark.parametrize("grant", ["app_token", "client_credentials"])
@pytest.mark.parametrize(("id_key", "secret_key"), SPELLINGS, ids=[k for k, _ in SPELLINGS])
def test_token_for_each_grant_and_spelling(
    token_server: httpx.Client, grant: str, id_key: str, secret_key: str
) -> None:
    body = {"grantType": grant, id_key: ADMIN_ID, secret_key: ADMIN_SECRET}
    response = token_server.post("/api/v1/token", json=body)
    assert response.status_code == 200, (body, response.text)
    token = response.json()["accessToken"]
    payload = json.loads(base64.b64decode(token.split(".")[1] + "=="))
    assert payload["exp"] - time.time() == pytest.approx(3600, abs=60)
    assert response.json()["expiresIn"] == pytest.approx(3600, abs=60)
    listed = token_server.get("/api/v1/workloads", headers={"Authorization": f"Bearer {token}"})
    assert listed.status_code == 200, listed.text
    wrong = token_server.post("/api/v1/token", json=body | {secret_key: "wrong"})
    assert wrong.status_code == 401


@pytest.mark.parametrize("grant", UNSUPPORTED_GRANTS)
def test_other_grant_types_of_the_contract_are_refused_naming_the_supported(
    token_server: httpx.Client, grant: str
) -> None:
    body = {"grantType": grant, "clientId": ADMIN_ID, "clientSecret": ADMIN_SECRET}
    response = token_server.post("/api/v1/token", json=body)
    assert response.status_code == 400
    assert response.json() == {
        "code": 400,
        "message": f"grantType: {grant!r} is not supported; {SUPPORTED}",
    }


def contract_examples() -> list[tuple[str, dict[str, Any]]]:
    """The document's own example bodies of its token request, by name."""
    content = document()["paths"]["/api/v1/token"]["post"]["requestBody"]["content"]
    examples = content["application/json"]["examples"]
    return [(name, example["value"]) for name, example in examples.items()]


@pytest.mark.parametrize(("name", "example"), contract_examples(), ids=lambda v: str(v)[:24])
def test_each_grant_of_the_contract_is_answered_as_supported_or_not(
    token_server: httpx.Client, name: str, example: dict[str, Any]
) -> None:
    """Every grant type the document shows (its examples, sent as they are) is known: those
    lockstep supports are checked (401: the example's credentials are no application's, its
    refresh token no token, its code no sign-in's), the other, `external_token_exchange`, is
    refused as not supported by lockstep, never as an unknown value."""
    response = token_server.post("/api/v1/token", json=example)
    grant = example["grantType"]
    if grant in ("app_token", "client_credentials", "refresh_token", "exchange_token"):
        assert response.status_code == 401, (name, response.text)
        return
    assert response.status_code == 400, (name, response.text)
    assert response.json() == {
        "code": 400,
        "message": f"grantType: {grant!r} is not supported; {SUPPORTED}",
    }


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"grantType": "app_token", "AppId": "admin", "AppSecret": "wrong"}, 401, "not valid"),
        ({"grantType": "app_token", "AppId": "nobody", "AppSecret": "x"}, 401, "not valid"),
        (
            {"grantType": "magic", "AppId": "admin", "AppSecret": "x"},
            400,
            "grantType: 'magic' is not a grant type (one of app_token, client_credentials, "
            "refresh_token, exchange_token, password, external_token_exchange); " + SUPPORTED,
        ),
        (
            {"AppId": "admin", "AppSecret": "x"},
            400,
            "grantType: required; " + SUPPORTED,
        ),
        ({"grantType": 7, "AppId": "admin"}, 400, "grantType: must be a string"),
        ({"grantType": "app_token", "AppSecret": "x"}, 400, "AppId: required for the app_token"),
        (
            {"grantType": "client_credentials", "clientId": "admin", "clientSecret": ""},
            400,
            "clientSecret: required for the client_credentials grant",
        ),
        ({"grantType": "app_token", "appID": ["admin"], "AppSecret": "x"}, 400, "appID: must be"),
        (
            {"grantType": "app_token", "AppId": "admin", "clientId": "other", "AppSecret": "x"},
            400,
            "AppId: given as AppId and clientId with different values",
        ),
        (
            {"grantType": "app_token", "AppId": "admin", "AppSecret": "x" * 1025},
            400,
            "AppSecret: at most 1024 characters",
        ),
        ([], 400, "body: a JSON object is required"),
    ],
    ids=[
        "wrong secret",
        "unknown app",
        "unknown grant",
        "no grant",
        "grant not a string",
        "no id",
        "empty secret",
        "id not a string",
        "two ids",
        "secret too long",
        "not an object",
    ],
)
def test_bad_token_requests(
    token_server: httpx.Client, body: Any, status: int, message: str
) -> None:
    response = token_server.post("/api/v1/token", json=body)
    assert response.status_code == status, response.text
    assert message in response.json()["message"]
    assert set(response.json()) == {"code", "message"}


def test_viewer_may_read_but_not_create(api: Api) -> None:
    viewer = app_with_role(api, "viewer", Role.VIEWER, "1")
    workload = api.create(distributed(api.cluster_id(), name="seen"))
    assert viewer.get(f"/api/v1/workloads/distributed/{workload['workloadId']}").status_code == 200
    refused = viewer.post(
        "/api/v1/workloads/distributed", json=distributed(api.cluster_id(), name="mine")
    )
    assert refused.status_code == 403
    assert refused.json() == {"code": 403, "message": "you may not create workloads in project 1"}
    assert (
        viewer.delete(f"/api/v1/workloads/distributed/{workload['workloadId']}").status_code == 403
    )
    assert (
        viewer.post(f"/api/v1/workloads/distributed/{workload['workloadId']}/suspend").status_code
        == 403
    )
    assert api.get("/api/v1/workloads/count").json() == {"count": 1}


def test_researcher_is_confined_to_its_project(api: Api) -> None:
    other = new_project(api, "other")
    researcher = app_with_role(api, "researcher", Role.L1_RESEARCHER, "1")
    own = researcher.create(distributed(api.cluster_id(), name="own"))
    assert own["createdBy"] == "researcher"
    theirs = api.create(distributed(api.cluster_id(), name="theirs", project_id=other))
    theirs_path = f"/api/v1/workloads/distributed/{theirs['workloadId']}"

    assert researcher.get(theirs_path).status_code == 404  # as an unknown id
    assert researcher.get(f"/api/v1/workloads/{theirs['workloadId']}/pods").status_code == 404
    assert researcher.delete(theirs_path).status_code == 404
    assert (
        researcher.post(
            "/api/v1/workloads/distributed",
            json=distributed(api.cluster_id(), name="sneak", project_id=other),
        ).status_code
        == 403
    )
    listed = researcher.get("/api/v1/workloads").json()["workloads"]
    assert [w["name"] for w in listed] == ["own"]
    api.wait_for(own["workloadId"], {"Completed"})
    api.wait_for(theirs["workloadId"], {"Completed"})
    everyone = {p["workloadId"] for p in api.get("/api/v1/workloads/pods").json()["pods"]}
    assert everyone == {own["workloadId"], theirs["workloadId"]}
    pods = researcher.get("/api/v1/workloads/pods").json()["pods"]
    assert {p["workloadId"] for p in pods} == {own["workloadId"]}
    assert researcher.get("/api/v1/workloads/count").json() == {"count": 1}
    assert [p["id"] for p in researcher.get("/api/v1/org-unit/projects").json()["projects"]] == [
        "1"
    ]
    assert researcher.get(f"/api/v1/org-unit/projects/{other}").status_code == 403
    assert (
        researcher.post(
            "/api/v1/org-unit/projects",
            json={"name": "mine", "clusterId": api.cluster_id(), "resources": []},
        ).status_code
        == 403
    )
    assert api.get(theirs_path).status_code == 200


KIND_PATHS = ("distributed", "trainings", "workspaces")


def workload_endpoints(kind: str) -> list[tuple[str, str, dict[str, Any]]]:
    """Every endpoint that names one workload by its id (`{id}`), with the parameters it
    needs: its kind's get, delete, suspend and resume, and the generic ones."""
    window = {
        "metricType": "POD_COUNT",
        "start": "2026-01-01T00:00:00Z",
        "end": "2026-01-01T00:10:00Z",
    }
    one = f"/api/v1/workloads/{kind}/{{id}}"
    return [
        ("GET", one, {}),
        ("DELETE", one, {}),
        ("POST", f"{one}/suspend", {}),
        ("POST", f"{one}/resume", {}),
        ("GET", "/api/v1/workloads/{id}", {}),
        ("GET", "/api/v1/workloads/{id}/pods", {}),
        ("GET", "/api/v1/workloads/{id}/events", {}),
        ("GET", "/api/v1/workloads/{id}/history", {}),
        ("GET", "/api/v1/workloads/{id}/metrics", window),
        (
            "GET",
            f"/api/v1/workloads/{{id}}/pods/{uuid.UUID(int=9)}/metrics",
            {**window, "metricType": "CPU_USAGE_CORES"},
        ),
        ("GET", "/api/v1/workloads/{id}/pods/theirs-0/logs", {}),
        ("GET", "/api/v1/workloads/{id}/pods/theirs-master-0/logs", {"follow": "true"}),
    ]


def test_a_workload_of_another_project_answers_as_an_unknown_id(api: Api) -> None:
    """Ids cannot be probed: on every endpoint of one workload, a workload the caller may not
    read (another project's) gets exactly the answer of an id no workload has — status,
    headers that matter and body, but for the id itself."""
    other = new_project(api, "other")
    researcher = app_with_role(api, "researcher", Role.L1_RESEARCHER, "1")
    cluster = api.cluster_id()
    theirs = {
        kind: api.create(
            distributed(cluster, name=f"theirs-{kind[0]}", project_id=other, workers=1)
            if kind == "distributed"
            else single_pod(cluster, name=f"theirs-{kind[0]}", project_id=other),
            kind=kind,
        )["workloadId"]
        for kind in KIND_PATHS
    }
    unknown = str(uuid.uuid4())
    for kind, workload_id in theirs.items():
        for method, path, params in workload_endpoints(kind):
            seen = researcher.request(method, path.format(id=workload_id), params=params)
            missing = researcher.request(method, path.format(id=unknown), params=params)
            where = f"{method} {path} ({kind})"
            assert seen.status_code == missing.status_code == 404, (where, seen.text)
            assert seen.headers["content-type"] == missing.headers["content-type"], where
            assert seen.json() == json.loads(missing.text.replace(unknown, workload_id)), where
            assert set(seen.json()) == {"code", "message"}, where
    for kind, workload_id in theirs.items():  # there, and the researcher changed nothing
        mine = api.get(f"/api/v1/workloads/{kind}/{workload_id}")
        assert mine.status_code == 200, mine.text
        assert mine.json()["desiredPhase"] == "Running"


def test_department_rule_covers_its_projects(api: Api) -> None:
    department = api.post(
        "/api/v1/org-unit/departments", json={"name": "lab", "clusterId": api.cluster_id()}
    )
    department_id = department.json()["id"]
    project = api.post(
        "/api/v1/org-unit/projects",
        json={
            "name": "lab-1",
            "clusterId": api.cluster_id(),
            "parentId": department_id,
            "resources": [],
        },
    ).json()["id"]
    lead = app_with_role(api, "lead", Role.L1_RESEARCHER, department_id, scope=ScopeType.DEPARTMENT)
    assert (
        lead.post(
            "/api/v1/workloads/distributed",
            json=distributed(api.cluster_id(), name="ok", project_id=project),
        ).status_code
        == 202
    )
    assert (
        lead.post(
            "/api/v1/workloads/distributed",
            json=distributed(api.cluster_id(), name="no", project_id="1"),
        ).status_code
        == 403
    )
    assert [d["id"] for d in lead.get("/api/v1/org-unit/departments").json()["departments"]] == [
        department_id
    ]


def test_secrets_are_never_returned_or_stored_in_clear(api: Api, settings: Settings) -> None:
    _, secret = identity(api).create_application("quiet")
    engine = create_engine(normalize_url(settings.resolved_database_url))
    with engine.connect() as connection:
        rows = connection.execute(text("SELECT client_id, secret_hash FROM applications")).all()
    engine.dispose()
    assert {row.client_id for row in rows} == {"admin", "quiet"}
    for row in rows:
        assert row.secret_hash.startswith("scrypt$")
        assert secret not in row.secret_hash
        assert "admin-secret-for-tests" not in row.secret_hash
    for path in ("/api/v1/workloads", "/api/v1/org-unit/projects", "/api/v1/clusters"):
        assert secret not in api.get(path).text
