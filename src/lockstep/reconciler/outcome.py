"""What the pods of a running workload mean for the workload: the operators' success and
failure rules, as a pure function of the plan and the pods' statuses.

- PyTorch, XGBoost, TF, MPI: the job succeeds when its leader (master, chief, launcher) does;
  an elastic PyTorch job, worker pods only, when any of its workers does.
- JAX: the job succeeds when every worker does.
- Fail fast: the first pod to fail (pods that lockstep itself stopped do not count) decides.
  With restartPolicy Never, or when the pod could not even start, the workload fails. Otherwise
  the whole gang is stopped and started again, until it has been restarted backoffLimit times;
  then the workload fails.
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

from lockstep.domain.phases import Phase
from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.workload import PodPhase
from lockstep.runtimes.base import PodStatus
from lockstep.schemas.distributed import DistributedFramework
from lockstep.schemas.pod import RestartPolicy

MAX_BACKOFF_SECONDS = 300.0


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
        return Outcome(
            Phase.DEGRADED,
            f"restarting every pod after {reason} (restart {restarts + 1} of {plan.backoff_limit})",
            log_tail_of=tail,
            restart=True,
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
    limit = "" if always else f" of {plan.backoff_limit}"
    return Outcome(
        Phase.DEGRADED,
        f"running pod {first.name} again after {reason} (restart {failures + 1}{limit})",
        log_tail_of=tail,
        restart=True,
        restart_pods=(first.name,),
    )
