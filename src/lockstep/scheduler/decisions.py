"""What a scheduling cycle decides: which gangs are admitted (and where), parked, waiting (and
why, with the `phaseReason` the API names), preempted or grown, and the shares it leaves each
project and department."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from lockstep.domain.quotas import Resource
from lockstep.scheduler.gang.needs import GangPlacement
from lockstep.scheduler.quota.fair_share import Share


class PhaseReason(StrEnum):
    """Why a workload waits, as the contract's `PhaseReason` names it."""

    NON_PREEMPTIBLE_OVER_QUOTA = "NonPreemptibleOverQuota"
    OVER_LIMIT = "OverLimit"


@dataclass(frozen=True, slots=True)
class Waiting:
    """Why a workload waits: the message its user reads, and where a quota is the reason."""

    message: str
    reason: PhaseReason | None = None
    pool: str = "default"
    org_type: str | None = None
    """`project` or `department`: whose quota holds it back (None: not a quota)."""


@dataclass(frozen=True, slots=True)
class Preemption:
    by: str
    """The name of the workload it makes room for."""
    reclaim: bool = False
    """True: another project takes back its share; False: priority within the project."""
    by_id: str = field(default="", compare=False)
    """The id of the workload it makes room for (names are unique per project only)."""


Shares = dict[str, dict[str, dict[Resource, Share]]]
"""Unit id → pool → resource → its share."""


@dataclass(slots=True)
class Decisions:
    admitted: dict[str, GangPlacement] = field(default_factory=dict)
    """In the order they were admitted."""
    parked: dict[str, str] = field(default_factory=dict)
    waiting: dict[str, Waiting] = field(default_factory=dict)
    preempted: dict[str, Preemption] = field(default_factory=dict)
    grown: dict[str, GangPlacement] = field(default_factory=dict)
    """Elastic holders that got room for more pods → their whole placement now."""
    positions: dict[str, int] = field(default_factory=dict)
    """Each waiting workload's place (from 1) in its project's queue, in admission order."""
    shares: Shares = field(default_factory=dict)
    """Per project (the cycle's and the organisation's): deserved, fair share, allocated (as
    the cycle leaves it) and requested, per pool and resource."""
    department_shares: Shares = field(default_factory=dict)
    """The same per department (their ids are numbered apart from projects')."""
