"""PyTorchJob wiring, exactly as the Kubeflow operator sets it (envvar.go, master.go, elastic.go).

A fixed-size job (a master and its workers): every pod gets PYTHONUNBUFFERED,
MASTER_ADDR/PORT, WORLD_SIZE, RANK and the PET_* variables that torchrun reads, PET_NNODES
counting every pod. An elastic job (minReplicas/maxReplicas) has no master, so, as the operator
does for a job without one, its worker pods get only PYTHONUNBUFFERED and the rendezvous: c10d
on worker-0 and PET_NNODES "<min>:<max>"; torchrun gives each process its rank and world.
"""

from __future__ import annotations

from lockstep.domain.plan import Replica, ReplicaPlan, Role
from lockstep.frameworks.endpoints import Endpoints


def environment(plan: ReplicaPlan, replica: Replica, endpoints: Endpoints) -> dict[str, str]:
    if plan.is_elastic:
        return {
            "PYTHONUNBUFFERED": "1",
            "PET_RDZV_BACKEND": "c10d",
            "PET_RDZV_ENDPOINT": str(endpoints[plan.leader.pod_name]),
            "PET_NNODES": f"{plan.min_workers}:{plan.max_workers}",
        }
    master = endpoints[plan.leader.pod_name]
    rank = replica.index if replica.role is Role.MASTER else replica.index + 1
    return {
        "PYTHONUNBUFFERED": "1",
        "MASTER_ADDR": master.host,
        "MASTER_PORT": str(master.port),
        "PET_MASTER_ADDR": master.host,
        "PET_MASTER_PORT": str(master.port),
        "WORLD_SIZE": str(len(plan.replicas)),
        "RANK": str(rank),
        "PET_NODE_RANK": str(rank),
        "PET_NNODES": str(len(plan.replicas)),
    }
