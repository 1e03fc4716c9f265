"""The official Run:ai Python client (`runapy`), unmodified, against a live lockstep server:
token, projects and clusters, then create, get, suspend, resume and delete a distributed
workload, and watch it through the generic workloads API."""

from __future__ import annotations

import sys
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
