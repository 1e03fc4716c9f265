"""The stored workload, its pods, events and phase history, as the rest of lockstep sees them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from lockstep.domain.cluster import Assignment
from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.phases import DesiredPhase, Phase
from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.pod_security import DEFAULT_LEVEL, PodSecurityLevel
from lockstep.domain.priorities import is_preemptible
from lockstep.domain.workload_request import WorkloadRequest
from lockstep.schemas.distributed import DistributedFramework


@dataclass(frozen=True, slots=True)
class PendingMessage:
    """Why a pending workload waits in one node pool, as the contract's
    `PendingSchedulingMessage` says it: a quota's phase reason, and words for the user."""

    node_pool: str
    phase_reason: str
    reason: str
    org_type: str | None = None
    user_message: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {
            "nodePool": self.node_pool,
            "phaseReason": self.phase_reason,
            "reason": self.reason,
            "orgType": self.org_type,
            "userMessage": self.user_message,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PendingMessage:
        return cls(
            node_pool=str(data["nodePool"]),
            phase_reason=str(data["phaseReason"]),
            reason=str(data["reason"]),
            org_type=data.get("orgType"),
            user_message=data.get("userMessage"),
        )


@dataclass(frozen=True, slots=True)
class Workload:
    """A workload as stored: identity, ownership, kind, intent and observed phase."""

    id: str
    name: str
    requested_name: str
    project_id: str
    department_id: str | None
    cluster_id: str
    created_by: str
    created_at: datetime
    desired_phase: DesiredPhase
    actual_phase: Phase
    phase_message: str
    phase_updated_at: datetime
    framework: DistributedFramework | None
    """A distributed workload's framework; None for a training or workspace."""
    request: WorkloadRequest
    """What the user asked for, read through its typed accessors."""
    priority_class: str
    priority: int
    category: str | None = None
    kind: WorkloadKind = WorkloadKind.DISTRIBUTED
    allocated_gpus: float = 0.0
    deleted_at: datetime | None = None
    completed_at: datetime | None = None
    running_pods: int = 0
    namespace: str = ""
    """The project's namespace, where pods of the workload live."""
    project_name: str = ""
    department_name: str = ""
    parked: bool = False
    """A Pending workload that cannot fit even on an empty machine: skipped by scheduling."""
    auto_delete_at: datetime | None = None
    """When a finished workload is deleted (autoDeletionTimeAfterCompletionSeconds)."""
    placement: Mapping[str, Assignment] | None = None
    """Where each pod was placed, while the workload holds its resources (admitted)."""
    pod_security: PodSecurityLevel = DEFAULT_LEVEL
    """Its project's Pod Security level, which the runtimes apply to its pods."""
    pending: tuple[PendingMessage, ...] = ()
    """While Pending because of a quota: why, per node pool (the first one's phase reason is
    the workload's `phaseReason`)."""

    @property
    def phase_reason(self) -> str | None:
        return self.pending[0].phase_reason if self.pending else None

    @property
    def preemptible(self) -> bool:
        """Whether it may be preempted: as its spec asks, else as its priority class implies."""
        return is_preemptible(self.priority_class, self.request.preemptibility)

    def plan(self) -> ReplicaPlan:
        """The replica plan of the stored request."""
        return self.request.plan(self.name)


class PodPhase(StrEnum):
    """The Kubernetes pod phase (`k8sPhase` on the wire)."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


@dataclass(frozen=True, slots=True)
class Pod:
    """One replica's pod as last observed."""

    id: str
    workload_id: str
    name: str
    role: str
    index: int
    phase: PodPhase
    image: str
    created_at: datetime
    node_name: str | None = None
    ip: str | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    restarts: int = 0
    exit_code: int | None = None
    message: str = ""
    reason: str | None = None
    """Why it ended, when that is more than its exit code (OOMKilled)."""
    ready: bool = False
    """Running and passing its readiness probe (or having none)."""
    ports: tuple[PortBinding, ...] = ()


@dataclass(frozen=True, slots=True)
class PortBinding:
    """A container port of a pod and the port of the machine it is reached at."""

    container: int
    host: int
    name: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"container": self.container, "host": self.host, "name": self.name}


class EventType(StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened to a workload or one of its pods."""

    id: str
    workload_id: str
    created_at: datetime
    type: EventType
    reason: str
    message: str
    object_kind: str
    object_name: str
    source: str = "lockstep"


@dataclass(frozen=True, slots=True)
class PhaseChange:
    """One entry of a workload's phase history."""

    workload_id: str
    created_at: datetime
    phase: Phase
    message: str


@dataclass(slots=True)
class WorkloadUpdate:
    """What one reconcile pass changes about a workload, written in one transaction."""

    phase: Phase | None = None
    message: str | None = None
    through: Phase | None = None
    """A phase passed through on the way to `phase` in the same pass (recorded in history)."""
    pods: list[Pod] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    deleted: bool = False
    pods_removed: bool = False
    parked: bool | None = None
    auto_delete_at: datetime | None = None
    placement: Mapping[str, Assignment] | None = None
    """Set on admission: the resources the pods hold from now on; given back when the
    workload reaches a phase without pods."""
    pending: tuple[PendingMessage, ...] | None = None
    """Why it waits, when it is Pending because of a quota (None: unchanged); cleared when it
    leaves Pending."""

    @property
    def is_empty(self) -> bool:
        return (
            self.phase is None
            and self.message is None
            and not self.pods
            and not self.events
            and not self.deleted
            and not self.pods_removed
            and self.parked is None
            and self.auto_delete_at is None
            and self.placement is None
            and self.pending is None
        )
