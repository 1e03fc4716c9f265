"""The official Run:ai Python client (`runapy`), unmodified, against a live lockstep server:
token, projects and clusters, then create, get, suspend, resume and delete a distributed
workload, a training and a workspace, and watch each through the generic workloads API."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.api import poll
from tests.support.server import LiveServer

runai = pytest.importorskip("runai", reason="the runapy client is part of the test extra")

from runai.api_client import ApiClient  # noqa: E402
from runai.configuration import Configuration  # noqa: E402
from runai.exceptions import ApiException  # noqa: E402
from runai.models.distributed_creation_request import DistributedCreationRequest  # noqa: E402
from runai.models.distributed_spec_spec import DistributedSpecSpec  # noqa: E402
from runai.models.environment_variable import EnvironmentVariable  # noqa: E402
from runai.models.training_creation_request import TrainingCreationRequest  # noqa: E402
from runai.models.training_spec_spec import TrainingSpecSpec  # noqa: E402
from runai.models.workspace_creation_request import WorkspaceCreationRequest  # noqa: E402
from runai.models.workspace_spec_spec import WorkspaceSpecSpec  # noqa: E402
from runai.runai_client import RunaiClient  # noqa: E402


def _client(server: LiveServer) -> RunaiClient:
    configuration = Configuration(
        client_id="admin",
        client_secret="admin-secret-for-tests",
        runai_base_url=server.url,
        retry_enabled=False,
    )
    return RunaiClient(ApiClient(configuration))  # type: ignore[no-untyped-call]


def test_official_client_manages_a_distributed_workload(live_server: LiveServer) -> None:
    client = _client(live_server)
    token = client.api_client._token
    assert token.count(".") == 2
    assert client.api_client.token_refresher._token_expiry > 0

    clusters = client.organizations.clusters.get_clusters().data
    cluster_id = clusters[0]["uuid"]
    projects = client.organizations.projects.get_projects().data["projects"]
    assert [p["name"] for p in projects] == ["default"]

    request = DistributedCreationRequest(
        name="from-runapy",
        project_id=projects[0]["id"],
        cluster_id=cluster_id,
        spec=DistributedSpecSpec(
            image="python:3.11",
            command=sys.executable,
            args="-c 'import time; time.sleep(600)'",
            distributed_framework="PyTorch",
            num_workers=1,
        ),
    )
    distributed = client.workloads.distributed
    created = distributed.create_distributed(distributed_creation_request=request)
    assert created.status_code == 202
    workload: dict[str, Any] = created.data
    workload_id = workload["workloadId"]
    assert workload["name"] == "from-runapy"
    assert workload["createdBy"] == "admin"

    got = distributed.get_distributed(workload_id=workload_id).data
    assert got["spec"]["numWorkers"] == 1
    assert got["spec"]["distributedFramework"] == "PyTorch"

    workloads = client.workloads.workloads

    def phase() -> str:
        item: dict[str, Any] = workloads.get_workload(workload_id=workload_id).data
        return str(item["phase"])

    poll(lambda: True if phase() == "Running" else None, timeout=60, what="Running")
    assert distributed.suspend_distributed(workload_id=workload_id).status_code == 202
    assert distributed.get_distributed(workload_id=workload_id).data["desiredPhase"] == "Stopped"
    poll(lambda: True if phase() == "Stopped" else None, timeout=60, what="Stopped")
    assert distributed.resume_distributed(workload_id=workload_id).status_code == 202
    poll(lambda: True if phase() == "Running" else None, timeout=60, what="Running again")

    listed = workloads.get_workloads(filter_by=["name==from-runapy"]).data["workloads"]
    assert [w["id"] for w in listed] == [workload_id]

    deleted = distributed.delete_distributed(workload_id=workload_id)
    assert deleted.status_code == 202
    assert deleted.data == {"code": 202, "message": "Request has been accepted."}

    def gone() -> bool | None:
        try:
            distributed.get_distributed(workload_id=workload_id)
        except ApiException as error:
            return True if error.status == 404 else None
        return None

    poll(gone, timeout=60, what="the workload to be deleted")
    deleted_list = workloads.get_workloads(deleted=True).data["workloads"]
    assert [w["id"] for w in deleted_list] == [workload_id]
    assert deleted_list[0]["deletedAt"]


SLEEP_ARGS = "-c 'import time; time.sleep(600)'"


@dataclass(frozen=True)
class Kind:
    """One of the client's single-pod workload APIs: its property on `client.workloads`, the
    word in its method names, the creation method's own name, the models it sends, the type
    the generic list gives it, and the spec fields only it has."""

    api: str
    word: str
    create: str
    request: type[Any]
    spec: type[Any]
    type: str
    extra: dict[str, Any]


KINDS = [
    Kind(
        "trainings",
        "training",
        "create_training1",
        TrainingCreationRequest,
        TrainingSpecSpec,
        "Training",
        {"completions": 1, "parallelism": 1, "backoff_limit": 2},
    ),
    Kind(
        "workspaces",
        "workspace",
        "create_workspace1",
        WorkspaceCreationRequest,
        WorkspaceSpecSpec,
        "Workspace",
        {},
    ),
]


@pytest.mark.parametrize("kind", KINDS, ids=[k.api for k in KINDS])
def test_official_client_manages_a_single_pod_workload(live_server: LiveServer, kind: Kind) -> None:
    client = _client(live_server)
    cluster_id = client.organizations.clusters.get_clusters().data[0]["uuid"]
    project_id = client.organizations.projects.get_projects().data["projects"][0]["id"]
    name = f"runapy-{kind.word}"
    request = kind.request(
        name=name,
        project_id=project_id,
        cluster_id=cluster_id,
        spec=kind.spec(
            image="python:3.11",
            command=sys.executable,
            args=SLEEP_ARGS,
            environment_variables=[EnvironmentVariable(name="STAGE", value="test")],
            termination_grace_period_seconds=2,
            **kind.extra,
        ),
    )
    api = getattr(client.workloads, kind.api)

    def call(action: str, **arguments: Any) -> Any:
        return getattr(api, f"{action}_{kind.word}")(**arguments)

    created = getattr(api, kind.create)(**{f"{kind.word}_creation_request": request})
    assert created.status_code == 202
    workload: dict[str, Any] = created.data
    workload_id = workload["workloadId"]
    assert workload["name"] == name
    assert workload["createdBy"] == "admin"
    assert workload["projectId"] == project_id

    got = call("get", workload_id=workload_id)
    assert got.status_code == 200
    spec = got.data["spec"]
    assert spec["image"] == "python:3.11"
    assert spec["command"] == sys.executable
    assert spec["args"] == SLEEP_ARGS
    assert spec["environmentVariables"] == [{"name": "STAGE", "value": "test"}]
    assert spec["terminationGracePeriodSeconds"] == 2
    sent = kind.spec(**kind.extra).to_dict()
    assert {key: spec.get(key) for key in sent} == sent
    assert "distributedFramework" not in spec and "numWorkers" not in spec

    workloads = client.workloads.workloads

    def phase() -> str:
        item: dict[str, Any] = workloads.get_workload(workload_id=workload_id).data
        assert item["type"] == kind.type
        return str(item["phase"])

    poll(lambda: True if phase() == "Running" else None, timeout=60, what="Running")
    assert call("suspend", workload_id=workload_id).status_code == 202
    assert call("get", workload_id=workload_id).data["desiredPhase"] == "Stopped"
    poll(lambda: True if phase() == "Stopped" else None, timeout=60, what="Stopped")
    assert call("resume", workload_id=workload_id).status_code == 202
    assert call("get", workload_id=workload_id).data["desiredPhase"] == "Running"
    poll(lambda: True if phase() == "Running" else None, timeout=60, what="Running again")

    listed = workloads.get_workloads(filter_by=[f"type=={kind.type}"]).data["workloads"]
    assert [(w["id"], w["name"]) for w in listed] == [(workload_id, name)]

    deleted = call("delete", workload_id=workload_id)
    assert deleted.status_code == 202
    assert deleted.data == {"code": 202, "message": "Request has been accepted."}

    def gone() -> bool | None:
        try:
            call("get", workload_id=workload_id)
        except ApiException as error:
            return True if error.status == 404 else None
        return None

    poll(gone, timeout=60, what=f"the {kind.word} to be deleted")
    deleted_list = workloads.get_workloads(deleted=True).data["workloads"]
    assert [w["id"] for w in deleted_list] == [workload_id]
