"""Scheduler wiring of a workload: which scheduler places its pods, in which queue, at which
priority, and how many of them must start together (the gang).

Called by `render`. `kai`: `schedulerName: kai-scheduler`, the queue label on the job (KAI
reads its top owner) and the pods, the PriorityClass KAI ships for lockstep's priority class,
the preemptibility label; KAI's pod-grouper makes the PodGroup from the job and its
`schedulingPolicy.minAvailable`. `volcano`: `schedulerName: volcano`, a PodGroup named after
the job with the gang as minMember, and the pods annotated into it. `default`: nothing.
A training's Job and a workspace's StatefulSet are wired the same way (KAI's pod-grouper
groups a Job's pods from the Job itself, each pod on its own as KAI schedules Jobs; under
Volcano they join the PodGroup of `parallelism` pods). Under every scheduler the job and
pods carry lockstep's priority class, preemptibility and `terminateAfterPreemption` as labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.priorities import TRAIN, is_preemptible
from lockstep.domain.workload import Workload
from lockstep.runtimes.kubernetes.identity import metadata
from lockstep.runtimes.kubernetes.settings import KubernetesSettings, SchedulerKind
from lockstep.schemas.distributed import (
    DistributedFramework,
    MpiLauncherCreationPolicy,
    PodSpec,
)

KAI_QUEUE = "kai.scheduler/queue"
KAI_PREEMPTIBILITY = "kai.scheduler/preemptibility"
VOLCANO_GROUP = "scheduling.k8s.io/group-name"
PRIORITY_CLASS = "lockstep.io/priority-class"
PREEMPTIBILITY = "lockstep.io/preemptibility"
TERMINATE_AFTER_PREEMPTION = "lockstep.io/terminate-after-preemption"
PREEMPTIBLE = "preemptible"
NON_PREEMPTIBLE = "non-preemptible"

KAI_PRIORITY_CLASSES: dict[str, str] = {
    "train": "train",
    "interactive-preemptible": "build-preemptible",
    "build": "build",
    "inference": "inference",
}
"""lockstep's priority classes as the PriorityClasses KAI Scheduler installs (same values:
50, 75, 100, 125); a class lockstep does not know counts as training, as lockstep ranks it."""


@dataclass(frozen=True, slots=True)
class Scheduling:
    """What the scheduler needs on the job, its pods and beside them."""

    job_labels: dict[str, str] = field(default_factory=dict)
    pod_labels: dict[str, str] = field(default_factory=dict)
    pod_annotations: dict[str, str] = field(default_factory=dict)
    pod_spec: dict[str, Any] = field(default_factory=dict)
    """`schedulerName` and `priorityClassName` of every pod."""
    scheduling_policy: dict[str, Any] | None = None
    """The job's `runPolicy.schedulingPolicy`."""
    pod_group: dict[str, Any] | None = None


def gang_size(plan: ReplicaPlan) -> int:
    """How many pods must be placed together: those lockstep's own scheduler requires, less
    an MPI launcher created only once the workers are ready (it cannot be in the gang the
    workers wait for)."""
    size = plan.required_pods
    if (
        plan.framework is DistributedFramework.MPI
        and plan.mpi_launcher_creation_policy is MpiLauncherCreationPolicy.WAIT_FOR_WORKERS_READY
    ):
        size = max(1, size - 1)
    return size


def queue_of(workload: Workload, settings: KubernetesSettings) -> str:
    """The scheduler queue: the configured one, else the project's (named after it)."""
    if settings.queue:
        return settings.queue
    if not workload.project_name:
        raise ValueError(f"workload {workload.id} has no project name to name its queue")
    return workload.project_name


def kai_priority_class(priority_class: str) -> str:
    return KAI_PRIORITY_CLASSES.get(priority_class, KAI_PRIORITY_CLASSES[TRAIN])


def policy_labels(workload: Workload, spec: PodSpec) -> dict[str, str]:
    """lockstep's priority and preemption choices, for every scheduler."""
    preemptible = is_preemptible(workload.priority_class, spec.preemptibility)
    labels = {
        PRIORITY_CLASS: workload.priority_class,
        PREEMPTIBILITY: PREEMPTIBLE if preemptible else NON_PREEMPTIBLE,
    }
    if spec.terminate_after_preemption is not None:
        labels[TERMINATE_AFTER_PREEMPTION] = str(spec.terminate_after_preemption).lower()
    return labels


def scheduling_of(
    workload: Workload, plan: ReplicaPlan, settings: KubernetesSettings, *, spec: PodSpec
) -> Scheduling:
    """The scheduler wiring of `workload` on a cluster set up as `settings` says."""
    labels = policy_labels(workload, spec)
    match settings.scheduler:
        case SchedulerKind.KAI:
            labels |= {KAI_QUEUE: queue_of(workload, settings)}
            labels[KAI_PREEMPTIBILITY] = labels[PREEMPTIBILITY]
            return Scheduling(
                job_labels=labels,
                pod_labels=labels,
                pod_spec={
                    "schedulerName": settings.kai_scheduler_name,
                    "priorityClassName": kai_priority_class(workload.priority_class),
                },
                scheduling_policy={"minAvailable": gang_size(plan)},
            )
        case SchedulerKind.VOLCANO:
            queue = queue_of(workload, settings)
            group = {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": metadata(workload, workload.name),
                "spec": {"minMember": gang_size(plan), "queue": queue},
            }
            return Scheduling(
                job_labels=labels,
                pod_labels=labels,
                pod_annotations={VOLCANO_GROUP: workload.name},
                pod_spec={"schedulerName": settings.volcano_scheduler_name},
                scheduling_policy={"minAvailable": gang_size(plan), "queue": queue},
                pod_group=group,
            )
        case SchedulerKind.DEFAULT:
            return Scheduling(job_labels=labels, pod_labels=labels)
