"""MPIJob wiring (mpi-operator v2beta1, Open MPI): a launcher that runs `mpirun`, and workers
that the launcher reaches through the rsh agent named in its environment.

The hostfile lists every worker with `slotsPerWorker` slots. Where the hostfile and the agent
live is up to the runtime (`paths` gives the variables that point at them), so a script that
reads OMPI_MCA_orte_default_hostfile runs unchanged on Kubernetes and here.
"""

from __future__ import annotations

from lockstep.domain.plan import Replica, ReplicaPlan, Role
from lockstep.frameworks.endpoints import Endpoints


def environment(plan: ReplicaPlan, replica: Replica, endpoints: Endpoints) -> dict[str, str]:
    del endpoints  # ranks find each other through mpirun, not through fixed ports
    if replica.role is not Role.LAUNCHER:
        return {"K_MPI_JOB_ROLE": "worker"}
    return {
        "K_MPI_JOB_ROLE": "launcher",
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_set_default_slots": str(plan.slots_per_worker),
    }


def hostfile(plan: ReplicaPlan) -> str:
    """One line per worker: `<pod> slots=<slotsPerWorker>`, as Open MPI reads it."""
    return "".join(f"{w.pod_name} slots={plan.slots_per_worker}\n" for w in plan.workers)


ON_ONE_MACHINE = {"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": "lo"}
"""When every "node" is this machine, ranks exchange data over TCP on the loopback interface
(another address of the machine may not accept the connection). Shared memory is off: ranks of
different pods share the machine's host name, and the shared-memory transport, taking them for
neighbours, crashes reaching segments the other pod's daemon owns."""


def paths(*, hostfile_path: str, agent_path: str) -> dict[str, str]:
    """The launcher's variables naming the hostfile and the remote-start agent, for Open MPI 4
    (ORTE) and Open MPI 5 (PRRTE) alike."""
    return {
        "OMPI_MCA_orte_default_hostfile": hostfile_path,
        "OMPI_MCA_plm_rsh_agent": agent_path,
        "PRTE_MCA_prte_default_hostfile": hostfile_path,
        "PRTE_MCA_plm_ssh_agent": agent_path,
    }
