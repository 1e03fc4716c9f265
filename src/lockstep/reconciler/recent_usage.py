"""Recent usage for time-aware fair share: per project, pool and resource, the share of the
pool's capacity the project held, averaged over time with an exponential decay (what was
held one half-life ago counts half as much as what is held now).

The reconciler observes what each project holds at every scheduling cycle and passes the
averages to the scheduler; they are stored with the fair shares (store/scheduling.py), so a
restart of lockstep keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lockstep.domain.quotas import Resource

Usage = dict[str, dict[str, dict[Resource, float]]]
"""Project id → pool → resource → a share of the pool's capacity (0 to 1)."""


@dataclass(slots=True)
class RecentUsage:
    half_life_seconds: float
    averages: Usage = field(default_factory=dict)
    observed_at: float | None = None
    """When (monotonic seconds) the averages were last brought up to date."""

    def observe(
        self,
        held: Mapping[str, Mapping[str, Mapping[Resource, float]]],
        capacity: Mapping[str, Mapping[Resource, float]],
        now: float,
    ) -> None:
        """Fold in what each project holds now (`held`, in the scheduler's units) against
        each pool's `capacity`; the time since the last observation decides the weight."""
        elapsed = 0.0 if self.observed_at is None else max(now - self.observed_at, 0.0)
        keep = 0.5 ** (elapsed / self.half_life_seconds)
        self.observed_at = now
        projects = set(self.averages) | set(held)
        for project in projects:
            pools = self.averages.setdefault(project, {})
            now_held = held.get(project, {})
            for pool in set(pools) | set(now_held):
                resources = pools.setdefault(pool, {})
                for resource in Resource:
                    total = capacity.get(pool, {}).get(resource, 0.0)
                    amount = now_held.get(pool, {}).get(resource, 0.0)
                    fraction = min(amount / total, 1.0) if total > 0 else 0.0
                    before = resources.get(resource, 0.0)
                    resources[resource] = before * keep + fraction * (1 - keep)
        self._forget_negligible()

    def _forget_negligible(self) -> None:
        for project in list(self.averages):
            pools = self.averages[project]
            for pool in list(pools):
                if all(value < 1e-6 for value in pools[pool].values()):
                    del pools[pool]
            if not pools:
                del self.averages[project]
