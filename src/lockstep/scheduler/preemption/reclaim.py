"""Reclaim: what other projects give back to a waiting gang whose project (and department)
stays within its fair share with it.

Victims are tried one at a time on the cycle's own usage (released, tried, held again: no copy
of the nodes) until the gang would fit: preemptible workloads of projects above theirs. A
project yields a workload only while what it holds in the pool is above its deserved share
and above its fair share (or above its deserved share alone, when the reclaiming project stays
within its own deserved share) — KAI's two reclaim strategies; between projects of different
departments the departments must pass the same test. The most saturated project (held / fair
share) yields first; within one the lowest priority, then the newest (the last submitted), as
KAI evicts in the reverse of its queue order. One rule on both runtimes: on Kubernetes KAI
Scheduler applies it to the jobs' priority classes and creation times.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from lockstep.scheduler.gang.candidates import Holder
from lockstep.scheduler.gang.needs import PodNeed
from lockstep.scheduler.nodes.placement import fits
from lockstep.scheduler.nodes.usage import Usage
from lockstep.scheduler.quota.amounts import EPSILON, Amounts, exceeds, zero
from lockstep.scheduler.quota.books import Account, Books
from lockstep.schemas.pod import PodAffinity


class Reclaim:
    """Choosing what other projects give back, on the cycle's usage and books."""

    def __init__(
        self,
        usage: Usage,
        books: Books,
        held: Mapping[str, Mapping[str, Amounts]],
        skip: Collection[str] = (),
    ) -> None:
        self._skip = skip
        """Holders already chosen to stop."""
        self._usage = usage
        self._books = books
        self._held = held
        self._left: dict[int, Amounts] = {}
        self._asked: list[int] = []

    def victims(
        self,
        needs: Sequence[PodNeed],
        affinity: PodAffinity | None,
        *,
        project: str,
        pool: str,
        ask: Amounts,
        others: Mapping[str, Sequence[Holder]],
    ) -> list[Holder] | None:
        """The holders of other projects (`others`: project → its running preemptible
        holders, the first to yield first) to stop so the gang of `project` fits, or None."""
        books = self._books
        mine = books.both(project, pool)
        self._asked = asked = [r for r, value in enumerate(ask) if value > EPSILON]
        if not asked or any(exceeds(mine[0].allocated[r] + ask[r], mine[0].fair[r]) for r in asked):
            return None
        # Its department's fair share bounds only what it takes from other departments: within
        # one, what moves between projects leaves the department's total as it was.
        department_within_fair = all(
            not exceeds(a.allocated[r] + ask[r], a.fair[r]) for a in mine[1:] for r in asked
        )
        within = [
            all(not exceeds(a.allocated[r] + ask[r], a.deserved[r]) for r in asked) for a in mine
        ]
        department = books.hierarchy.department_of.get(project)
        cursors = {other: 0 for other in others if other != project}
        chosen: list[Holder] = []
        found = False
        while not found:
            best: tuple[float, str] | None = None
            for other in list(cursors):
                if not self._next(others[other], cursors, other, pool):
                    continue
                theirs = books.both(other, pool)
                if not self._yields(theirs[0], within[0]):
                    continue
                apart = books.hierarchy.department_of.get(other) != department
                if apart and not department_within_fair:
                    continue
                if apart and len(theirs) > 1 and not self._yields(theirs[1], within[-1]):
                    continue
                saturation = self._saturation(theirs[0])
                if best is None or saturation > best[0]:
                    best = (saturation, other)
            if best is None:
                break
            victim = others[best[1]][cursors[best[1]]]
            cursors[best[1]] += 1
            chosen.append(victim)
            self._take(victim, best[1], pool)
            found = fits(self._usage, needs, affinity)
        for holder in chosen:
            self._usage.hold(holder.needs, holder.placement)
        return chosen if found else None

    def _next(
        self, queue: Sequence[Holder], cursors: dict[str, int], other: str, pool: str
    ) -> bool:
        """Move the project's cursor to its next holder that holds what the gang asks in the
        pool; False (and the project forgotten) when it has none left."""
        position = cursors[other]
        while position < len(queue) and (
            queue[position].workload_id in self._skip
            or not _holds_any(self._held, queue[position], pool, self._asked)
        ):
            position += 1
        cursors[other] = position
        if position >= len(queue):
            del cursors[other]
            return False
        return True

    def _left_of(self, account: Account) -> Amounts:
        key = id(account)
        if key not in self._left:
            self._left[key] = list(account.allocated)
        return self._left[key]

    def _yields(self, account: Account, reclaimer_within: bool) -> bool:
        """Whether the unit may give up a workload: above deserved, and above its fair share
        unless the reclaimer stays within its own deserved share."""
        have = self._left_of(account)
        return any(
            exceeds(have[r], account.deserved[r])
            and (reclaimer_within or exceeds(have[r], account.fair[r]))
            for r in self._asked
        )

    def _saturation(self, account: Account) -> float:
        r = self._asked[0]
        have, fair = self._left_of(account)[r], account.fair[r]
        return have / fair if fair > EPSILON else float("inf")

    def _take(self, victim: Holder, project: str, pool: str) -> None:
        self._usage.release(victim.needs, victim.placement)
        taken = self._held.get(victim.workload_id, {}).get(pool) or zero()
        for account in self._books.both(project, pool):
            have = self._left_of(account)
            for r, value in enumerate(taken):
                have[r] -= value


def _holds_any(
    held: Mapping[str, Mapping[str, Amounts]], holder: Holder, pool: str, asked: Sequence[int]
) -> bool:
    amounts = held.get(holder.workload_id, {}).get(pool)
    return amounts is not None and any(amounts[r] > EPSILON for r in asked)
