"""PyTorchJob wiring, exactly as the Kubeflow operator sets it (envvar.go, master.go, elastic.go).

Every pod gets PYTHONUNBUFFERED, MASTER_ADDR/PORT, WORLD_SIZE, RANK and the PET_* variables
that torchrun reads; with an elastic policy the c10d rendezvous on worker-0 instead of a fixed
PET_NNODES.
"""

from __future__ import annotations

from lockstep.domain.plan import Replica, ReplicaPlan, Role
from lockstep.frameworks.endpoints import Endpoints


def environment(plan: ReplicaPlan, replica: Replica, endpoints: Endpoints) -> dict[str, str]:
    leader = plan.leader
    master = endpoints[leader.pod_name]
    rank = replica.index if replica.role is Role.MASTER else replica.index + 1
    env = {
        "PYTHONUNBUFFERED": "1",
        "MASTER_ADDR": master.host,
        "MASTER_PORT": str(master.port),
        "PET_MASTER_ADDR": master.host,
        "PET_MASTER_PORT": str(master.port),
        "WORLD_SIZE": str(len(plan.replicas)),
        "RANK": str(rank),
        "PET_NODE_RANK": str(rank),
    }
    if plan.is_elastic:
        first_worker = plan.workers[0]
        rendezvous = endpoints[first_worker.pod_name]
        env["PET_RDZV_BACKEND"] = "c10d"
        env["PET_RDZV_ENDPOINT"] = str(rendezvous)
        env["PET_NNODES"] = f"{plan.min_workers}:{plan.max_workers}"
    else:
        env["PET_NNODES"] = str(len(plan.replicas))
    return env
