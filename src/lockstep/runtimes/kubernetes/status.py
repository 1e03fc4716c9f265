"""What the cluster says about a workload, in lockstep's terms: the phase and message from the
Kubeflow job's conditions, each pod's status from its Pod object, and events from Kubernetes
Events. Pure and table-driven; the Kubernetes reconciler calls it with what its watches saw.

The job's conditions whose status is "True" are read in a fixed order — Failed, Succeeded,
Suspended, Restarting, Running — and the first decides; without any the job is Pending (the
last condition alone is not enough: Running stays listed, False, after the job ends). A
Pending job is refined by its pods: the scheduler's reason a pod cannot be placed, or why a
container cannot start (ImagePullBackOff, …), becomes the message, and pods that are placed
and starting make it Initializing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lockstep.domain.phases import Phase
from lockstep.domain.workload import Event, EventType, PodPhase
from lockstep.runtimes.base import OOM_KILLED, PodStatus

Object = Mapping[str, Any]

CONDITION_PHASES: tuple[tuple[str, Phase], ...] = (
    ("Failed", Phase.FAILED),
    ("Succeeded", Phase.COMPLETED),
    ("Suspended", Phase.STOPPED),
    ("Restarting", Phase.INITIALIZING),
    ("Running", Phase.RUNNING),
)
"""A True condition of the job → the workload's phase, the first found in this order."""

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

ROLE_LABELS = ("training.kubeflow.org/replica-type", "training.kubeflow.org/job-role")
INDEX_LABEL = "training.kubeflow.org/replica-index"


@dataclass(frozen=True, slots=True)
class JobState:
    """The workload's phase as the cluster reports it, and why."""

    phase: Phase
    message: str


def job_state(job: Object | None, pods: Sequence[PodStatus]) -> JobState:
    """The phase of a job (None: not created yet, or gone) and of its pods."""
    if job is None:
        return JobState(Phase.PENDING, "")
    conditions = {
        condition.get("type"): condition
        for condition in (job.get("status") or {}).get("conditions") or []
        if condition.get("status") == "True"
    }
    for kind, phase in CONDITION_PHASES:
        if kind in conditions:
            return JobState(phase, str(conditions[kind].get("message") or ""))
    return _before_running(pods)


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
        index=int(labels.get(INDEX_LABEL, 0)),
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
