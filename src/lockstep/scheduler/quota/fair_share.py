"""Fair shares: how much of each pool's GPUs, CPU and memory each department and project
should hold now, computed level by level as KAI Scheduler's proportion plugin does.

At each level (the cluster's capacity between departments and projects without one, then a
department's fair share between its projects), for each pool and resource:
1. every unit gets its `deserved` share, but never more than it asks (what it holds plus
   what its pending workloads ask) nor past its `limit` (unlimited deserved: all it asks);
2. what is left is lent out in proportion to `overQuotaWeight` between the units that ask
   for more, never past what one asks or its limit (a weighted water-filling: what a
   satisfied unit does not take goes to the others, in the same proportions); weight 0
   gets nothing beyond deserved.
A department asks what its projects ask (each at most up to its own limit).

GPUs are indivisible, so the over-quota part of a GPU fair share is a whole number of GPUs
(unless it is all a unit asks, which may be a fraction): each unit's part is rounded down,
and the GPUs that rounding left over go one at a time to the units with the largest
remainders (ties: the unit listed first). CPU and memory are divided exactly.

Time-aware fair share (`TimeAware`, off unless given) lowers the over-quota part of units
that used much of the pool recently, as KAI's `kValue` does: a unit's weight w (as a
fraction of the weights of those asking) becomes max(0, w + k * (w - u)), u its recent usage
as a fraction of the pool's capacity; what those weights leave untaken goes out again by
plain weight, so capacity is never held back from those asking for it. Deserved shares are
not affected.

Cost: O(n log n) per level, pool and resource for n units: no per-workload work.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lockstep.domain.quotas import UNLIMITED, Resource
from lockstep.scheduler.quota.amounts import EPSILON, RESOURCES, Amounts, zero
from lockstep.scheduler.quota.hierarchy import Hierarchy
from lockstep.scheduler.quota.organization import OrgType


@dataclass(frozen=True, slots=True)
class TimeAware:
    """Time-aware fair share: recent usage lowers a unit's over-quota share."""

    k_value: float = 1.0
    """How much recent usage counts (KAI's `kValue`): 0 not at all; 0 to 10."""


RecentUsage = Mapping[str, Mapping[str, Mapping[Resource, float]]]
"""Project id → pool → resource → the share (0 to 1) of the pool's capacity the project used
over the recent window, as the caller measures it (decayed or not). A department's is the sum
of its projects'."""


@dataclass(frozen=True, slots=True)
class Share:
    """One unit's standing in one pool and resource, in the scheduler's units."""

    deserved: float
    fair_share: float
    allocated: float
    requested: float
    """What it holds plus what its pending workloads ask."""


@dataclass(frozen=True, slots=True)
class Claim:
    """What one unit brings to a division."""

    deserved: float
    limit: float = UNLIMITED
    weight: float = 1.0
    requested: float = 0.0
    usage: float = 0.0
    """Recent usage, a fraction of capacity (time-aware fair share only)."""


def divide(
    total: float, claims: Sequence[Claim], *, whole: bool = False, k_value: float | None = None
) -> list[float]:
    """Each claim's fair share of `total` (see the module's rules); `whole`: over-quota
    parts in whole units (GPUs); `k_value`: time-aware weights."""
    caps = [max(0.0, min(claim.requested, claim.limit)) for claim in claims]
    shares = [
        min(total if claim.deserved == UNLIMITED else claim.deserved, cap)
        for claim, cap in zip(claims, caps, strict=True)
    ]
    remaining = total - sum(shares)
    rooms = {
        i: caps[i] - shares[i]
        for i, claim in enumerate(claims)
        if caps[i] - shares[i] > EPSILON and claim.weight > 0
    }
    if remaining <= EPSILON or not rooms:
        return shares
    weights = {i: claims[i].weight for i in rooms}
    if k_value is not None:
        weights = _time_aware(weights, claims, k_value)
    given = _fill(remaining, rooms, weights)
    left = remaining - sum(given.values())
    if k_value is not None and left > EPSILON:
        rest = {i: room - given[i] for i, room in rooms.items() if room - given[i] > EPSILON}
        for i, more in _fill(left, rest, {i: claims[i].weight for i in rest}).items():
            given[i] += more
    if whole:
        given = _whole(given, rooms)
    for i, amount in given.items():
        shares[i] += amount
    return shares


def _time_aware(
    weights: Mapping[int, float], claims: Sequence[Claim], k_value: float
) -> dict[int, float]:
    total = sum(weights.values())
    adjusted = {}
    for i, weight in weights.items():
        normal = weight / total
        adjusted[i] = max(0.0, normal + k_value * (normal - claims[i].usage))
    return adjusted if sum(adjusted.values()) > EPSILON else dict(weights)


def _fill(
    amount: float, rooms: Mapping[int, float], weights: Mapping[int, float]
) -> dict[int, float]:
    """Weighted water-filling: `amount` divided in proportion to `weights`, none past its
    room, what one cannot take going to the others."""
    given = dict.fromkeys(rooms, 0.0)
    order = sorted((i for i in rooms if weights[i] > 0), key=lambda i: rooms[i] / weights[i])
    weight_left = sum(weights[i] for i in order)
    for position, i in enumerate(order):
        level = amount / weight_left
        if rooms[i] <= level * weights[i]:
            given[i] = rooms[i]
            amount -= rooms[i]
            weight_left -= weights[i]
            continue
        for j in order[position:]:
            given[j] = level * weights[j]
        break
    return given


def _whole(given: Mapping[int, float], rooms: Mapping[int, float]) -> dict[int, float]:
    """Over-quota parts in whole units: rounded down, the remainder one unit at a time to the
    largest remainders; a part that is all its unit asks stays as it is."""
    rounded = {}
    for i, amount in given.items():
        full = amount >= rooms[i] - EPSILON
        rounded[i] = rooms[i] if full else float(math.floor(amount + EPSILON))
    left = sum(given.values()) - sum(rounded.values())
    order = sorted(
        (i for i in given if rounded[i] < rooms[i] - EPSILON),
        key=lambda i: (-(given[i] - rounded[i]), i),
    )
    while left > EPSILON:
        progressed = False
        for i in order:
            step = min(1.0, left, rooms[i] - rounded[i])
            if step > EPSILON:
                rounded[i] += step
                left -= step
                progressed = True
                if left <= EPSILON:
                    break
        if not progressed:
            break
    return rounded


@dataclass(slots=True)
class FairShares:
    """Fair share amounts per pool, of every project and department."""

    projects: dict[str, dict[str, Amounts]]
    departments: dict[str, dict[str, Amounts]]


def fair_shares(
    hierarchy: Hierarchy,
    capacity: Mapping[str, Amounts],
    requested: Mapping[str, Mapping[str, Amounts]],
    *,
    time_aware: TimeAware | None = None,
    recent_usage: RecentUsage | None = None,
) -> FairShares:
    """Every unit's fair share in each pool of `capacity` (pool → amounts), given what each
    project asks there (project → pool → amounts: held plus pending)."""
    k_value = time_aware.k_value if time_aware is not None else None
    usage = recent_usage if time_aware is not None and recent_usage is not None else {}
    result = FairShares({p: {} for p in hierarchy.projects}, {d: {} for d in hierarchy.departments})
    for pool, amounts in capacity.items():
        for p in hierarchy.projects:
            result.projects[p][pool] = zero()
        for d in hierarchy.departments:
            result.departments[d][pool] = zero()
        for r, resource in enumerate(RESOURCES):

            def claim(
                project: str, pool: str = pool, r: int = r, res: Resource = resource
            ) -> Claim:
                quota = hierarchy.quota(project, pool)[r]
                asked = requested.get(project, {}).get(pool)
                recent = usage.get(project, {}).get(pool, {}).get(res, 0.0)
                return Claim(
                    quota.deserved, quota.limit, quota.weight, asked[r] if asked else 0.0, recent
                )

            members = {d: [claim(p) for p in hierarchy.members[d]] for d in hierarchy.departments}
            top: list[Claim] = []
            for d in hierarchy.departments:
                quota = hierarchy.quota(d, pool, OrgType.DEPARTMENT)[r]
                top.append(
                    Claim(
                        quota.deserved,
                        quota.limit,
                        quota.weight,
                        sum(min(c.requested, c.limit) for c in members[d]),
                        sum(c.usage for c in members[d]),
                    )
                )
            top.extend(claim(p) for p in hierarchy.loose)
            whole = resource is Resource.GPU
            shares = divide(amounts[r], top, whole=whole, k_value=k_value)
            for d, share in zip(hierarchy.departments, shares, strict=False):
                result.departments[d][pool][r] = share
                inner = divide(share, members[d], whole=whole, k_value=k_value)
                for p, amount in zip(hierarchy.members[d], inner, strict=True):
                    result.projects[p][pool][r] = amount
            for p, share in zip(hierarchy.loose, shares[len(hierarchy.departments) :], strict=True):
                result.projects[p][pool][r] = share
    return result
