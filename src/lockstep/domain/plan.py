"""The replica plan: which pods a distributed workload consists of and what each one runs.

Pure: built from the validated spec alone, used by the rules (pod-name lengths), by the
scheduler (gang size and requests) and by every runtime (what to start).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from lockstep.schemas.distributed import (
    DEFAULT_BACKOFF_LIMIT,
    DEFAULT_SLOTS_PER_WORKER,
    CleanPodPolicy,
    DistributedFramework,
    MasterSpec,
    MpiLauncherCreationPolicy,
    PodSpec,
    WorkerSpec,
)
from lockstep.schemas.pod import RestartPolicy


class Role(StrEnum):
    """The replica types of the Kubeflow operators, lower-cased as they appear in pod names."""

    MASTER = "master"
    CHIEF = "chief"
    LAUNCHER = "launcher"
    WORKER = "worker"


LEADER_ROLE: dict[DistributedFramework, Role] = {
    DistributedFramework.PYTORCH: Role.MASTER,
    DistributedFramework.XGBOOST: Role.MASTER,
    DistributedFramework.TF: Role.CHIEF,
    DistributedFramework.MPI: Role.LAUNCHER,
    DistributedFramework.JAX: Role.WORKER,
}
"""The role of the leading replica; JAX has none of its own: worker-0 coordinates."""

DEFAULT_RESTART_POLICY: dict[DistributedFramework, RestartPolicy] = {
    DistributedFramework.PYTORCH: RestartPolicy.ON_FAILURE,
    DistributedFramework.XGBOOST: RestartPolicy.NEVER,
    DistributedFramework.TF: RestartPolicy.NEVER,
    DistributedFramework.MPI: RestartPolicy.NEVER,
    DistributedFramework.JAX: RestartPolicy.NEVER,
}
"""The operators' default restartPolicy per framework, used when the spec sets none."""


@dataclass(frozen=True, slots=True)
class Replica:
    """One pod of the gang."""

    role: Role
    index: int
    pod_name: str
    spec: PodSpec
    is_leader: bool = False
    """The master, chief, launcher or (JAX) coordinating worker-0."""


@dataclass(frozen=True, slots=True)
class ReplicaPlan:
    """Every replica of a workload, in rank order (leader first)."""

    workload_name: str
    framework: DistributedFramework
    replicas: tuple[Replica, ...]
    restart_policy: RestartPolicy
    backoff_limit: int
    clean_pod_policy: CleanPodPolicy
    slots_per_worker: int
    min_workers: int | None
    max_workers: int | None
    mpi_launcher_creation_policy: MpiLauncherCreationPolicy | None = None

    @property
    def leader(self) -> Replica:
        return self.replicas[0]

    @property
    def workers(self) -> tuple[Replica, ...]:
        return tuple(r for r in self.replicas if r.role is Role.WORKER)

    @property
    def is_elastic(self) -> bool:
        return self.min_workers is not None or self.max_workers is not None

    @property
    def required_pods(self) -> int:
        """How many pods (leader first) must start together: all of them, or for an elastic
        PyTorch workload its minReplicas, counting the master, which joins the rendezvous like
        any node. The others start as capacity allows."""
        if self.min_workers is None:
            return len(self.replicas)
        return max(1, min(self.min_workers, len(self.replicas)))

    def replica(self, pod_name: str) -> Replica:
        for replica in self.replicas:
            if replica.pod_name == pod_name:
                return replica
        raise KeyError(pod_name)


def pod_name(workload_name: str, role: Role, index: int) -> str:
    """`<workload>-<role>-<index>`, as the operators name pods."""
    return f"{workload_name}-{role.value}-{index}"


def leader_spec(
    spec: WorkerSpec, *, master_spec_same_as_worker: bool | None, master_spec: MasterSpec | None
) -> PodSpec:
    """The spec the leading replica runs: the worker's, unless a distinct masterSpec is given."""
    if master_spec_same_as_worker is False or (
        master_spec_same_as_worker is None and master_spec is not None
    ):
        if master_spec is None:
            raise ValueError("masterSpec is required when masterSpecSameAsWorker is false")
        return master_spec
    return spec


def build_plan(
    workload_name: str,
    spec: WorkerSpec,
    *,
    master_spec_same_as_worker: bool | None,
    master_spec: MasterSpec | None,
) -> ReplicaPlan:
    """The replica plan of a validated spec (distributedFramework and numWorkers are set)."""
    framework = spec.distributed_framework or DistributedFramework.PYTORCH
    num_workers = spec.num_workers or 1
    leader = leader_spec(
        spec, master_spec_same_as_worker=master_spec_same_as_worker, master_spec=master_spec
    )
    worker: PodSpec = spec
    leader_role = LEADER_ROLE[framework]
    first_worker = 1 if leader_role is Role.WORKER else 0
    replicas = [
        Replica(leader_role, 0, pod_name(workload_name, leader_role, 0), leader, is_leader=True)
    ]
    replicas += [
        Replica(Role.WORKER, i, pod_name(workload_name, Role.WORKER, i), worker)
        for i in range(first_worker, first_worker + num_workers)
    ]
    elastic = framework is DistributedFramework.PYTORCH and (
        spec.min_replicas is not None or spec.max_replicas is not None
    )
    return ReplicaPlan(
        workload_name=workload_name,
        framework=framework,
        replicas=tuple(replicas),
        restart_policy=spec.restart_policy or DEFAULT_RESTART_POLICY[framework],
        backoff_limit=DEFAULT_BACKOFF_LIMIT if spec.backoff_limit is None else spec.backoff_limit,
        clean_pod_policy=spec.clean_pod_policy or CleanPodPolicy.NONE,
        slots_per_worker=spec.slots_per_worker or DEFAULT_SLOTS_PER_WORKER,
        min_workers=(spec.min_replicas or spec.max_replicas) if elastic else None,
        max_workers=(spec.max_replicas or spec.min_replicas) if elastic else None,
        mpi_launcher_creation_policy=spec.mpi_launcher_creation_policy,
    )


def longest_pod_name_suffix(framework: DistributedFramework, num_workers: int) -> str:
    """The longest `-<role>-<index>` a plan of this shape appends to the workload's name."""
    leader = LEADER_ROLE[framework]
    last_worker = num_workers if leader is Role.WORKER else num_workers - 1
    candidates = [f"-{leader.value}-0", f"-{Role.WORKER.value}-{last_worker}"]
    return max(candidates, key=len)
