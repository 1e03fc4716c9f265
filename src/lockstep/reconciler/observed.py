"""What the reconcilers write about what they observed: a pod's record when its status
changed, and the events that tell the change (Scheduled, Started, Ready, Restarted,
Completed, Failed, OOMKilled, Waiting). Used by the local runtime's reconciler and the
Kubernetes one alike, so both report pods the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lockstep.domain.clock import Clock
from lockstep.domain.workload import Event, EventType, Pod, PodPhase, Workload
from lockstep.observability.instruments import Instruments
from lockstep.runtimes.base import OOM_KILLED, PodStatus


class Recorder:
    """Makes the pod records and events of one observation, with ids and times of its own."""

    def __init__(
        self,
        *,
        clock: Clock,
        new_id: Callable[[], str],
        instruments: Instruments | None = None,
    ) -> None:
        """`instruments`: counts the pods that start and those that fail."""
        self._clock = clock
        self._new_id = new_id
        self._instruments = instruments

    def pod_changes(
        self, workload: Workload, statuses: Sequence[PodStatus], known: dict[str, Pod]
    ) -> tuple[list[Pod], list[Event]]:
        pods: list[Pod] = []
        events: list[Event] = []
        now = self._clock()
        for status in statuses:
            before = known.get(status.name)
            pod = Pod(
                id=before.id if before else self._new_id(),
                workload_id=workload.id,
                name=status.name,
                role=status.role,
                index=status.index,
                phase=status.phase,
                image=status.image,
                created_at=before.created_at if before else (status.created_at or now),
                node_name=status.node_name,
                ip=status.ip,
                started_at=status.started_at,
                completed_at=status.finished_at,
                restarts=status.restarts,
                exit_code=status.exit_code,
                message=status.message,
                reason=status.reason,
                ready=status.ready,
                ports=status.ports,
            )
            if before == pod:
                continue
            pods.append(pod)
            if pod.ready and (before is None or not before.ready):
                events.append(
                    self.event(
                        workload, "Ready", f"pod {pod.name} is ready", kind="Pod", name=pod.name
                    )
                )
            if before is not None and pod.restarts > before.restarts:
                events.append(
                    self.event(
                        workload,
                        "Restarted",
                        f"pod {pod.name} started again (restart {pod.restarts})",
                        kind="Pod",
                        name=pod.name,
                    )
                )
            started_now = pod.started_at is not None and (before is None or not before.started_at)
            self._count(before, pod, started_now=started_now)
            if status.unapplied and started_now:
                events.append(
                    self.event(
                        workload,
                        "NotApplied",
                        f"pod {pod.name} runs without a sandbox (LOCKSTEP_SANDBOX=off): "
                        f"{', '.join(status.unapplied)} not applied",
                        type=EventType.WARNING,
                        kind="Pod",
                        name=pod.name,
                    )
                )
            if before is None or before.phase != pod.phase or before.restarts != pod.restarts:
                events.append(self.pod_event(workload, pod, status))
        return pods, events

    def pod_event(self, workload: Workload, pod: Pod, status: PodStatus) -> Event:
        if not status.scheduled:
            return self.event(
                workload, "Waiting", f"pod {pod.name} {pod.message}", kind="Pod", name=pod.name
            )
        if pod.phase is PodPhase.FAILED and status.reason == OOM_KILLED:
            return self.event(
                workload,
                OOM_KILLED,
                f"pod {pod.name} {pod.message}",
                type=EventType.WARNING,
                kind="Pod",
                name=pod.name,
            )
        reasons = {
            PodPhase.PENDING: (
                "Scheduled",
                EventType.NORMAL,
                f"pod {pod.name} assigned to {pod.node_name}",
            ),
            PodPhase.RUNNING: ("Started", EventType.NORMAL, f"pod {pod.name} started"),
            PodPhase.SUCCEEDED: ("Completed", EventType.NORMAL, f"pod {pod.name} {pod.message}"),
            PodPhase.FAILED: ("Failed", EventType.WARNING, f"pod {pod.name} {pod.message}"),
            PodPhase.UNKNOWN: (
                "Unknown",
                EventType.WARNING,
                f"pod {pod.name} is in an unknown state",
            ),
        }
        reason, kind, message = reasons[pod.phase]
        return self.event(workload, reason, message, type=kind, kind="Pod", name=pod.name)

    def _count(self, before: Pod | None, pod: Pod, *, started_now: bool) -> None:
        if self._instruments is None:
            return
        if started_now or (before is not None and pod.restarts > before.restarts):
            self._instruments.pods_started.inc()
        failed_now = pod.phase is PodPhase.FAILED and (
            before is None or before.phase is not PodPhase.FAILED or pod.restarts > before.restarts
        )
        if failed_now:
            self._instruments.pods_failed.inc()

    def event(
        self,
        workload: Workload,
        reason: str,
        message: str,
        *,
        type: EventType = EventType.NORMAL,
        kind: str = "Workload",
        name: str | None = None,
    ) -> Event:
        return Event(
            id=self._new_id(),
            workload_id=workload.id,
            created_at=self._clock(),
            type=type,
            reason=reason,
            message=message,
            object_kind=kind,
            object_name=name or workload.name,
        )
