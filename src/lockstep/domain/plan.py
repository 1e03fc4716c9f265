"""The replica plan: which pods a workload consists of and what each one runs.

A training's pods are `<name>-<index>`, one per completion: `parallelism` of them start
together (the gang), and each later one starts once the pod `parallelism` before it has
succeeded, where that one ran. A workspace is one pod, `<name>-0`.

An elastic PyTorch workload (minReplicas/maxReplicas) is worker pods only, as Kubeflow's
elastic PyTorchJobs are: `numWorkers` workers, worker-0 leading (it hosts the rendezvous), each
a node of the rendezvous, so the bounds count exactly the pods that join it.

Pure: built from the validated spec alone, used by the rules (pod-name lengths), by the
scheduler (gang size and requests) and by every runtime (what to start).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from lockstep.domain.kinds import WorkloadKind
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
from lockstep.schemas.single_pod import TrainingSpec


class Role(StrEnum):
    """The replica types of the Kubeflow operators, lower-cased as they appear in pod names;
    and the one role of a training's or workspace's pods."""

    MASTER = "master"
    CHIEF = "chief"
    LAUNCHER = "launcher"
    WORKER = "worker"
    TRAINING = "training"
    WORKSPACE = "workspace"


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
    framework: DistributedFramework | None
    """None for a training or a workspace."""
    replicas: tuple[Replica, ...]
    restart_policy: RestartPolicy
    backoff_limit: int
    clean_pod_policy: CleanPodPolicy
    slots_per_worker: int
    min_workers: int | None
    """An elastic PyTorch gang's minReplicas: worker pods, every one a node of the rendezvous."""
    max_workers: int | None
    mpi_launcher_creation_policy: MpiLauncherCreationPolicy | None = None
    kind: WorkloadKind = WorkloadKind.DISTRIBUTED
    parallelism: int = 1
    """A training's or workspace's pods that run at once (its replicas are its completions)."""

    @property
    def is_single_pod(self) -> bool:
        """A training or a workspace: its pods run on their own, as a Job's do, not as a gang
        that starts, fails and restarts together."""
        return self.kind is not WorkloadKind.DISTRIBUTED

    @property
    def gang_size(self) -> int:
        """How many pods are admitted together: a training's `parallelism`, else all."""
        if self.is_single_pod:
            return min(self.parallelism, len(self.replicas))
        return len(self.replicas)

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
        PyTorch workload (worker pods only) its minReplicas. The others start as capacity
        allows."""
        if self.min_workers is None:
            return self.gang_size
        return max(1, min(self.min_workers, len(self.replicas)))

    def replica(self, pod_name: str) -> Replica:
        for replica in self.replicas:
            if replica.pod_name == pod_name:
                return replica
        raise KeyError(pod_name)


def pod_name(workload_name: str, role: Role, index: int) -> str:
    """`<workload>-<role>-<index>`, as the operators name pods; `<workload>-<index>` for a
    training's or workspace's."""
    if role in SINGLE_POD_ROLES:
        return f"{workload_name}-{index}"
    return f"{workload_name}-{role.value}-{index}"


SINGLE_POD_ROLES = frozenset({Role.TRAINING, Role.WORKSPACE})

SINGLE_POD_ROLE: dict[WorkloadKind, Role] = {
    WorkloadKind.TRAINING: Role.TRAINING,
    WorkloadKind.WORKSPACE: Role.WORKSPACE,
}

DEFAULT_SINGLE_POD_RESTART_POLICY = RestartPolicy.NEVER
"""A training's or workspace's pods run to completion, as a Job's do: a failed one is run
again (restartPolicy Never or OnFailure alike) until backoffLimit failures."""


def single_pod_counts(spec: PodSpec) -> tuple[int, int]:
    """A training's (completions, parallelism) as a Job counts them: one of each by default,
    parallelism one when only completions is given, never more at once than completions."""
    if not isinstance(spec, TrainingSpec):
        return 1, 1
    completions = spec.completions or 1
    parallelism = spec.parallelism or 1
    return completions, min(parallelism, completions)


def build_single_pod_plan(workload_name: str, kind: WorkloadKind, spec: PodSpec) -> ReplicaPlan:
    """The plan of a training or workspace: one replica per completion, the first leading."""
    role = SINGLE_POD_ROLE[kind]
    completions, parallelism = single_pod_counts(spec)
    replicas = tuple(
        Replica(role, i, pod_name(workload_name, role, i), spec, is_leader=i == 0)
        for i in range(completions)
    )
    return ReplicaPlan(
        workload_name=workload_name,
        framework=None,
        replicas=replicas,
        restart_policy=spec.restart_policy or DEFAULT_SINGLE_POD_RESTART_POLICY,
        backoff_limit=DEFAULT_BACKOFF_LIMIT if spec.backoff_limit is None else spec.backoff_limit,
        clean_pod_policy=CleanPodPolicy.NONE,
        slots_per_worker=DEFAULT_SLOTS_PER_WORKER,
        min_workers=None,
        max_workers=None,
        kind=kind,
        parallelism=parallelism,
    )


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


def elastic_bounds(spec: WorkerSpec) -> tuple[int, int] | None:
    """An elastic PyTorch spec's (minReplicas, maxReplicas), in worker pods, each copied from
    the other when only one is given (as the operator does); None for a gang of fixed size."""
    framework = spec.distributed_framework or DistributedFramework.PYTORCH
    return bounds_of(framework, spec.min_replicas, spec.max_replicas)


def bounds_of(
    framework: DistributedFramework, min_replicas: int | None, max_replicas: int | None
) -> tuple[int, int] | None:
    """`elastic_bounds` from the spec's fields: (min, max) for PyTorch with either given."""
    if framework is not DistributedFramework.PYTORCH or (
        min_replicas is None and max_replicas is None
    ):
        return None
    low = max_replicas if min_replicas is None else min_replicas
    high = low if max_replicas is None else max_replicas
    assert low is not None and high is not None
    return low, high


def distributed_pod_count(num_workers: int, *, elastic: bool) -> int:
    """How many pods a distributed workload has (`build_plan`'s replicas): its leader (master,
    chief, launcher; JAX's coordinating worker-0) and `num_workers` workers, or an elastic
    PyTorch workload's `num_workers` worker pods only."""
    return num_workers if elastic else num_workers + 1


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
    bounds = elastic_bounds(spec)
    leader_role = Role.WORKER if bounds is not None else LEADER_ROLE[framework]
    first_worker = 1 if leader_role is Role.WORKER else 0
    leader = (
        spec
        if bounds is not None
        else leader_spec(
            spec, master_spec_same_as_worker=master_spec_same_as_worker, master_spec=master_spec
        )
    )
    worker: PodSpec = spec
    replicas = [
        Replica(leader_role, 0, pod_name(workload_name, leader_role, 0), leader, is_leader=True)
    ]
    # JAX's coordinating worker-0 comes on top of numWorkers; an elastic gang's is one of them.
    last_worker = num_workers if bounds is None else num_workers - 1
    replicas += [
        Replica(Role.WORKER, i, pod_name(workload_name, Role.WORKER, i), worker)
        for i in range(first_worker, first_worker + last_worker)
    ]
    return ReplicaPlan(
        workload_name=workload_name,
        framework=framework,
        replicas=tuple(replicas),
        restart_policy=spec.restart_policy or DEFAULT_RESTART_POLICY[framework],
        backoff_limit=DEFAULT_BACKOFF_LIMIT if spec.backoff_limit is None else spec.backoff_limit,
        clean_pod_policy=spec.clean_pod_policy or CleanPodPolicy.NONE,
        slots_per_worker=spec.slots_per_worker or DEFAULT_SLOTS_PER_WORKER,
        min_workers=None if bounds is None else bounds[0],
        max_workers=None if bounds is None else bounds[1],
        mpi_launcher_creation_policy=spec.mpi_launcher_creation_policy,
    )


def longest_pod_name_suffix(framework: DistributedFramework, num_workers: int) -> str:
    """The longest `-<role>-<index>` a plan of this shape appends to the workload's name."""
    leader = LEADER_ROLE[framework]
    last_worker = num_workers if leader is Role.WORKER else num_workers - 1
    candidates = [f"-{leader.value}-0", f"-{Role.WORKER.value}-{last_worker}"]
    return max(candidates, key=len)
