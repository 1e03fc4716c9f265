"""One scheduling cycle: heads → usage → gang placement → admit in order → the rest wait.

Heads come by priority, then in submission order, strictly: a gang that fits the cluster but
not what is free now blocks those behind it, so large gangs are never starved by small ones. A
gang that cannot fit even on an idle cluster is parked (it waits without blocking anyone) until
capacity changes. Candidates come as shapes (shape.py): whether a gang could ever fit is
judged from its shape first, so a gang larger than the cluster is parked without a per-pod
object made, whatever its size; only a gang the nodes could hold is placed pod by pod.

A gang that waits may preempt: running workloads of lower priority that are preemptible are
chosen, the lowest priority and the most recently admitted first, until the gang would fit
without them; they are stopped (and requeued) and the gang starts once they have let go.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from lockstep.domain.cluster import Node
from lockstep.scheduler.placement import (
    GangPlacement,
    GangShortfall,
    PodNeed,
    Usage,
    grow,
    place,
)
from lockstep.scheduler.shape import GangShape, never_fits_idle, pod_room
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


@dataclass(slots=True)
class Decisions:
    admitted: dict[str, GangPlacement] = field(default_factory=dict)
    """In the order they were admitted."""
    parked: dict[str, str] = field(default_factory=dict)
    waiting: dict[str, str] = field(default_factory=dict)
    preempted: dict[str, str] = field(default_factory=dict)
    """Holder → the name of the workload it makes room for."""
    grown: dict[str, GangPlacement] = field(default_factory=dict)
    """Elastic holders that got room for more pods → their whole placement now."""


def schedule(
    usage: Usage,
    heads: Sequence[Candidate],
    holders: Sequence[Holder] = (),
    *,
    fit_idle: Collection[str] = (),
) -> Decisions:
    """Decide on `heads` (in queue order) given what `usage` says is taken by `holders`
    (newest last); admitted gangs are counted in `usage`. `fit_idle`: candidates already known
    to fit these nodes were they idle (see `can_never_fit`), not judged again."""
    decisions = Decisions()
    blocked_by: Candidate | None = None
    room = pod_room(usage.nodes)
    for candidate in heads:
        never = None
        if candidate.workload_id not in fit_idle:
            never = can_never_fit(usage.nodes, candidate)
        if never is not None:
            decisions.parked[candidate.workload_id] = never
            continue
        if blocked_by is not None:
            decisions.waiting[candidate.workload_id] = f"queued behind workload {blocked_by.name}"
            continue
        # It could fit the cluster, so its required pods are at most what the nodes run at
        # once; of an elastic gang's other pods no more than that could ever start either.
        required = candidate.required or candidate.shape.size
        needs = list(candidate.shape.pods(limit=required + room))
        placed = place(usage, needs, affinity=candidate.affinity)
        if isinstance(placed, GangShortfall) and required < len(needs):
            placed = _elastic(usage, candidate, needs[:required], needs[required:])
        if isinstance(placed, GangShortfall):
            message = f"waiting for resources: {placed.message}"
            victims = _victims(usage, candidate, needs, holders, decisions)
            if victims is not None:
                for victim in victims:
                    decisions.preempted[victim.workload_id] = candidate.name
                names = ", ".join(victim.name for victim in victims)
                message = "waiting for preempted workloads to stop" + (
                    f": {names}" if names else ""
                )
            decisions.waiting[candidate.workload_id] = message
            blocked_by = candidate
        else:
            decisions.admitted[candidate.workload_id] = placed
    if blocked_by is None:
        # Nobody waits for room: elastic gangs take what is left for their waiting pods.
        for holder in holders:
            if holder.waiting and not holder.leaving:
                added = grow(usage, holder.placement, holder.waiting, affinity=holder.affinity)
                if added:
                    decisions.grown[holder.workload_id] = {**holder.placement, **added}
    return decisions


def can_never_fit(nodes: Sequence[Node], candidate: Candidate) -> str | None:
    """Why the candidate's required pods could not fit even on idle nodes (the message it is
    parked with), or None. Judged from its shape first, so a gang larger than the cluster
    costs no per-pod object; one the nodes could hold is then placed on them, idle."""
    never = never_fits_idle(nodes, candidate.required_shape, affinity=candidate.affinity)
    return None if never is None else f"the workload can never fit this cluster: {never}"


def _elastic(
    usage: Usage, candidate: Candidate, required: Sequence[PodNeed], rest: Sequence[PodNeed]
) -> GangPlacement | GangShortfall:
    """An elastic gang's minimum, placed together, and as many of its other pods as fit."""
    placed = place(usage, required, affinity=candidate.affinity)
    if isinstance(placed, GangShortfall):
        return placed
    return {**placed, **grow(usage, placed, rest, affinity=candidate.affinity)}


def _victims(
    usage: Usage,
    candidate: Candidate,
    needs: Sequence[PodNeed],
    holders: Sequence[Holder],
    decisions: Decisions,
) -> list[Holder] | None:
    """The holders to preempt so that `candidate` fits (none: those already leaving are
    enough), or None when preempting every eligible holder would not make it fit."""
    trial = usage.copy()
    for holder in holders:
        if holder.leaving or holder.workload_id in decisions.preempted:
            trial.release(holder.needs, holder.placement)
    if _fits(trial, candidate, needs):
        return []
    eligible = [
        h
        for h in holders
        if h.preemptible
        and h.priority < candidate.priority
        and not h.leaving
        and h.workload_id not in decisions.preempted
    ]
    # The lowest priority first; among equals the most recently admitted (holders come oldest
    # first).
    ranked = sorted(enumerate(eligible), key=lambda pair: (pair[1].priority, -pair[0]))
    chosen: list[Holder] = []
    for _, holder in ranked:
        trial.release(holder.needs, holder.placement)
        chosen.append(holder)
        if _fits(trial, candidate, needs):
            return chosen
    return None


def _fits(usage: Usage, candidate: Candidate, needs: Sequence[PodNeed]) -> bool:
    return not isinstance(place(usage.copy(), needs, affinity=candidate.affinity), GangShortfall)
