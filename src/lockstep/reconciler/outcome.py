"""What the pods of a running workload mean for the workload: the operators' success and
failure rules, as a pure function of the plan and the pods' statuses.

- PyTorch, XGBoost, TF, MPI: the job succeeds when its leader (master, chief, launcher) does.
- JAX: the job succeeds when every worker does.
- A failed pod fails the job when the restart policy is Never; otherwise it is restarted until
  the job's restarts reach backoffLimit, then the job fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from lockstep.domain.phases import Phase
from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.workload import PodPhase
from lockstep.runtimes.base import PodStatus
from lockstep.schemas.distributed import DistributedFramework
from lockstep.schemas.pod import RestartPolicy


@dataclass(frozen=True, slots=True)
class Outcome:
    phase: Phase
    message: str = ""
    restart: tuple[str, ...] = field(default=())


def outcome(plan: ReplicaPlan, pods: Sequence[PodStatus]) -> Outcome:
    by_name = {pod.name: pod for pod in pods}
    leader = by_name.get(plan.leader.pod_name)
    if plan.framework is DistributedFramework.JAX:
        if len(pods) == len(plan.replicas) and all(p.phase is PodPhase.SUCCEEDED for p in pods):
            return Outcome(Phase.COMPLETED, "every worker completed")
    elif leader is not None and leader.phase is PodPhase.SUCCEEDED:
        return Outcome(Phase.COMPLETED, f"{leader.name} completed")
    failed = [p for p in pods if p.phase is PodPhase.FAILED]
    if failed:
        first = failed[0]
        reason = f"pod {first.name} {first.message}".rstrip()
        if plan.restart_policy is RestartPolicy.NEVER or first.exit_code is None:
            return Outcome(Phase.FAILED, reason)
        restarts = sum(p.restarts for p in pods)
        if restarts + len(failed) > plan.backoff_limit:
            return Outcome(
                Phase.FAILED,
                f"{reason}; the workload has reached the specified backoff limit "
                f"({plan.backoff_limit})",
            )
        return Outcome(Phase.RUNNING, reason, restart=tuple(p.name for p in failed))
    started = {PodPhase.RUNNING, PodPhase.SUCCEEDED}
    if len(pods) == len(plan.replicas) and all(p.phase in started for p in pods):
        return Outcome(Phase.RUNNING)
    return Outcome(Phase.INITIALIZING, "starting pods")
