"""The replica plan: which pods a workload consists of and what each one runs.

A training's pods are `<name>-<index>`, one per completion: `parallelism` of them start
together (the gang), and each later one starts once the pod `parallelism` before it has
succeeded, where that one ran. A workspace is one pod, `<name>-0`.

An elastic PyTorch workload (minReplicas/maxReplicas) is worker pods only, as Kubeflow's
elastic PyTorchJobs are: `numWorkers` workers, worker-0 leading (it hosts the rendezvous), each
a node of the rendezvous, so the bounds count exactly the pods that join it.

One function, `lay_out_gang`, lays a gang out from its counts; the replica plan, the
scheduler's compact gang and the API's `requestedPods` derive from that layout.

Pure: built from the validated spec alone, used by the rules (pod-name lengths), by the
scheduler (gang size and requests) and by every runtime (what to start).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

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


SINGLE_POD_ROLES = frozenset({Role.TRAINING, Role.WORKSPACE})

SINGLE_POD_ROLE: dict[WorkloadKind, Role] = {
    WorkloadKind.TRAINING: Role.TRAINING,
    WorkloadKind.WORKSPACE: Role.WORKSPACE,
}

DEFAULT_SINGLE_POD_RESTART_POLICY = RestartPolicy.NEVER
"""A training's or workspace's pods run to completion, as a Job's do: a failed one is run
again (restartPolicy Never or OnFailure alike) until backoffLimit failures."""


def pod_name_prefix(workload_name: str, role: Role) -> str:
    """What a pod's name is before its index: `<workload>-<role>-`, as the operators name
    pods; `<workload>-` for a training's or workspace's."""
    if role in SINGLE_POD_ROLES:
        return f"{workload_name}-"
    return f"{workload_name}-{role.value}-"


def pod_name(workload_name: str, role: Role, index: int) -> str:
    """`<workload>-<role>-<index>`, as the operators name pods; `<workload>-<index>` for a
    training's or workspace's."""
    return f"{pod_name_prefix(workload_name, role)}{index}"


class GangCounts(NamedTuple):
    """What sizes a gang, as a request gives it (unset fields None)."""

    kind: WorkloadKind
    framework: DistributedFramework | None = None
    num_workers: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    completions: int | None = None
    parallelism: int | None = None

    @classmethod
    def of_spec(cls, kind: WorkloadKind, spec: PodSpec) -> GangCounts:
        """The counts of a validated spec of `kind`."""
        if isinstance(spec, WorkerSpec):
            return cls(
                kind,
                spec.distributed_framework,
                spec.num_workers,
                spec.min_replicas,
                spec.max_replicas,
            )
        if isinstance(spec, TrainingSpec):
            return cls(kind, completions=spec.completions, parallelism=spec.parallelism)
        return cls(kind)


@dataclass(frozen=True, slots=True)
class ReplicaGroup:
    """Consecutive pods of one role that run one spec: indexes `first` to `first + count - 1`."""

    role: Role
    first: int
    count: int
    runs_leader_spec: bool = False
    """The leader alone, which runs the master's spec when the request gives one."""

    def prefix(self, workload_name: str) -> str:
        return pod_name_prefix(workload_name, self.role)


class GangLayout(NamedTuple):
    """How a workload's pods are laid out: its groups, the leader first in the first one."""

    groups: tuple[ReplicaGroup, ...]
    together: int
    """How many pods are admitted together: a training's `parallelism`, else all of them."""
    bounds: tuple[int, int] | None = None
    """An elastic PyTorch gang's (minReplicas, maxReplicas), in worker pods."""

    @property
    def pods(self) -> int:
        return sum(group.count for group in self.groups)


def lay_out_gang(counts: GangCounts) -> GangLayout:
    """The one layout of a gang, which the replica plan, the scheduler's gang and the API's
    `requestedPods` derive from.

    A distributed workload is its leader (master, chief, launcher; JAX's coordinating
    worker-0) and `numWorkers` workers; an elastic PyTorch one its `numWorkers` worker pods
    only, worker-0 leading. A training is one pod per completion, `parallelism` of them (never
    more than completions, one when only completions is given) admitted together, as a Job
    counts them; a workspace one pod."""
    if counts.kind is not WorkloadKind.DISTRIBUTED:
        role = SINGLE_POD_ROLE[counts.kind]
        if counts.kind is not WorkloadKind.TRAINING:
            return GangLayout((ReplicaGroup(role, 0, 1),), together=1)
        completions = counts.completions or 1
        parallelism = min(counts.parallelism or 1, completions)
        return GangLayout((ReplicaGroup(role, 0, completions),), together=parallelism)
    framework = counts.framework or DistributedFramework.PYTORCH
    workers = counts.num_workers or 1
    bounds = bounds_of(framework, counts.min_replicas, counts.max_replicas)
    if bounds is not None:
        return GangLayout((ReplicaGroup(Role.WORKER, 0, workers),), workers, bounds)
    leader = LEADER_ROLE[framework]
    # JAX's coordinating worker-0 comes on top of numWorkers.
    first_worker = 1 if leader is Role.WORKER else 0
    groups = (
        ReplicaGroup(leader, 0, 1, runs_leader_spec=True),
        ReplicaGroup(Role.WORKER, first_worker, workers),
    )
    return GangLayout(groups, together=1 + workers)


def _replicas(
    workload_name: str, layout: GangLayout, *, leader: PodSpec, worker: PodSpec
) -> tuple[Replica, ...]:
    """The layout's pods in rank order, the first one leading."""
    return tuple(
        Replica(
            group.role,
            index,
            pod_name(workload_name, group.role, index),
            leader if group.runs_leader_spec else worker,
            is_leader=position == 0 and index == group.first,
        )
        for position, group in enumerate(layout.groups)
        for index in range(group.first, group.first + group.count)
    )


def build_single_pod_plan(workload_name: str, kind: WorkloadKind, spec: PodSpec) -> ReplicaPlan:
    """The plan of a training or workspace: one replica per completion, the first leading."""
    layout = lay_out_gang(GangCounts.of_spec(kind, spec))
    return ReplicaPlan(
        workload_name=workload_name,
        framework=None,
        replicas=_replicas(workload_name, layout, leader=spec, worker=spec),
        restart_policy=spec.restart_policy or DEFAULT_SINGLE_POD_RESTART_POLICY,
        backoff_limit=DEFAULT_BACKOFF_LIMIT if spec.backoff_limit is None else spec.backoff_limit,
        clean_pod_policy=CleanPodPolicy.NONE,
        slots_per_worker=DEFAULT_SLOTS_PER_WORKER,
        min_workers=None,
        max_workers=None,
        kind=kind,
        parallelism=layout.together,
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


def build_plan(
    workload_name: str,
    spec: WorkerSpec,
    *,
    master_spec_same_as_worker: bool | None,
    master_spec: MasterSpec | None,
) -> ReplicaPlan:
    """The replica plan of a validated spec (distributedFramework and numWorkers are set)."""
    framework = spec.distributed_framework or DistributedFramework.PYTORCH
    layout = lay_out_gang(GangCounts.of_spec(WorkloadKind.DISTRIBUTED, spec))
    bounds = layout.bounds
    # An elastic gang's leader is one of its workers.
    leader = (
        spec
        if bounds is not None
        else leader_spec(
            spec, master_spec_same_as_worker=master_spec_same_as_worker, master_spec=master_spec
        )
    )
    return ReplicaPlan(
        workload_name=workload_name,
        framework=framework,
        replicas=_replicas(workload_name, layout, leader=leader, worker=spec),
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
    layout = lay_out_gang(GangCounts(WorkloadKind.DISTRIBUTED, framework, num_workers))
    candidates = [f"-{g.role.value}-{g.first + g.count - 1}" for g in layout.groups]
    return max(candidates, key=len)
