"""A real MPI job through the API: the launcher's mpirun reaches numWorkers x slotsPerWorker
ranks, each started inside its worker pod by lockstep's agent, and they allreduce."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lockstep.runtimes.local.worker_agent import address
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


CONFINED = {"seccompProfileType": "RuntimeDefault", "capabilities": ["CHOWN", "KILL"]}
"""The security context of the documentation's example: no namespaces can be made inside."""
ANOTHER_USER = {"uidGidSource": "custom", "runAsUid": 65534, "runAsGid": 65534}
"""Pods running as a user who cannot enter lockstep's data directory."""
AS_ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="pods run as another user with root")


@pytest.mark.skipif(not MPIRUN.exists(), reason="Open MPI's mpirun is not installed beside python")
@pytest.mark.parametrize(
    "security",
    [None, CONFINED, pytest.param(ANOTHER_USER, marks=AS_ROOT_ONLY)],
    ids=["plain", "confined", "another-user"],
)
def test_ranks_started_on_a_worker_see_that_workers_mounts(
    live_server: LiveServer, tmp_path: Path, security: dict[str, Any] | None
) -> None:
    """The workers mount a host path the launcher does not: the ranks mpirun starts on them
    (through the worker's agent) run in the worker's sandbox, so they read it; also from a
    launcher whose seccomp filter and capabilities forbid making a sandbox itself, and with
    every pod running as a user who may enter neither lockstep's data directory nor the
    directory of its interpreter (/etc/mpi and veiled directories make them reachable)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "token").write_text("seen-by-a-worker\n")
    api = live_server.api()
    body = mpi_job(api.cluster_id(), "mounted", workers=2, slots=1)
    body["spec"]["storage"] = {"hostPath": [{"path": str(shared), "mountPath": "/data"}]}
    body["masterSpec"]["args"] = "-n 2 cat /data/token"
    if security is not None:
        body["spec"]["security"] = body["masterSpec"]["security"] = security
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


def test_a_worker_agent_serves_only_the_processes_of_its_workload(
    live_server: LiveServer, tmp_path: Path
) -> None:
    """The agent's socket is in its workload's network: out of reach of this machine's
    network, and of other workloads'. A process that enters that network all the same (root
    on this machine) gets no command run either: only one carrying the marker of one of the
    workload's pods (its launcher's mpirun) does."""
    api = live_server.api()
    body = mpi_job(api.cluster_id(), "guarded", workers=1, slots=1)
    body["masterSpec"] |= {"command": sys.executable, "args": "-c 'import time; time.sleep(600)'"}
    created = api.create(body)
    api.wait_for(created["workloadId"], {"Running"}, timeout=60)
    agent = address(created["workloadId"], "guarded-worker-0")
    with (
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as outsider,
        pytest.raises(ConnectionRefusedError),
    ):
        outsider.connect(agent)
    ran = tmp_path / "ran"
    stranger = (
        "import json, socket, sys, time\n"
        "from lockstep.runtimes.local.worker_agent import address\n"
        "deadline = time.monotonic() + 30\n"
        "while True:\n"
        "    agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "    try:\n"
        "        agent.connect(address(sys.argv[1], 'guarded-worker-0'))\n"
        "        break\n"
        "    except ConnectionRefusedError:\n"
        "        agent.close()\n"
        "        if time.monotonic() > deadline:\n"
        "            raise\n"
        "        time.sleep(0.05)\n"
        "agent.sendall(json.dumps({'argv': ['touch', sys.argv[2]]}).encode() + b'\\n')\n"
        "print(agent.makefile('rb').readline().decode(), end='')\n"
    )
    workload_dir = live_server.data_dir / "runtime" / "local" / created["workloadId"]
    done = subprocess.run(
        ["nsenter", f"--net={workload_dir / 'netns'}", "--", sys.executable, "-c", stranger,
         created["workloadId"], str(ran)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )  # fmt: skip
    assert json.loads(done.stdout) == {"error": "not a process of this workload"}
    assert not ran.exists()
