"""What the pods of a running workload mean for the workload: the operators' success and
failure rules, as a pure function of the plan and the pods' statuses.

- PyTorch, XGBoost, TF, MPI: the job succeeds when its leader (master, chief, launcher) does;
  an elastic PyTorch job, worker pods only, when any of its workers does.
- JAX: the job succeeds when every worker does.
- Fail fast: the first pod to fail (pods that lockstep itself stopped do not count) decides.
  With restartPolicy Never, or when the pod could not even start, the workload fails. Otherwise
  the whole gang is stopped and started again, until it has been restarted backoffLimit times;
  then the workload fails. While it waits out the backoff its message says when the next try
  comes (`Restart.message`), and the reconciler records a `BackOff` event once per restart.
- A workload runs once every pod it started runs (and is ready): all of its pods, or for an
  elastic PyTorch workload at least its minimum (its other pods start as room frees).
- A training or workspace runs its pods as a Job does: it completes once `completions` of them
  have succeeded; a failed pod is run again on its own (restartPolicy Never or OnFailure
  alike) until the pods have failed backoffLimit times, then the workload fails. A workspace
  with restartPolicy Always runs its pod again whenever it ends, and never completes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from lockstep.domain.phases import Phase
from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.workload import PodPhase
from lockstep.runtimes.base import PodStatus
from lockstep.schemas.distributed import DistributedFramework
from lockstep.schemas.pod import RestartPolicy

MAX_BACKOFF_SECONDS = 300.0
BACKOFF_REASON = "BackOff"
"""The reason of the event that tells a restart after a backoff (Kubernetes' reason for it)."""


@dataclass(frozen=True, slots=True)
class Restart:
    """What a Degraded workload is started again after, and which restart that will be."""

    pod: str
    """The pod whose end decided it."""
    exit_code: int | None
    number: int
    """Which restart it will be, from 1."""
    limit: int | None
    """The backoffLimit it counts towards (None: restartPolicy Always, no limit)."""
    action: str
    """What is started again: `restarting every pod`, `running pod <name> again`."""
    reason: str
    """How the pod ended: `pod <name> exited with code 3 (…)`."""

    @property
    def count(self) -> str:
        """`restart 1 of 6`, or without a limit `restart 3`."""
        return f"restart {self.number}" + ("" if self.limit is None else f" of {self.limit}")

    def message(self, at: datetime | None = None) -> str:
        """The workload's phase message while it waits: `restarting every pod after pod
        hello-master-0 exited with code 127 (restart 1 of 6 at 2026-12-04T20:41:07Z)`; without
        `at` (not known yet: other pods are still stopping) `… (restart 1 of 6)`."""
        when = "" if at is None else f" at {utc_second(at)}"
        return f"{self.action} after {self.reason} ({self.count}{when})"

    def backoff_event(self, *, seconds: float, at: datetime) -> str:
        """The BackOff event's message: `pod hello-master-0 exited with code 127; restart 1 of
        6 in 10 s (at 2026-12-04T20:41:07Z)`, `seconds` from now."""
        ended = "ended" if self.exit_code is None else f"exited with code {self.exit_code}"
        return (
            f"pod {self.pod} {ended}; {self.count} in {_seconds(seconds)} s (at {utc_second(at)})"
        )


def utc_second(moment: datetime) -> str:
    """ISO-8601 in UTC to the second, with `Z`: `2026-12-04T20:41:07Z`."""
    return moment.astimezone(UTC).replace(tzinfo=None, microsecond=0).isoformat() + "Z"


def _seconds(seconds: float) -> str:
    """`10`, `160`, or under a second `0.2`: whole seconds from one up."""
    seconds = max(seconds, 0.0)
    return f"{round(seconds):d}" if seconds >= 1 else f"{round(seconds, 1):g}"


@dataclass(frozen=True, slots=True)
class Outcome:
    phase: Phase
    message: str = ""
    log_tail_of: str | None = None
    """The pod whose log's last lines the message ends with: the failed pod that decided the
    outcome, unless its own termination message says why it ended."""
    restart: bool = False
    """Stop the whole gang and start it again (after `restart_backoff`)."""
    restart_pods: tuple[str, ...] = ()
    """With `restart`: only these pods (a training's or workspace's), the others untouched."""
    next_restart: Restart | None = None
    """With `restart`: which pod ended, and which restart comes (for the BackOff event)."""


def gang_restarts(plan: ReplicaPlan, pods: Sequence[PodStatus]) -> int:
    """How many times the gang has been restarted: its leader's attempt number."""
    return next((p.restarts for p in pods if p.name == plan.leader.pod_name), 0)


def restart_backoff(restarts: int, *, base_seconds: float) -> float:
    """Seconds to wait before restart number `restarts + 1`: doubling, capped at 5 minutes."""
    return float(min(base_seconds * 2**restarts, MAX_BACKOFF_SECONDS))


def outcome(plan: ReplicaPlan, pods: Sequence[PodStatus]) -> Outcome:
    if plan.is_single_pod:
        return _single_pod_outcome(plan, pods)
    by_name = {pod.name: pod for pod in pods}
    leader = by_name.get(plan.leader.pod_name)
    if plan.framework is DistributedFramework.JAX:
        if len(pods) == len(plan.replicas) and all(p.phase is PodPhase.SUCCEEDED for p in pods):
            return Outcome(Phase.COMPLETED, "every worker completed")
    elif plan.is_elastic:
        done = next((p for p in pods if p.phase is PodPhase.SUCCEEDED), None)
        if done is not None:
            return Outcome(Phase.COMPLETED, f"{done.name} completed")
    elif leader is not None and leader.phase is PodPhase.SUCCEEDED:
        return Outcome(Phase.COMPLETED, f"{leader.name} completed")
    failed = sorted(
        (p for p in pods if p.phase is PodPhase.FAILED and not p.stopped),
        key=lambda p: (p.finished_at is None, p.finished_at, p.name),
    )
    if failed:
        first = failed[0]
        reason = f"pod {first.name} {first.message}".rstrip()
        tail = None if first.explained else first.name
        restarts = gang_restarts(plan, pods)
        if plan.restart_policy is RestartPolicy.NEVER or first.exit_code is None:
            return Outcome(Phase.FAILED, reason, log_tail_of=tail)
        if restarts >= plan.backoff_limit:
            return Outcome(
                Phase.FAILED,
                f"{reason}; the workload has reached the specified backoff limit "
                f"({plan.backoff_limit})",
                log_tail_of=tail,
            )
        restart = Restart(
            pod=first.name,
            exit_code=first.exit_code,
            number=restarts + 1,
            limit=plan.backoff_limit,
            action="restarting every pod",
            reason=reason,
        )
        return Outcome(
            Phase.DEGRADED, restart.message(), log_tail_of=tail, restart=True, next_restart=restart
        )
    return _progress(plan, pods)


def _progress(plan: ReplicaPlan, pods: Sequence[PodStatus]) -> Outcome:
    """A workload none of whose pods decided its outcome: running, or still starting."""
    started = len(pods) >= plan.required_pods
    if started and all(
        p.phase is PodPhase.SUCCEEDED or (p.phase is PodPhase.RUNNING and p.ready) for p in pods
    ):
        return Outcome(Phase.RUNNING)
    unready = [p.name for p in pods if p.phase is PodPhase.RUNNING and not p.ready]
    if unready and started:
        return Outcome(Phase.INITIALIZING, f"waiting for {', '.join(unready)} to be ready")
    return Outcome(Phase.INITIALIZING, "starting pods")


def _single_pod_outcome(plan: ReplicaPlan, pods: Sequence[PodStatus]) -> Outcome:
    completions = len(plan.replicas)
    always = plan.restart_policy is RestartPolicy.ALWAYS
    succeeded = [p for p in pods if p.phase is PodPhase.SUCCEEDED]
    if not always and len(succeeded) >= completions:
        if completions == 1:
            return Outcome(Phase.COMPLETED, f"{succeeded[0].name} completed")
        return Outcome(Phase.COMPLETED, f"all {completions} completions succeeded")
    ended = sorted(
        (
            p
            for p in pods
            if (p.phase is PodPhase.FAILED and not p.stopped)
            or (always and p.phase is PodPhase.SUCCEEDED)
        ),
        key=lambda p: (p.finished_at is None, p.finished_at, p.name),
    )
    if not ended:
        return _progress(plan, pods)
    first = ended[0]
    reason = f"pod {first.name} {first.message}".rstrip()
    tail = None if first.explained or first.phase is PodPhase.SUCCEEDED else first.name
    if first.exit_code is None and first.phase is PodPhase.FAILED:
        return Outcome(Phase.FAILED, reason, log_tail_of=tail)
    failures = sum(p.restarts for p in pods)
    if not always and failures >= plan.backoff_limit:
        if plan.backoff_limit > 0:
            reason += (
                f"; the workload has reached the specified backoff limit ({plan.backoff_limit})"
            )
        return Outcome(Phase.FAILED, reason, log_tail_of=tail)
    restart = Restart(
        pod=first.name,
        exit_code=first.exit_code,
        number=failures + 1,
        limit=None if always else plan.backoff_limit,
        action=f"running pod {first.name} again",
        reason=reason,
    )
    return Outcome(
        Phase.DEGRADED,
        restart.message(),
        log_tail_of=tail,
        restart=True,
        restart_pods=(first.name,),
        next_restart=restart,
    )
