"""The tables of what object runs each workload: a distributed workload's framework → its
Kubeflow job kind (API version, kind, where the replica specs go, the replica type of each
role, and the container name the operator looks for: its default port and environment go to
that container); a training → a `batch/v1` Job, a workspace → an `apps/v1` StatefulSet.

Read by `render` (the object), `pods` (the container name), the reconciler (what to get,
suspend and delete) and the watches. Facts from the Training Operator v1.9 and mpi-operator
v0.8 APIs, and Kubernetes 1.30's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.plan import Role
from lockstep.domain.workload import Workload
from lockstep.schemas.distributed import DistributedFramework


@dataclass(frozen=True, slots=True)
class ObjectKind:
    """The object that runs a workload's pods, and the name of its pods' container."""

    api_version: str
    kind: str
    container_name: str

    def is_suspended(self, stored: dict[str, Any]) -> bool:
        """Whether the object as stored runs no pods because lockstep stopped it."""
        return bool((stored.get("spec") or {}).get("suspend"))


@dataclass(frozen=True, slots=True)
class ScaledKind(ObjectKind):
    """A kind stopped by scaling it to no replicas (a StatefulSet: it has no `suspend`)."""

    SCALED_DOWN: ClassVar[dict[str, Any]] = {"spec": {"replicas": 0}}
    ENDED_PHASE: ClassVar[str] = "lockstep.io/ended-phase"
    ENDED_MESSAGE: ClassVar[str] = "lockstep.io/ended-message"
    """Annotations that keep how its workload ended once it is scaled down: were the phase's
    write to the store lost, the next pass reads it here instead of running the pod again."""

    @classmethod
    def ended(cls, phase: str, message: str) -> dict[str, Any]:
        """The patch that scales it down for good, saying how its workload ended."""
        annotations = {cls.ENDED_PHASE: phase, cls.ENDED_MESSAGE: message[:4096]}
        return {"metadata": {"annotations": annotations}, **cls.SCALED_DOWN}

    def is_suspended(self, stored: dict[str, Any]) -> bool:
        return (stored.get("spec") or {}).get("replicas") == 0


@dataclass(frozen=True, slots=True)
class JobKind(ObjectKind):
    """How the operator names and shapes one framework's job."""

    replica_specs_key: str
    """The `spec` key holding the replica specs (`pytorchReplicaSpecs`, …)."""
    replica_types: dict[Role, str]
    """The replica type of each role of the plan (JAX: its coordinating worker-0 is a Worker).
    `container_name` is the container the operator gives its port and environment (and
    requires, for v1)."""
    port_name: str | None
    port: int | None
    """The operator's default port on that container (mpi-operator has none: it uses ssh)."""

    def is_suspended(self, stored: dict[str, Any]) -> bool:
        return bool(((stored.get("spec") or {}).get("runPolicy") or {}).get("suspend"))

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

SINGLE_POD_KINDS: dict[WorkloadKind, ObjectKind] = {
    WorkloadKind.TRAINING: ObjectKind(
        api_version="batch/v1", kind="Job", container_name="training"
    ),
    WorkloadKind.WORKSPACE: ScaledKind(
        api_version="apps/v1", kind="StatefulSet", container_name="workspace"
    ),
}
"""A training runs as an Indexed Job (its pods get JOB_COMPLETION_INDEX, as the local runtime
gives them); a workspace as a StatefulSet of one pod, with a stable name and its headless
Service."""


def object_kind_of(workload: Workload) -> ObjectKind:
    """The kind of the object that runs `workload` on the cluster."""
    if workload.framework is None:
        return SINGLE_POD_KINDS[workload.kind]
    return JOB_KINDS[workload.framework]
