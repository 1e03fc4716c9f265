"""MPI wiring (frameworks/mpi.py) and the remote-start agent's argument handling."""

from __future__ import annotations

import pytest

from lockstep.frameworks import mpi
from lockstep.frameworks.endpoints import Endpoint
from lockstep.runtimes.local.rsh import split_arguments
from tests.unit.specs import plan_of

MASTER = {"image": "mpi:5", "command": "mpirun", "args": "-n 6 python train.py"}


def test_hostfile_lists_every_worker_with_its_slots() -> None:
    plan = plan_of("MPI", 3, name="job", spec={"slotsPerWorker": 2})
    assert mpi.hostfile(plan) == (
        "job-worker-0 slots=2\njob-worker-1 slots=2\njob-worker-2 slots=2\n"
    )


def test_hostfile_defaults_to_one_slot() -> None:
    assert mpi.hostfile(plan_of("MPI", 1, name="job")) == "job-worker-0 slots=1\n"


def test_launcher_and_worker_environments() -> None:
    plan = plan_of("MPI", 2, name="job", spec={"slotsPerWorker": 4})
    endpoints = {r.pod_name: Endpoint("127.0.0.1", 9000 + i) for i, r in enumerate(plan.replicas)}
    assert mpi.environment(plan, plan.leader, endpoints) == {
        "K_MPI_JOB_ROLE": "launcher",
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_set_default_slots": "4",
    }
    for worker in plan.workers:
        assert mpi.environment(plan, worker, endpoints) == {"K_MPI_JOB_ROLE": "worker"}


def test_paths_name_the_hostfile_and_agent_for_open_mpi_4_and_5() -> None:
    assert mpi.paths(hostfile_path="/h", agent_path="/a") == {
        "OMPI_MCA_orte_default_hostfile": "/h",
        "OMPI_MCA_plm_rsh_agent": "/a",
        "PRTE_MCA_prte_default_hostfile": "/h",
        "PRTE_MCA_plm_ssh_agent": "/a",
    }


@pytest.mark.parametrize(
    ("arguments", "host", "command"),
    [
        (["job-worker-0", "prted", "--x"], "job-worker-0", ["prted", "--x"]),
        (["-o", "ConnectionAttempts=10", "job-worker-1", "orted"], "job-worker-1", ["orted"]),
        (["-x", "-o", "A=b", "h", "c", "d"], "h", ["c", "d"]),
    ],
)
def test_agent_skips_ssh_options(arguments: list[str], host: str, command: list[str]) -> None:
    assert split_arguments(arguments) == (host, command)


def test_agent_needs_a_host_and_a_command() -> None:
    with pytest.raises(SystemExit, match="usage"):
        split_arguments(["-o", "A=b", "job-worker-0"])
