"""What a training's or workspace's pod is told: a training's pod its completion index, as an
Indexed Kubernetes Job tells it (`JOB_COMPLETION_INDEX`); a workspace's nothing more."""

from __future__ import annotations

from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.plan import Replica, ReplicaPlan
from lockstep.frameworks.endpoints import Endpoints


def environment(plan: ReplicaPlan, replica: Replica, _: Endpoints) -> dict[str, str]:
    if plan.kind is WorkloadKind.TRAINING:
        return {"JOB_COMPLETION_INDEX": str(replica.index)}
    return {}
