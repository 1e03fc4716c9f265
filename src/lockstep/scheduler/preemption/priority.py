"""Preemption by priority, within the waiting gang's project: its preemptible workloads of
lower priority, the lowest priority and the newest (the last submitted) first, tried one at a
time on the cycle's own usage (released, tried, held again: no copy of the nodes) until the
gang would fit.
"""

from __future__ import annotations

from collections.abc import Sequence

from lockstep.scheduler.gang.candidates import Holder
from lockstep.scheduler.gang.needs import PodNeed
from lockstep.scheduler.nodes.placement import fits
from lockstep.scheduler.nodes.usage import Usage
from lockstep.schemas.pod import PodAffinity


def by_priority(
    usage: Usage,
    needs: Sequence[PodNeed],
    affinity: PodAffinity | None,
    priority: int,
    eligible: Sequence[Holder],
) -> list[Holder] | None:
    """The holders of `eligible` (of the gang's project, running and preemptible, the first
    to give way first) to stop so the gang fits, or None when stopping all would not do."""
    chosen: list[Holder] = []
    found = False
    for holder in (h for h in eligible if h.priority < priority):
        usage.release(holder.needs, holder.placement)
        chosen.append(holder)
        if fits(usage, needs, affinity):
            found = True
            break
    for holder in chosen:
        usage.hold(holder.needs, holder.placement)
    return chosen if found else None
