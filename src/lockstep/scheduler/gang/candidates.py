"""The gangs a scheduling cycle works with: a `Candidate` waiting to be admitted, and a
`Holder`, an admitted workload with what it holds, that a waiting gang may preempt."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lockstep.scheduler.gang.needs import GangPlacement, PodNeed
from lockstep.scheduler.gang.shape import GangShape
from lockstep.schemas.pod import PodAffinity


@dataclass(frozen=True, slots=True)
class Candidate:
    workload_id: str
    name: str
    shape: GangShape
    affinity: PodAffinity | None = None
    priority: int = 0
    required: int | None = None
    """An elastic gang: how many of its pods (the first ones) must start together; the rest
    start as room allows. None: all of them."""
    project_id: str = ""
    preemptible: bool = True

    @property
    def required_shape(self) -> GangShape:
        return self.shape if self.required is None else self.shape.first(self.required)


@dataclass(frozen=True, slots=True)
class Holder:
    """An admitted workload: what it holds, and whether a waiting gang may preempt it."""

    workload_id: str
    name: str
    needs: Sequence[PodNeed]
    placement: GangPlacement
    priority: int = 0
    preemptible: bool = False
    leaving: bool = False
    """Already being stopped (preempted before): what it holds is about to be free."""
    waiting: Sequence[PodNeed] = ()
    """Pods of an elastic gang that have no room yet."""
    affinity: PodAffinity | None = None
    project_id: str = ""
