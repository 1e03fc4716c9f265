"""JAXJob wiring, exactly as the Kubeflow operator sets it (jax/envvar.go).

A JAX job has workers only; worker-0 (the plan's leader) runs the coordination service. Every
pod gets PYTHONUNBUFFERED, COORDINATOR_ADDRESS (worker-0's host, without a port),
COORDINATOR_PORT (worker-0's port), NUM_PROCESSES (every replica) and PROCESS_ID (its index),
which is what `jax.distributed.initialize` needs. Called by the local runtime through the
framework registry.
"""

from __future__ import annotations

from lockstep.domain.plan import Replica, ReplicaPlan
from lockstep.frameworks.endpoints import Endpoints


def environment(plan: ReplicaPlan, replica: Replica, endpoints: Endpoints) -> dict[str, str]:
    coordinator = endpoints[plan.leader.pod_name]
    return {
        "PYTHONUNBUFFERED": "1",
        "COORDINATOR_PORT": str(coordinator.port),
        "COORDINATOR_ADDRESS": coordinator.host,
        "NUM_PROCESSES": str(len(plan.replicas)),
        "PROCESS_ID": str(replica.index),
    }
