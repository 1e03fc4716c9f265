"""A real PyTorch run through the API: a gloo all_reduce across a master and two workers."""

from __future__ import annotations

import pytest

from tests.support.api import poll
from tests.support.requests import EXAMPLES, distributed
from tests.support.server import LiveServer

pytest.importorskip("torch", reason="the PyTorch end-to-end tests need torch installed")


def test_allreduce_across_master_and_two_workers_completes(
    live_server_on_each_store: LiveServer,
) -> None:
    live_server = live_server_on_each_store
    api = live_server.api()
    body = distributed(
        api.cluster_id(),
        name="allreduce",
        workers=2,
        args=str(EXAMPLES / "pytorch" / "allreduce.py"),
    )
    created = api.create(body)
    done = api.wait_for(created["workloadId"], {"Completed", "Failed"}, timeout=120)
    assert done["phase"] == "Completed", done

    def settled() -> list[dict[str, object]] | None:
        pods: list[dict[str, object]] = api.get(
            f"/api/v1/workloads/{created['workloadId']}/pods"
        ).json()["pods"]
        return pods if all(p["k8sPhase"] != "Running" for p in pods) else None

    pods = poll(settled, timeout=30, what="every pod to finish")
    assert sorted(str(p["name"]) for p in pods) == [
        "allreduce-master-0",
        "allreduce-worker-0",
        "allreduce-worker-1",
    ]
    assert {p["k8sPhase"] for p in pods} == {"Succeeded"}
    logs = {
        pod: (
            live_server.data_dir / "runtime" / "local" / created["workloadId"] / pod / "log"
        ).read_text()
        for pod in ("allreduce-master-0", "allreduce-worker-0", "allreduce-worker-1")
    }
    for rank, pod in enumerate(sorted(logs)):
        assert f"rank {rank} of 3 on {pod}: sum 6, expected 6" in logs[pod], logs[pod]


def test_failing_worker_fails_the_workload_with_code_and_pod(live_server: LiveServer) -> None:
    api = live_server.api()
    script = "import os, sys, time; sys.exit(3) if os.environ['RANK'] == '2' else time.sleep(600)"
    body = distributed(
        api.cluster_id(),
        name="broken",
        workers=2,
        args=f'-c "{script}"',
        restartPolicy="Never",
        terminationGracePeriodSeconds=1,
    )
    created = api.create(body)
    failed = api.wait_for(created["workloadId"], {"Failed", "Completed"}, timeout=60)
    assert failed["phase"] == "Failed"
    assert "broken-worker-1" in failed["phaseMessage"]
    assert "exited with code 3" in failed["phaseMessage"]

    def stopped() -> list[dict[str, object]] | None:
        pods: list[dict[str, object]] = api.get(
            f"/api/v1/workloads/{created['workloadId']}/pods"
        ).json()["pods"]
        return pods if all(p["k8sPhase"] != "Running" for p in pods) else None

    pods = poll(stopped, timeout=30, what="the other pods to be stopped")
    assert {p["name"]: p["k8sPhase"] for p in pods}["broken-worker-1"] == "Failed"
