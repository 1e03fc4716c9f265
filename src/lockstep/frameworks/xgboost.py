"""XGBoostJob wiring, exactly as the Kubeflow operator sets it (xgboost/xgboost.go).

Every pod gets MASTER_ADDR/PORT (the master's address), WORLD_SIZE (every replica), RANK (the
master's index, then each worker's index plus the number of masters) and PYTHONUNBUFFERED.
With more than one replica it also gets WORKER_ADDRS, the host of each worker (one entry per
worker, total - 1 in all, as the operator lists them, meant for LightGBM), and WORKER_PORT.
The operator gives every pod the Worker replica type's port there; every pod of a local
workload shares one host, so each gets its own port instead. Called by the local runtime
through the framework registry.
"""

from __future__ import annotations

from lockstep.domain.plan import Replica, ReplicaPlan, Role
from lockstep.frameworks.endpoints import Endpoints


def rank(plan: ReplicaPlan, replica: Replica) -> int:
    """The master's index; a worker's index plus the number of masters."""
    if replica.role is Role.MASTER:
        return replica.index
    masters = sum(1 for r in plan.replicas if r.role is Role.MASTER)
    return replica.index + masters


def environment(plan: ReplicaPlan, replica: Replica, endpoints: Endpoints) -> dict[str, str]:
    master = endpoints[plan.leader.pod_name]
    env = {
        "MASTER_PORT": str(master.port),
        "MASTER_ADDR": master.host,
        "WORLD_SIZE": str(len(plan.replicas)),
        "RANK": str(rank(plan, replica)),
        "PYTHONUNBUFFERED": "1",
    }
    if len(plan.replicas) > 1:
        env["WORKER_PORT"] = str(endpoints[replica.pod_name].port)
        env["WORKER_ADDRS"] = ",".join(endpoints[w.pod_name].host for w in plan.workers)
    return env
