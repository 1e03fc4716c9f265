"""The entry point of the translation: a stored workload and its replica plan as every
manifest the Kubernetes runtime applies, in apply order.

Pure (no client, no I/O): the runtime applies what this returns, and returns it unapplied as
the dry run. A training's and a workspace's manifests are `single_pod`'s. A distributed
workload's job is the framework's Kubeflow kind (`kinds`), one replica spec per replica
type, each with the pod template of the spec its pods run (`pods`); its runPolicy carries the
backoff limit, the TTL after completion, the clean-pod policy, suspension (a stopped workload)
and the scheduler's gang (`scheduling`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lockstep.domain.phases import DesiredPhase
from lockstep.domain.plan import ReplicaPlan, Role
from lockstep.domain.workload import Workload
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.identity import metadata
from lockstep.runtimes.kubernetes.kinds import JOB_KINDS, JobKind
from lockstep.runtimes.kubernetes.networking import Exposure, networking
from lockstep.runtimes.kubernetes.pods import PodTemplate, pod_template
from lockstep.runtimes.kubernetes.scheduling import Scheduling, scheduling_of
from lockstep.runtimes.kubernetes.settings import KubernetesSettings
from lockstep.runtimes.kubernetes.single_pod import single_pod_manifests
from lockstep.schemas.distributed import (
    DEFAULT_SSH_AUTH_MOUNT_PATH,
    DistributedFramework,
    PodSpec,
    WorkerSpec,
    pod_wire,
)
from lockstep.schemas.pod import RestartPolicy

MPI_RESTART_POLICY: dict[RestartPolicy, RestartPolicy] = {
    RestartPolicy.ALWAYS: RestartPolicy.ON_FAILURE,
}
"""mpi-operator accepts only Never and OnFailure (its launcher is a batch Job): a pod that
would always restart restarts when it fails."""

Manifest = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ReplicaType:
    """One replica spec of the job: its type, the role of its pods, how many, what they run."""

    name: str
    role: Role
    replicas: int
    spec: PodSpec
    restart_policy: RestartPolicy
    own_role: bool = True
    """Its pods are all of `role` (not so for JAX's Worker, which includes the leader)."""


def workers_spec(plan: ReplicaPlan) -> PodSpec:
    """The spec the workers other than the leader run (JAX's leader and an elastic PyTorch
    gang's are workers too, and an elastic gang of one has no other)."""
    others = (replica.spec for replica in plan.replicas if not replica.is_leader)
    return next(others, plan.leader.spec)


def same_spec(plan: ReplicaPlan) -> bool:
    """Whether the leader runs exactly the workers' spec."""
    leader, worker = plan.leader.spec, workers_spec(plan)
    return leader is worker or pod_wire(leader) == pod_wire(worker)


def restart_policy(plan: ReplicaPlan, spec: PodSpec) -> RestartPolicy:
    policy = spec.restart_policy or plan.restart_policy
    if plan.framework is DistributedFramework.MPI:
        return MPI_RESTART_POLICY.get(policy, policy)
    return policy


def replica_types(plan: ReplicaPlan, kind: JobKind) -> list[ReplicaType]:
    """The job's replica specs: the leader's and the workers', or (JAX, and elastic PyTorch,
    which is worker pods only as Kubeflow's elastic PyTorchJobs are) one Worker spec for all,
    which cannot give worker-0 a spec of its own."""
    worker = workers_spec(plan)
    if not kind.has_leader_type or plan.leader.role is Role.WORKER:
        if not same_spec(plan):
            raise PodStartError(
                f"a {kind.kind} runs one pod template for every worker: worker-0 cannot run "
                "a masterSpec different from spec; omit masterSpec or make it the same"
            )
        return [
            ReplicaType(
                name=kind.replica_types[Role.WORKER],
                role=Role.WORKER,
                replicas=len(plan.replicas),
                spec=worker,
                restart_policy=restart_policy(plan, worker),
                own_role=False,
            )
        ]
    leader = plan.leader
    return [
        ReplicaType(
            name=kind.replica_types[leader.role],
            role=leader.role,
            replicas=1,
            spec=leader.spec,
            restart_policy=restart_policy(plan, leader.spec),
        ),
        ReplicaType(
            name=kind.replica_types[Role.WORKER],
            role=Role.WORKER,
            replicas=len(plan.workers),
            spec=worker,
            restart_policy=restart_policy(plan, worker),
        ),
    ]


def exposures(plan: ReplicaPlan) -> list[Exposure]:
    """The pods that share a spec, and so its ports and URLs."""
    if same_spec(plan):
        return [Exposure(workers_spec(plan), None)]
    return [
        Exposure(plan.leader.spec, plan.leader.role),
        Exposure(workers_spec(plan), Role.WORKER),
    ]


def run_policy(
    workload: Workload, plan: ReplicaPlan, spec: WorkerSpec, scheduling: Scheduling
) -> dict[str, Any]:
    policy: dict[str, Any] = {
        "cleanPodPolicy": plan.clean_pod_policy.value,
        "backoffLimit": plan.backoff_limit,
        "suspend": workload.desired_phase is DesiredPhase.STOPPED,
    }
    if spec.auto_deletion_time_after_completion_seconds is not None:
        policy["ttlSecondsAfterFinished"] = spec.auto_deletion_time_after_completion_seconds
    if scheduling.scheduling_policy is not None:
        policy["schedulingPolicy"] = scheduling.scheduling_policy
    return policy


def kind_fields(
    plan: ReplicaPlan, spec: WorkerSpec, settings: KubernetesSettings
) -> dict[str, Any]:
    """The spec fields of one framework's kind beside the replica specs and runPolicy."""
    if plan.framework is DistributedFramework.PYTORCH and plan.is_elastic:
        return {
            "elasticPolicy": {
                "minReplicas": plan.min_workers,
                "maxReplicas": plan.max_workers,
                "rdzvBackend": "c10d",
            }
        }
    if plan.framework is DistributedFramework.MPI:
        fields: dict[str, Any] = {
            "slotsPerWorker": plan.slots_per_worker,
            "sshAuthMountPath": spec.ssh_auth_mount_path or DEFAULT_SSH_AUTH_MOUNT_PATH,
            "mpiImplementation": settings.mpi_implementation.value,
        }
        if plan.mpi_launcher_creation_policy is not None:
            fields["launcherCreationPolicy"] = plan.mpi_launcher_creation_policy.value
        return fields
    return {}


def render(workload: Workload, plan: ReplicaPlan, settings: KubernetesSettings) -> list[Manifest]:
    """Every manifest of `workload` in apply order: the PVCs it creates, the Volcano
    PodGroup (before the pods that join it), the job, its Services and Ingresses.
    `PodStartError` when the workload cannot run on Kubernetes as asked."""
    if not workload.name[:1].isalpha():
        raise PodStartError(
            f"the name {workload.name!r} must start with a letter on Kubernetes: the operators "
            "name the job's Services after it (DNS-1035)"
        )
    if plan.framework is None:
        return single_pod_manifests(workload, plan, settings)
    spec = workload.request.worker_spec
    kind = JOB_KINDS[plan.framework]
    scheduling = scheduling_of(workload, plan, settings, spec=spec)
    replica_specs: dict[str, Any] = {}
    claims: dict[str, Manifest] = {}
    for replica_type in replica_types(plan, kind):
        rendered: PodTemplate = pod_template(
            replica_type.spec,
            workload=workload,
            plan=plan,
            role=replica_type.role,
            kind=kind,
            scheduling=scheduling,
            settings=settings,
            role_label=replica_type.own_role,
        )
        for claim in rendered.claims:
            claims.setdefault(claim["metadata"]["name"], claim)
        replica_specs[replica_type.name] = {
            "replicas": replica_type.replicas,
            "restartPolicy": replica_type.restart_policy.value,
            "template": rendered.template,
        }
    job: Manifest = {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": metadata(workload, workload.name, labels=scheduling.job_labels),
        "spec": {
            **kind_fields(plan, spec, settings),
            kind.replica_specs_key: replica_specs,
            "runPolicy": run_policy(workload, plan, spec, scheduling),
        },
    }
    services, ingresses = networking(workload, exposures(plan), settings)
    group = [] if scheduling.pod_group is None else [scheduling.pod_group]
    return [*claims.values(), *group, job, *services, *ingresses]
