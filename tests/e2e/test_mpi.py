"""A real MPI job through the API: the launcher's mpirun reaches numWorkers x slotsPerWorker
ranks, each started inside its worker pod by lockstep's agent, and they allreduce."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.api import poll
from tests.support.pods import pod_log
from tests.support.requests import EXAMPLES, distributed
from tests.support.server import LiveServer

pytest.importorskip("mpi4py", reason="the MPI end-to-end tests need mpi4py and Open MPI")

MPIRUN = Path(sys.executable).with_name("mpirun")
AS_ROOT = [
    {"name": "OMPI_ALLOW_RUN_AS_ROOT", "value": "1"},
    {"name": "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "value": "1"},
]
"""mpirun refuses to run as root unless told it may (pods run as lockstep's user here)."""


def mpi_job(cluster: str, name: str, *, workers: int, slots: int, **spec: Any) -> dict[str, Any]:
    ranks = workers * slots
    body = distributed(
        cluster,
        name=name,
        framework="MPI",
        workers=workers,
        slotsPerWorker=slots,
        environmentVariables=AS_ROOT if os.geteuid() == 0 else [],
        **spec,
    )
    body["masterSpecSameAsWorker"] = False
    body["masterSpec"] = {
        "image": "mpi:5",
        "command": str(MPIRUN),
        "args": f"-n {ranks} {sys.executable} {EXAMPLES / 'mpi' / 'allreduce.py'}",
        "environmentVariables": AS_ROOT if os.geteuid() == 0 else [],
    }
    del body["spec"]["command"], body["spec"]["args"]  # workers wait for mpirun, as sshd would
    return body


@pytest.mark.skipif(not MPIRUN.exists(), reason="Open MPI's mpirun is not installed beside python")
@pytest.mark.parametrize("policy", ["AtStartup", "WaitForWorkersReady"])
def test_mpi_allreduce_across_workers_and_slots(live_server: LiveServer, policy: str) -> None:
    api = live_server.api()
    body = mpi_job(
        api.cluster_id(), "allreduce", workers=2, slots=2, mpiLauncherCreationPolicy=policy
    )
    created = api.create(body)
    done = api.wait_for(created["workloadId"], {"Completed", "Failed"}, timeout=120)
    assert done["phase"] == "Completed", done["phaseMessage"]
    lines = pod_log(api, created["workloadId"], "allreduce-launcher-0").splitlines()
    reports = sorted(line for line in lines if line.startswith("rank "))
    assert [r.split(" in ")[0] for r in reports] == [f"rank {r} of 4" for r in range(4)]
    assert all(r.endswith("sum 10, expected 10") for r in reports)
    pods_of = {r.split(" in ")[1].split(":")[0] for r in reports}
    assert pods_of == {"allreduce-worker-0", "allreduce-worker-1"}

    def settled() -> list[dict[str, object]] | None:
        pods: list[dict[str, object]] = api.get(
            f"/api/v1/workloads/{created['workloadId']}/pods"
        ).json()["pods"]
        return pods if all(p["k8sPhase"] != "Running" for p in pods) else None

    pods = poll(settled, timeout=30, what="the workers to be stopped")
    assert {p["name"]: p["k8sPhase"] for p in pods} == {
        "allreduce-launcher-0": "Succeeded",
        "allreduce-worker-0": "Succeeded",
        "allreduce-worker-1": "Succeeded",
    }


@pytest.mark.skipif(not MPIRUN.exists(), reason="Open MPI's mpirun is not installed beside python")
def test_ranks_started_on_a_worker_see_that_workers_mounts(
    live_server: LiveServer, tmp_path: Path
) -> None:
    """The workers mount a host path the launcher does not: the ranks mpirun starts on them
    (through lockstep's agent) run in the worker's sandbox, so they read it."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "token").write_text("seen-by-a-worker\n")
    api = live_server.api()
    body = mpi_job(api.cluster_id(), "mounted", workers=2, slots=1)
    body["spec"]["storage"] = {"hostPath": [{"path": str(shared), "mountPath": "/data"}]}
    body["masterSpec"]["args"] = "-n 2 cat /data/token"
    created = api.create(body)
    done = api.wait_for(created["workloadId"], {"Completed", "Failed"}, timeout=120)
    assert done["phase"] == "Completed", done["phaseMessage"]
    log = pod_log(api, created["workloadId"], "mounted-launcher-0")
    assert log.count("seen-by-a-worker") == 2


@pytest.mark.skipif(not MPIRUN.exists(), reason="Open MPI's mpirun is not installed beside python")
def test_a_failed_launcher_fails_the_workload_and_its_workers_are_stopped(
    live_server: LiveServer,
) -> None:
    """The workload's directory holds MPI's hostfile and agent beside its pods: stopping the
    pods passes over it."""
    api = live_server.api()
    body = mpi_job(api.cluster_id(), "broken", workers=2, slots=1)
    body["masterSpec"] |= {"command": sys.executable, "args": "-c 'raise SystemExit(3)'"}
    created = api.create(body)
    done = api.wait_for(created["workloadId"], {"Completed", "Failed"}, timeout=60)
    assert done["phase"] == "Failed"
    assert done["phaseMessage"].startswith("pod broken-launcher-0 exited with code 3")

    def settled() -> dict[str, object] | None:
        pods = api.get(f"/api/v1/workloads/{created['workloadId']}/pods").json()["pods"]
        phases = {p["name"]: p["k8sPhase"] for p in pods}
        return phases if "Running" not in phases.values() else None

    phases = poll(settled, timeout=30, what="the workers to be stopped")
    assert phases["broken-launcher-0"] == "Failed"
    assert set(phases) == {"broken-launcher-0", "broken-worker-0", "broken-worker-1"}
