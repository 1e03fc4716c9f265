"""The table from distributed framework to Kubeflow job kind: API version, kind, where the
replica specs go, the replica type of each role, and the container name the operator looks
for (its default port and environment go to that container).

Read by `render` (the job object) and `pods` (the container name). Facts from the Training
Operator v1.9 and mpi-operator v0.8 APIs.
"""

from __future__ import annotations

from dataclasses import dataclass

from lockstep.domain.plan import Role
from lockstep.schemas.distributed import DistributedFramework


@dataclass(frozen=True, slots=True)
class JobKind:
    """How the operator names and shapes one framework's job."""

    api_version: str
    kind: str
    replica_specs_key: str
    """The `spec` key holding the replica specs (`pytorchReplicaSpecs`, …)."""
    replica_types: dict[Role, str]
    """The replica type of each role of the plan (JAX: its coordinating worker-0 is a Worker)."""
    container_name: str
    """The container the operator gives its port and environment (and requires, for v1)."""
    port_name: str | None
    port: int | None
    """The operator's default port on that container (mpi-operator has none: it uses ssh)."""

    @property
    def has_leader_type(self) -> bool:
        """Whether the leader has a replica type of its own (all but JAX, whose worker-0
        coordinates)."""
        return len(self.replica_types) > 1


JOB_KINDS: dict[DistributedFramework, JobKind] = {
    DistributedFramework.PYTORCH: JobKind(
        api_version="kubeflow.org/v1",
        kind="PyTorchJob",
        replica_specs_key="pytorchReplicaSpecs",
        replica_types={Role.MASTER: "Master", Role.WORKER: "Worker"},
        container_name="pytorch",
        port_name="pytorchjob-port",
        port=23456,
    ),
    DistributedFramework.TF: JobKind(
        api_version="kubeflow.org/v1",
        kind="TFJob",
        replica_specs_key="tfReplicaSpecs",
        replica_types={Role.CHIEF: "Chief", Role.WORKER: "Worker"},
        container_name="tensorflow",
        port_name="tfjob-port",
        port=2222,
    ),
    DistributedFramework.XGBOOST: JobKind(
        api_version="kubeflow.org/v1",
        kind="XGBoostJob",
        replica_specs_key="xgbReplicaSpecs",
        replica_types={Role.MASTER: "Master", Role.WORKER: "Worker"},
        container_name="xgboost",
        port_name="xgboostjob-port",
        port=9999,
    ),
    DistributedFramework.JAX: JobKind(
        api_version="kubeflow.org/v1",
        kind="JAXJob",
        replica_specs_key="jaxReplicaSpecs",
        replica_types={Role.WORKER: "Worker"},
        container_name="jax",
        port_name="jaxjob-port",
        port=6666,
    ),
    DistributedFramework.MPI: JobKind(
        api_version="kubeflow.org/v2beta1",
        kind="MPIJob",
        replica_specs_key="mpiReplicaSpecs",
        replica_types={Role.LAUNCHER: "Launcher", Role.WORKER: "Worker"},
        container_name="mpi",
        port_name=None,
        port=None,
    ),
}
