"""`POST /api/v1/workloads/distributed?dryRun=true` (an extension): the creation's checks,
then what the runtime would run — the local runtime's pod launches, or with
`runtime=kubernetes` the Kubeflow manifests — and nothing stored or started."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lockstep.config import Settings
from tests.conftest import make_settings
from tests.support.access import make_privileged
from tests.support.api import Api
from tests.support.requests import distributed, single_pod

PATH = "/api/v1/workloads/distributed"
EXAMPLES = Path(__file__).resolve().parents[1] / "reference" / "examples"
EXAMPLE_DATA_VOLUME = "123e4567-e89b-12d3-a456-426614174000"


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """A server that has the data volume the example mounts (an administrator registered it)."""
    (tmp_path / "example-data").mkdir()
    volumes = {EXAMPLE_DATA_VOLUME: tmp_path / "example-data"}
    return make_settings(tmp_path / "data", database_url).model_copy(
        update={"data_volumes": volumes}
    )


def test_the_local_dry_run_shows_each_pods_launch_and_stores_nothing(api: Api) -> None:
    body = distributed(api.cluster_id(), name="preview", workers=2, args="-c 'print(1)'")
    rendered = api.post(PATH, params={"dryRun": "true"}, json=body)
    assert rendered.status_code == 200, rendered.text
    plan = rendered.json()
    assert plan["runtime"] == "local"
    launches = {pod["podName"]: pod for pod in plan["pods"]}
    assert sorted(launches) == ["preview-master-0", "preview-worker-0", "preview-worker-1"]
    worker = launches["preview-worker-1"]
    assert worker["argv"][-2:] == ["-c", "print(1)"]
    assert worker["env"]["RANK"] == "2" and worker["env"]["WORLD_SIZE"] == "3"
    assert api.get("/api/v1/workloads").json()["workloads"] == []


def test_a_trainings_dry_run_shows_a_launch_per_completion(api: Api) -> None:
    body = single_pod(api.cluster_id(), name="sweep", completions=3, parallelism=2)
    rendered = api.post("/api/v1/workloads/trainings", params={"dryRun": "true"}, json=body)
    assert rendered.status_code == 200, rendered.text
    launches = {pod["podName"]: pod for pod in rendered.json()["pods"]}
    assert sorted(launches) == ["sweep-0", "sweep-1", "sweep-2"]
    assert launches["sweep-2"]["env"]["JOB_COMPLETION_INDEX"] == "2"
    assert "RANK" not in launches["sweep-2"]["env"]
    assert api.get("/api/v1/workloads").json()["workloads"] == []


def test_the_kubernetes_dry_run_returns_the_manifests(api: Api) -> None:
    body = distributed(api.cluster_id(), name="preview", framework="TF", workers=3)
    rendered = api.post(PATH, params={"dryRun": "true", "runtime": "kubernetes"}, json=body)
    assert rendered.status_code == 200, rendered.text
    manifests = rendered.json()["manifests"]
    job = next(m for m in manifests if m["kind"] == "TFJob")
    assert job["apiVersion"] == "kubeflow.org/v1"
    assert job["metadata"]["name"] == "preview"
    assert job["metadata"]["namespace"] == "runai-default"
    replicas = job["spec"]["tfReplicaSpecs"]
    assert (replicas["Chief"]["replicas"], replicas["Worker"]["replicas"]) == (1, 3)
    assert api.get("/api/v1/workloads").json()["workloads"] == []


def test_the_documentation_example_renders_for_kubernetes(api: Api) -> None:
    make_privileged(api)  # the example mounts host paths
    request = json.loads((EXAMPLES / "create-request.json").read_text())
    request["clusterId"] = api.cluster_id()
    request["projectId"] = "1"
    rendered = api.post(PATH, params={"dryRun": "true", "runtime": "kubernetes"}, json=request)
    assert rendered.status_code == 200, rendered.text
    kinds = {m["kind"] for m in rendered.json()["manifests"]}
    assert {"MPIJob", "PersistentVolumeClaim", "Service", "Ingress"} <= kinds


def test_a_dry_run_checks_the_request_as_a_creation_does(api: Api) -> None:
    body = distributed(api.cluster_id(), workers=2)
    body["spec"]["numWorkers"] = 0
    refused = api.post(PATH, params={"dryRun": "true"}, json=body)
    assert refused.status_code == 400
    assert "numWorkers" in refused.json()["message"]
    unknown = api.post(
        PATH, params={"dryRun": "true", "runtime": "slurm"}, json=distributed(api.cluster_id())
    )
    assert unknown.status_code == 400
    assert unknown.json()["message"] == "runtime: must be local or kubernetes, not 'slurm'"


def test_a_dry_run_needs_access_to_the_project(api: Api) -> None:
    body = distributed(api.cluster_id())
    anonymous = Api(api.client).post(PATH, params={"dryRun": "true"}, json=body)
    assert anonymous.status_code == 401
