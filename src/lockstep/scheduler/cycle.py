"""One scheduling cycle: heads → snapshot → gang fit → admit in order → the rest wait.

Order is strict FIFO by submission: a gang that fits the machine but not what is free now
blocks those behind it, so large gangs are never starved by small ones. A gang that cannot fit
even on an empty machine is parked (it waits without blocking anyone) until capacity changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from lockstep.scheduler.resources import Resources


@dataclass(frozen=True, slots=True)
class Candidate:
    workload_id: str
    name: str
    request: Resources


@dataclass(frozen=True, slots=True)
class Snapshot:
    capacity: Resources
    used: Resources

    @property
    def free(self) -> Resources:
        return self.capacity - self.used


@dataclass(slots=True)
class Decisions:
    admitted: list[str] = field(default_factory=list)
    parked: dict[str, str] = field(default_factory=dict)
    waiting: dict[str, str] = field(default_factory=dict)


def schedule(snapshot: Snapshot, heads: Sequence[Candidate]) -> Decisions:
    decisions = Decisions()
    free = snapshot.free
    blocked_by: Candidate | None = None
    for candidate in heads:
        if not candidate.request.fits_in(snapshot.capacity):
            reasons = "; ".join(candidate.request.shortfall(snapshot.capacity))
            decisions.parked[candidate.workload_id] = (
                f"the workload can never fit this cluster: {reasons}"
            )
        elif blocked_by is not None:
            decisions.waiting[candidate.workload_id] = f"queued behind workload {blocked_by.name}"
        elif candidate.request.fits_in(free):
            decisions.admitted.append(candidate.workload_id)
            free -= candidate.request
        else:
            reasons = "; ".join(candidate.request.shortfall(free))
            decisions.waiting[candidate.workload_id] = f"waiting for resources: {reasons}"
            blocked_by = candidate
    return decisions
