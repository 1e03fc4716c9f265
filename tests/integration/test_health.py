"""`/healthz`, `/readyz`, `/openapi.json` and `/docs`, without a token: liveness; readiness
when the store answers and the reconciler runs — 503 naming what is not ready when the store
is unreachable or the reconciler stopped, and on Kubernetes "on another replica" where another
replica leads; lockstep's own OpenAPI document, listing every path it serves."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator

from lockstep.api.app import create_app
from lockstep.config import RuntimeKind
from tests.conftest import make_settings
from tests.support.api import Api, poll
from tests.support.databases import PostgresTemplates, require_postgres
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.proxy import OutageProxy
from tests.support.requests import distributed
from tests.support.server import LiveServer

READY = {"status": "ready", "store": "ok", "reconciler": "running"}


def test_healthz_answers_without_a_token(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_when_the_store_answers_and_the_reconciler_runs(client: TestClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200, response.text
    assert response.json() == READY


def test_readyz_of_lockstep_serve(live_server: LiveServer) -> None:
    """`lockstep serve` runs its reconciler in a child process."""
    assert httpx.get(f"{live_server.url}/readyz").json() == READY
    assert httpx.get(f"{live_server.url}/healthz").json() == {"status": "ok"}


def test_readyz_is_503_once_the_reconciler_stopped(client: TestClient) -> None:
    client.app.state.controller.reconciler.stop()  # type: ignore[attr-defined]
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "code": 503,
        "message": "not ready: reconciler: not running",
        "store": "ok",
        "reconciler": "not running",
    }
    assert client.get("/healthz").status_code == 200


@pytest.fixture
def behind_proxy(
    tmp_path: Path, postgres_templates: PostgresTemplates
) -> Iterator[tuple[TestClient, OutageProxy]]:
    """A server whose PostgreSQL is reached through a proxy that a test can cut."""
    require_postgres()
    with postgres_templates.fresh() as url:
        parts = urlsplit(url)
        proxy = OutageProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
        user = f"{parts.username}@" if parts.username else ""
        proxied = urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{proxy.port}"))
        with TestClient(create_app(make_settings(tmp_path / "data", proxied))) as client:
            yield client, proxy
        proxy.cut()


def test_readyz_is_503_while_the_store_is_unreachable(
    behind_proxy: tuple[TestClient, OutageProxy],
) -> None:
    client, proxy = behind_proxy
    api = Api.login(client)
    parked = api.create(distributed(api.cluster_id(), name="huge", compute={"cpuCoreRequest": 1e5}))
    poll(  # the reconciler has recovered and runs its passes
        lambda: "never fit" in api.workload(parked["workloadId"])["phaseMessage"] or None,
        timeout=30,
        what="the workload parked",
    )
    assert client.get("/readyz").json() == READY
    proxy.cut()
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "code": 503,
        "message": "not ready: store: the store is unreachable; please try again shortly",
        "store": "the store is unreachable; please try again shortly",
        "reconciler": "running",
    }
    assert client.get("/healthz").status_code == 200
    proxy.resume()
    poll(
        lambda: client.get("/readyz").status_code == 200 or None,
        timeout=30,
        what="ready again once the store is back",
    )


def test_on_kubernetes_only_the_leader_runs_the_reconciler(
    tmp_path: Path, postgres_templates: PostgresTemplates
) -> None:
    require_postgres()
    with postgres_templates.fresh() as url, FakeKubernetes() as cluster:
        kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")

        def replica(name: str) -> TestClient:
            settings = make_settings(tmp_path / name, url).model_copy(
                update={"runtime": RuntimeKind.KUBERNETES, "kubeconfig": kubeconfig}
            )
            return TestClient(create_app(settings))

        with replica("first") as first:
            poll(lambda: first.get("/readyz").json() == READY or None, timeout=30, what="a leader")
            with replica("second") as second:
                response = second.get("/readyz")
                assert response.status_code == 200, response.text
                assert response.json() == {**READY, "reconciler": "on another replica"}


LOCKSTEP_OPERATIONS = {
    ("/api/v1/token", "post"),
    ("/api/v1/workloads/distributed", "post"),
    ("/api/v1/workloads/distributed/{workloadId}", "get"),
    ("/api/v1/workloads/distributed/{workloadId}", "delete"),
    ("/api/v1/workloads/distributed/{workloadId}/suspend", "post"),
    ("/api/v1/workloads/distributed/{workloadId}/resume", "post"),
    ("/api/v1/workloads", "get"),
    ("/api/v1/workloads/count", "get"),
    ("/api/v1/workloads/{workloadId}", "get"),
    ("/api/v1/workloads/{workloadId}/pods", "get"),
    ("/api/v1/workloads/{workloadId}/events", "get"),
    ("/api/v1/workloads/{workloadId}/history", "get"),
    ("/api/v1/workloads/{workloadId}/pods/{podName}/logs", "get"),
    ("/api/v1/clusters", "get"),
    ("/api/v1/clusters/{clusterUuid}", "get"),
    ("/api/v1/clusters/{clusterUuid}/nodes", "get"),
    ("/api/v1/org-unit/projects", "get"),
    ("/api/v1/org-unit/projects", "post"),
    ("/api/v1/org-unit/projects/{projectId}", "get"),
    ("/api/v1/org-unit/departments", "get"),
    ("/api/v1/org-unit/departments", "post"),
    ("/api/v1/org-unit/departments/{departmentId}", "get"),
    ("/api/v1/scheduling/queue", "get"),
    ("/api/v1/org-unit/projects/{projectId}/secrets", "get"),
    ("/api/v1/org-unit/projects/{projectId}/secrets", "post"),
    ("/api/v1/org-unit/projects/{projectId}/secrets/{name}", "get"),
    ("/api/v1/org-unit/projects/{projectId}/secrets/{name}", "put"),
    ("/api/v1/org-unit/projects/{projectId}/secrets/{name}", "delete"),
    ("/api/v1/org-unit/projects/{projectId}/configmaps", "get"),
    ("/api/v1/org-unit/projects/{projectId}/configmaps", "post"),
    ("/api/v1/org-unit/projects/{projectId}/configmaps/{name}", "get"),
    ("/api/v1/org-unit/projects/{projectId}/configmaps/{name}", "put"),
    ("/api/v1/org-unit/projects/{projectId}/configmaps/{name}", "delete"),
    ("/api/v1/org-unit/projects/{projectId}/claims", "get"),
    ("/api/v1/org-unit/projects/{projectId}/claims", "post"),
    ("/api/v1/org-unit/projects/{projectId}/claims/{name}", "get"),
    ("/api/v1/org-unit/projects/{projectId}/claims/{name}", "delete"),
    ("/api/v1/workloads/{workloadId}/metrics", "get"),
    ("/api/v1/workloads/{workloadId}/pods/{podId}/metrics", "get"),
    ("/api/v1/workloads/telemetry", "get"),
    ("/api/v1/org-unit/projects/{projectId}/metrics", "get"),
    ("/api/v1/org-unit/projects/telemetry", "get"),
    ("/api/v1/org-unit/departments/{departmentId}/metrics", "get"),
    ("/api/v1/clusters/{clusterUuid}/metrics", "get"),
    ("/api/v1/clusters/{clusterUuid}/nodepools/{nodepoolName}/metrics", "get"),
    ("/api/v1/nodes/{nodeId}/metrics", "get"),
    ("/api/v1/users", "get"),
    ("/api/v1/users", "post"),
    ("/api/v1/users/{userId}", "get"),
    ("/api/v1/users/{userId}", "delete"),
    ("/api/v1/users/{userId}/password", "post"),
    ("/api/v1/users/{userId}/logout", "post"),
    ("/api/v1/me/password", "post"),
    ("/api/v1/authorization/roles", "get"),
    ("/api/v1/authorization/roles/{roleIdPath}", "get"),
    ("/api/v1/authorization/permissions", "get"),
    ("/api/v1/authorization/access-rules", "get"),
    ("/api/v1/authorization/access-rules", "post"),
    ("/api/v1/authorization/access-rules/{accessRuleId}", "get"),
    ("/api/v1/authorization/access-rules/{accessRuleId}", "delete"),
    ("/api/v1/authorization/me/access-rules", "get"),
    ("/api/v1/service-accounts", "get"),
    ("/api/v1/service-accounts", "post"),
    ("/api/v1/service-accounts/{serviceAccountId}", "get"),
    ("/api/v1/service-accounts/{serviceAccountId}", "patch"),
    ("/api/v1/service-accounts/{serviceAccountId}", "delete"),
    ("/api/v1/service-accounts/{serviceAccountId}/secret", "post"),
    ("/api/v1/apps", "get"),
    ("/api/v1/apps", "post"),
    ("/api/v1/apps/{appId}", "get"),
    ("/api/v1/apps/{appId}", "patch"),
    ("/api/v1/apps/{appId}", "delete"),
    ("/api/v1/apps/{appId}/secret", "post"),
    ("/api/v1/access-keys", "get"),
    ("/api/v1/access-keys", "post"),
    ("/api/v1/access-keys/{accessKeyId}", "get"),
    ("/api/v1/access-keys/{accessKeyId}", "delete"),
    ("/api/v1/access-keys/{accessKeyId}/secret", "post"),
    ("/api/v1/user-applications", "get"),
    ("/api/v1/user-applications", "post"),
    ("/api/v1/user-applications/{appId}", "get"),
    ("/api/v1/user-applications/{appId}", "delete"),
    ("/api/v1/user-applications/{appId}/secret", "post"),
    ("/api/v1/administration/access-keys", "get"),
    ("/api/v1/administration/access-keys/{accessKeyId}", "delete"),
    ("/api/v1/administration/user-applications", "get"),
    ("/api/v1/administration/user-applications/{appId}", "delete"),
    ("/api/v1/idps", "get"),
    ("/api/v1/idps", "post"),
    ("/api/v1/idps/{idp}", "get"),
    ("/api/v1/idps/{idp}", "put"),
    ("/api/v1/idps/{idp}", "delete"),
    ("/api/v1/idps/{idp}/mappers", "get"),
    ("/api/v1/idps/{idp}/mappers", "put"),
    ("/api/v1/audit/log", "get"),
    ("/api/v1/audit/log/file", "get"),
    ("/healthz", "get"),
    ("/readyz", "get"),
}
"""What lockstep serves (docs/api.md, "Endpoints"), each of which the document must list."""

SAMPLE_PARAMETERS = {
    "workloadId": "00000000-0000-4000-8000-000000000000",
    "clusterUuid": "00000000-0000-4000-8000-000000000000",
    "projectId": "1",
    "departmentId": "1",
    "podName": "x-master-0",
    "name": "x",
    "nodepoolId": "1",
    "podId": "00000000-0000-4000-8000-000000000000",
    "nodeId": "x",
    "nodepoolName": "default",
    "userId": "00000000-0000-4000-8000-000000000000",
    "roleIdPath": "1",
    "accessRuleId": "1",
    "serviceAccountId": "x",
    "appId": "x",
    "accessKeyId": "x",
    "idp": "x",
}


def test_the_openapi_document_lists_every_served_operation(client: TestClient) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    assert document["openapi"].startswith("3.")
    assert document["info"]["title"] == "lockstep"
    listed = {(path, method) for path, item in document["paths"].items() for method in item}
    assert listed >= LOCKSTEP_OPERATIONS
    for path, method in sorted(listed):  # and each one listed is served
        answer = client.request(method, path.format(**SAMPLE_PARAMETERS))
        assert answer.status_code not in {404, 405}, (path, method, answer.text)
    for operation in (op for item in document["paths"].values() for op in item.values()):
        assert operation["responses"], operation
    for schema in document.get("components", {}).get("schemas", {}).values():
        Draft202012Validator.check_schema(schema)


def test_docs_serve_a_page_of_the_document(client: TestClient) -> None:
    response = client.get("/docs")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "/openapi.json" in response.text
