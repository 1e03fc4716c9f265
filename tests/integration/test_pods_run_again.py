"""A workload that runs again — resumed after a suspension, or admitted again after it was
preempted — has new pods, as on Kubernetes: `/pods` lists them (new ids, a new creation time),
`runningPods` counts them, their logs are read (the earlier runs' lines kept before them), and
the earlier pods are gone from `/pods`. On SQLite and on PostgreSQL, with real processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockstep.config import NodeSettings, Settings
from tests.conftest import make_settings
from tests.support.api import Api, poll
from tests.support.requests import distributed, python

RUNS = python("print('running', flush=True)\nimport time\ntime.sleep(600)")
PODS = {"again-master-0", "again-worker-0"}


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """One node with two GPUs, so that a gang of two one-GPU pods fills it."""
    configured = make_settings(tmp_path / "data", database_url)
    nodes = [NodeSettings(name="alpha", pool="a100", cpu_cores=8, memory="16Gi", gpus=2)]
    return configured.model_copy(update={"nodes": nodes})


def create(api: Api, name: str, **spec: Any) -> str:
    body = distributed(
        api.cluster_id(),
        name=name,
        workers=1,
        args=RUNS,
        compute={"gpuDevicesRequest": 1},
        nodePools=["a100"],
        **spec,
    )
    return str(api.create(body)["workloadId"])


def pods_of(api: Api, workload_id: str, **params: str) -> list[dict[str, Any]]:
    response = api.get(f"/api/v1/workloads/{workload_id}/pods", params=params)
    assert response.status_code == 200, response.text
    return list(response.json()["pods"])


def running_pods(api: Api, workload_id: str) -> dict[str, dict[str, Any]]:
    """The workload's pods once both run and the workload counts them; fail at the deadline."""

    def both_running() -> dict[str, dict[str, Any]] | None:
        pods = {p["name"]: p for p in pods_of(api, workload_id)}
        running = set(pods) == PODS and all(p["k8sPhase"] == "Running" for p in pods.values())
        counted = api.workload(workload_id)["runningPods"] == len(PODS)
        return pods if running and counted else None

    return poll(both_running, timeout=60, what="both pods running and counted")


def log_lines(api: Api, workload_id: str, pod: str) -> list[str]:
    response = api.get(f"/api/v1/workloads/{workload_id}/pods/{pod}/logs")
    assert response.status_code == 200, response.text
    return response.text.splitlines()


def logged_twice(api: Api, workload_id: str) -> None:
    """Each pod's log holds the first run's line and the second's."""

    def both_runs() -> bool | None:
        return (
            all(log_lines(api, workload_id, pod) == ["running", "running"] for pod in PODS) or None
        )

    def seen() -> str:
        logs = {pod: log_lines(api, workload_id, pod) for pod in sorted(PODS)}
        return f"each pod's second run in its log; saw {logs}"

    poll(both_runs, timeout=60, what=seen)


def assert_new_pods(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> None:
    for name in PODS:
        assert after[name]["id"] != before[name]["id"], name
        assert after[name]["createdAt"] >= before[name]["createdAt"], name
        assert after[name]["containers"][0]["restartCount"] == 0, after[name]


def delete(api: Api, *workload_ids: str) -> None:
    for workload_id in workload_ids:
        assert api.delete(f"/api/v1/workloads/distributed/{workload_id}").status_code == 202
    for workload_id in workload_ids:
        api.wait_gone(workload_id)


def test_a_resumed_workload_lists_counts_and_logs_its_new_pods(api: Api) -> None:
    workload_id = create(api, "again")
    first = running_pods(api, workload_id)

    assert api.post(f"/api/v1/workloads/distributed/{workload_id}/suspend").status_code == 202
    api.wait_for(workload_id, {"Stopped"})
    assert pods_of(api, workload_id) == []
    assert api.workload(workload_id)["runningPods"] == 0
    removed = {p["name"]: p["id"] for p in pods_of(api, workload_id, deleted="true")}
    assert removed == {name: pod["id"] for name, pod in first.items()}

    assert api.post(f"/api/v1/workloads/distributed/{workload_id}/resume").status_code == 202
    api.wait_for(workload_id, {"Running"})
    second = running_pods(api, workload_id)
    assert_new_pods(first, second)
    assert pods_of(api, workload_id, deleted="true") == []
    logged_twice(api, workload_id)
    delete(api, workload_id)


def test_a_preempted_workload_lists_counts_and_logs_its_new_pods(api: Api) -> None:
    workload_id = create(api, "again")
    first = running_pods(api, workload_id)

    build = create(api, "build", priorityClass="build")
    api.wait_for(build, {"Running"})
    assert api.wait_for(workload_id, {"Pending"})["runningPods"] == 0
    assert pods_of(api, workload_id) == []

    delete(api, build)  # room again: the preempted workload is admitted and runs
    api.wait_for(workload_id, {"Running"})
    second = running_pods(api, workload_id)
    assert_new_pods(first, second)
    logged_twice(api, workload_id)
    delete(api, workload_id)
