"""The quota books of one scheduling cycle: per unit (project or department) and pool, its
deserved share, limit, fair share, what it holds and what it asks — kept up to date as the
cycle admits and preempts, so that each check costs O(resources). Beside them, per project,
the pods it holds against the pod limit every project has (`LOCKSTEP_MAX_PODS_PER_PROJECT`),
in all pools together: pods are what a node's `max_pods` slots are made of, so a project
within its limit cannot take every slot of the nodes while others wait."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lockstep.scheduler.quota.amounts import Amounts, zero
from lockstep.scheduler.quota.fair_share import FairShares
from lockstep.scheduler.quota.hierarchy import Hierarchy
from lockstep.scheduler.quota.organization import OrgType


@dataclass(slots=True)
class Account:
    """One unit in one pool."""

    unit: str
    kind: OrgType
    name: str
    pool: str
    deserved: Amounts
    limit: Amounts
    fair: Amounts
    allocated: Amounts
    requested: Amounts
    non_preemptible: Amounts
    """What its non-preemptible workloads hold (of `allocated`): what deserved bounds them by."""


class Books:
    """Every unit's account in every pool, made when first asked for."""

    def __init__(
        self,
        hierarchy: Hierarchy,
        shares: FairShares,
        allocated: Mapping[str, Mapping[str, Amounts]],
        requested: Mapping[str, Mapping[str, Amounts]],
        non_preemptible: Mapping[str, Mapping[str, Amounts]],
        *,
        pods: Mapping[str, int] | None = None,
        pod_limit: int | None = None,
    ) -> None:
        """`pods`: project → the pods it holds; `pod_limit`: the most any project holds at
        once (None: no limit)."""
        self.hierarchy = hierarchy
        self._shares = shares
        self._allocated = allocated
        self._requested = requested
        self._non_preemptible = non_preemptible
        self._accounts: dict[tuple[OrgType, str, str], Account] = {}
        self.pods: dict[str, int] = dict(pods or {})
        self.pod_limit = pod_limit

    def pods_left(self, project: str) -> int | None:
        """How many more pods the project may hold (None: no limit)."""
        if self.pod_limit is None:
            return None
        return max(self.pod_limit - self.pods.get(project, 0), 0)

    def charge_pods(self, project: str, count: int) -> None:
        """Count `count` more pods as held by the project (negative: fewer)."""
        self.pods[project] = self.pods.get(project, 0) + count

    def project(self, project: str, pool: str) -> Account:
        return self._account(OrgType.PROJECT, project, pool)

    def department(self, project: str, pool: str) -> Account | None:
        """The account of the project's department in `pool` (None: it has none)."""
        department = self.hierarchy.department_of.get(project)
        return None if department is None else self._account(OrgType.DEPARTMENT, department, pool)

    def of_department(self, department: str, pool: str) -> Account:
        return self._account(OrgType.DEPARTMENT, department, pool)

    def both(self, project: str, pool: str) -> list[Account]:
        """The project's account, then its department's (when it has one)."""
        department = self.department(project, pool)
        accounts = [self.project(project, pool)]
        return accounts if department is None else [*accounts, department]

    def charge(
        self,
        project: str,
        amounts: Mapping[str, Amounts],
        sign: float = 1.0,
        *,
        preemptible: bool = True,
    ) -> None:
        """Count `amounts` (pool → amounts) as held by the project (and its department), by
        a preemptible workload or not; sign -1 takes them off."""
        for pool, held in amounts.items():
            for account in self.both(project, pool):
                for r, value in enumerate(held):
                    account.allocated[r] += sign * value
                    if not preemptible:
                        account.non_preemptible[r] += sign * value

    def _account(self, kind: OrgType, unit: str, pool: str) -> Account:
        key = (kind, unit, pool)
        found = self._accounts.get(key)
        if found is not None:
            return found
        quota = self.hierarchy.quota(unit, pool, kind)
        if kind is OrgType.PROJECT:
            fair = self._shares.projects.get(unit, {}).get(pool) or zero()
            allocated = list(self._allocated.get(unit, {}).get(pool) or zero())
            requested = list(self._requested.get(unit, {}).get(pool) or zero())
            non_preemptible = list(self._non_preemptible.get(unit, {}).get(pool) or zero())
        else:
            fair = self._shares.departments.get(unit, {}).get(pool) or zero()
            members = self.hierarchy.members.get(unit, [])
            allocated, requested, non_preemptible = zero(), zero(), zero()
            ledgers = (
                (allocated, self._allocated),
                (requested, self._requested),
                (non_preemptible, self._non_preemptible),
            )
            for project in members:
                for total, ledger in ledgers:
                    amounts = ledger.get(project, {}).get(pool)
                    if amounts:
                        for r, value in enumerate(amounts):
                            total[r] += value
        account = self._accounts[key] = Account(
            unit,
            kind,
            self.hierarchy.name(unit, kind),
            pool,
            [q.deserved for q in quota],
            [q.limit for q in quota],
            list(fair),
            allocated,
            requested,
            non_preemptible,
        )
        return account
