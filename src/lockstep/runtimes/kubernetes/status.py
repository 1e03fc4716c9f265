"""What the cluster says about a workload, in lockstep's terms: the phase and message from the
Kubeflow job's conditions (a training's: its Job's; a workspace's: its StatefulSet's pod), each
pod's status from its Pod object, and events from Kubernetes Events. Pure and table-driven; the
Kubernetes reconciler calls `workload_state` with what its watches saw.

The job's conditions whose status is "True" are read in a fixed order — Failed, Succeeded,
Suspended, Restarting, Running — and the first decides; without any the job is Pending (the
last condition alone is not enough: Running stays listed, False, after the job ends). A
Pending job is refined by its pods: the scheduler's reason a pod cannot be placed, or why a
container cannot start (ImagePullBackOff, …), becomes the message, and pods that are placed
and starting make it Initializing.

A training's Job reads its own conditions the same way (Failed, Complete, Suspended); without
any it runs once one of its pods runs and is ready, or has succeeded. A workspace's pod restarts
whenever it ends (a StatefulSet's pods are restartPolicy Always), so the workspace's own
restart policy is applied to how its container last ended (its state, else its lastState):
exit code 0 completes it, another fails it (Never) or, OnFailure, once it has restarted
backoffLimit times; the reconciler then scales the StatefulSet to none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.phases import Phase
from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.workload import Event, EventType, PodPhase
from lockstep.runtimes.base import OOM_KILLED, PodStatus
from lockstep.runtimes.kubernetes.identity import ROLE
from lockstep.runtimes.kubernetes.kinds import ScaledKind
from lockstep.schemas.pod import RestartPolicy

Object = Mapping[str, Any]

CONDITION_PHASES: tuple[tuple[str, Phase], ...] = (
    ("Failed", Phase.FAILED),
    ("Succeeded", Phase.COMPLETED),
    ("Suspended", Phase.STOPPED),
    ("Restarting", Phase.INITIALIZING),
    ("Running", Phase.RUNNING),
)
"""A True condition of the job → the workload's phase, the first found in this order."""

BATCH_JOB_CONDITION_PHASES: tuple[tuple[str, Phase], ...] = (
    ("Failed", Phase.FAILED),
    ("Complete", Phase.COMPLETED),
    ("Suspended", Phase.STOPPED),
)
"""A True condition of a training's `batch/v1` Job → the workload's phase, in this order."""

WAITING_REASONS_THAT_FAIL_TO_START = frozenset(
    {
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "CreateContainerConfigError",
        "CreateContainerError",
        "CrashLoopBackOff",
        "RunContainerError",
    }
)
"""A container waiting for one of these will not start by itself: its message is shown."""

ROLE_LABELS = ("training.kubeflow.org/replica-type", "training.kubeflow.org/job-role", ROLE)
INDEX_LABELS = (
    "training.kubeflow.org/replica-index",
    "batch.kubernetes.io/job-completion-index",
    "apps.kubernetes.io/pod-index",
)
"""Where a pod's index is: the Kubeflow operators', an Indexed Job's, a StatefulSet's label."""


@dataclass(frozen=True, slots=True)
class JobState:
    """The workload's phase as the cluster reports it, and why."""

    phase: Phase
    message: str


def workload_state(plan: ReplicaPlan, owner: Object | None, pods: Sequence[Object]) -> JobState:
    """The phase of a workload from the object that runs it (None: not created yet, or
    gone) and its Pod objects."""
    statuses = [pod_status(pod) for pod in pods]
    match plan.kind:
        case WorkloadKind.DISTRIBUTED:
            return job_state(owner, statuses)
        case WorkloadKind.TRAINING:
            return batch_job_state(owner, statuses)
        case WorkloadKind.WORKSPACE:
            return workspace_state(owner, pods, plan)


def _by_conditions(
    job: Object, table: tuple[tuple[str, Phase], ...], *, with_reason: bool = False
) -> JobState | None:
    conditions = {
        condition.get("type"): condition
        for condition in (job.get("status") or {}).get("conditions") or []
        if condition.get("status") == "True"
    }
    for kind, phase in table:
        if kind in conditions:
            found = conditions[kind]
            parts = (found.get("reason") if with_reason else None, found.get("message"))
            return JobState(phase, ": ".join(str(part) for part in parts if part))
    return None


def job_state(job: Object | None, pods: Sequence[PodStatus]) -> JobState:
    """The phase of a Kubeflow job (None: not created yet, or gone) and of its pods."""
    if job is None:
        return JobState(Phase.PENDING, "")
    return _by_conditions(job, CONDITION_PHASES) or _before_running(pods)


def batch_job_state(job: Object | None, pods: Sequence[PodStatus]) -> JobState:
    """The phase of a training's Job (None: not created yet, or gone) and of its pods."""
    if job is None:
        return JobState(Phase.PENDING, "")
    by_conditions = _by_conditions(job, BATCH_JOB_CONDITION_PHASES, with_reason=True)
    if by_conditions is not None:
        return by_conditions
    if any(
        pod.phase is PodPhase.SUCCEEDED or (pod.phase is PodPhase.RUNNING and pod.ready)
        for pod in pods
    ):
        return JobState(Phase.RUNNING, "")
    return _before_running(pods)


def last_termination(pod: Object) -> Object | None:
    """How the pod's main container last ended: its current state if it has ended, else the
    state it was restarted from (None when it never ended)."""
    containers = (pod.get("status") or {}).get("containerStatuses") or []
    main = containers[0] if containers else {}
    for state in ("state", "lastState"):
        terminated = (main.get(state) or {}).get("terminated")
        if terminated:
            return dict(terminated)
    return None


def ended_message(name: str, terminated: Object) -> str:
    """`pod <name> exited with code N (reason): message`."""
    text = f"pod {name} exited with code {terminated.get('exitCode')}"
    reason = terminated.get("reason")
    if reason and reason not in {"Error", "Completed"}:
        text += f" ({reason})"
    if terminated.get("message"):
        text += f": {terminated['message']}"
    return text


def workspace_state(
    stateful_set: Object | None, pods: Sequence[Object], plan: ReplicaPlan
) -> JobState:
    """The phase of a workspace from its StatefulSet and its one pod (see the module's text)."""
    if stateful_set is None:
        return JobState(Phase.PENDING, "")
    annotations = (stateful_set.get("metadata") or {}).get("annotations") or {}
    if ScaledKind.ENDED_PHASE in annotations:  # it ended, and was scaled down for good
        phase = Phase(annotations[ScaledKind.ENDED_PHASE])
        return JobState(phase, annotations.get(ScaledKind.ENDED_MESSAGE, ""))
    live = [pod for pod in pods if (pod.get("metadata") or {}).get("deletionTimestamp") is None]
    if not live:
        scaled_down = (stateful_set.get("spec") or {}).get("replicas") == 0
        return JobState(Phase.STOPPED if scaled_down and not pods else Phase.PENDING, "")
    status = pod_status(live[0])
    terminated = last_termination(live[0])
    restarted = _container_running(live[0])
    if terminated is not None:
        ended = _ended(status, terminated, plan, restarted=restarted)
        if ended is not None:
            return ended
    if restarted and status.ready:
        return JobState(Phase.RUNNING, "")
    return _before_running([status])


def _ended(
    pod: PodStatus, terminated: Object, plan: ReplicaPlan, *, restarted: bool
) -> JobState | None:
    """What the end of a workspace's container means under its restart policy (None: it runs
    again, and runs)."""
    message = ended_message(pod.name, terminated)
    always = plan.restart_policy is RestartPolicy.ALWAYS
    if not always and terminated.get("exitCode") == 0:
        return JobState(Phase.COMPLETED, f"{pod.name} completed")
    if plan.restart_policy is RestartPolicy.NEVER:
        return JobState(Phase.FAILED, message)
    if not always and pod.restarts >= plan.backoff_limit:
        limit = f"the workload has reached the specified backoff limit ({plan.backoff_limit})"
        return JobState(Phase.FAILED, f"{message}; {limit}")
    if restarted:
        return None
    of_limit = "" if always else f" of {plan.backoff_limit}"
    return JobState(
        Phase.DEGRADED,
        f"running pod {pod.name} again after {message} (restart {pod.restarts + 1}{of_limit})",
    )


def _container_running(pod: Object) -> bool:
    containers = (pod.get("status") or {}).get("containerStatuses") or []
    return bool(containers and (containers[0].get("state") or {}).get("running") is not None)


def _before_running(pods: Sequence[PodStatus]) -> JobState:
    for pod in pods:
        if pod.message and (not pod.scheduled or pod.reason in WAITING_REASONS_THAT_FAIL_TO_START):
            return JobState(Phase.PENDING, f"{pod.name}: {pod.message}")
    if pods and all(pod.scheduled for pod in pods):
        return JobState(Phase.INITIALIZING, "")
    return JobState(Phase.PENDING, "")


def pod_status(pod: Object) -> PodStatus:
    """A Pod object as the reconciler sees pods of every runtime."""
    metadata = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    labels = metadata.get("labels") or {}
    containers = status.get("containerStatuses") or []
    main = containers[0] if containers else {}
    conditions = {c.get("type"): c for c in status.get("conditions") or []}
    scheduled = conditions.get("PodScheduled", {}).get("status") != "False"
    terminated = (main.get("state") or {}).get("terminated") or {}
    waiting = (main.get("state") or {}).get("waiting") or {}
    reason = terminated.get("reason") or waiting.get("reason")
    if not scheduled:
        message = str(conditions["PodScheduled"].get("message") or "unschedulable")
    elif waiting.get("message") or waiting.get("reason"):
        message = ": ".join(str(part) for part in (reason, waiting.get("message")) if part)
    else:
        message = str(terminated.get("message") or status.get("message") or "")
    role = next((labels[key] for key in ROLE_LABELS if key in labels), "")
    return PodStatus(
        name=str(metadata.get("name", "")),
        role=str(role).lower(),
        index=int(next((labels[key] for key in INDEX_LABELS if key in labels), 0)),
        phase=_pod_phase(status.get("phase")),
        image=str(((spec.get("containers") or [{}])[0]).get("image", "")),
        node_name=str(spec.get("nodeName") or ""),
        ip=status.get("podIP"),
        created_at=timestamp(metadata.get("creationTimestamp")),
        started_at=timestamp(status.get("startTime")),
        finished_at=timestamp(terminated.get("finishedAt")),
        exit_code=terminated.get("exitCode"),
        restarts=sum(int(c.get("restartCount") or 0) for c in containers),
        message=message,
        reason=OOM_KILLED if reason == OOM_KILLED else reason,
        scheduled=scheduled,
        ready=conditions.get("Ready", {}).get("status") == "True",
        stopped=metadata.get("deletionTimestamp") is not None,
    )


def _pod_phase(value: object) -> PodPhase:
    try:
        return PodPhase(str(value))
    except ValueError:
        return PodPhase.UNKNOWN


def event(item: Object, *, workload_id: str, now: datetime) -> Event:
    """A Kubernetes Event about the job or one of its pods (`now` when it carries no time)."""
    metadata = item.get("metadata") or {}
    involved = item.get("involvedObject") or item.get("regarding") or {}
    when = (
        timestamp(item.get("lastTimestamp"))
        or timestamp(item.get("eventTime"))
        or timestamp(metadata.get("creationTimestamp"))
        or now
    )
    source = (item.get("source") or {}).get("component") or item.get("reportingController")
    return Event(
        id=str(metadata.get("uid") or metadata.get("name")),
        workload_id=workload_id,
        created_at=when,
        type=EventType.WARNING if item.get("type") == "Warning" else EventType.NORMAL,
        reason=str(item.get("reason") or ""),
        message=str(item.get("message") or item.get("note") or ""),
        object_kind=str(involved.get("kind") or ""),
        object_name=str(involved.get("name") or ""),
        source=str(source or "kubernetes"),
    )


def timestamp(value: object) -> datetime | None:
    """An RFC 3339 time of the API (`2026-11-30T10:00:00Z`, or with fractions for eventTime)."""
    if not isinstance(value, str) or not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
