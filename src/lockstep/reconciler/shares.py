"""Between the store and the scheduler: the organization as the scheduler sees it (each
project's and department's quotas), and the shares a cycle found, as the store keeps them
(store/scheduling.py) — with each project's recent usage, so that time-aware fair share
survives a restart."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from lockstep.domain.organization import Department, Project
from lockstep.domain.quotas import PoolQuota, Quota, Quotas, Resource, quotas_of
from lockstep.reconciler.recent_usage import Usage
from lockstep.scheduler.decisions import Decisions, Shares
from lockstep.scheduler.quota.organization import Organization, OrgType, OrgUnit
from lockstep.store.scheduling import ShareKey
from lockstep.store.scheduling import Shares as StoredShares

USAGE_DIGITS = 4
"""Recent usage is stored rounded, so that a slow decay does not rewrite it every cycle."""


def snapshot_of(
    projects: Sequence[Project], departments: Sequence[Department], pools: Sequence[str]
) -> Organization:
    """The organization as the scheduler sees it, in the node pools `pools`. A department
    without `resources[]` puts no bound of its own on its projects: it deserves what they
    deserve together (unlimited if one of them is), with no limit and weight 1."""
    units = {
        p.id: OrgUnit(p.id, p.name, quotas_of(p.resources), parent=p.department_id)
        for p in projects
    }
    members: dict[str, list[OrgUnit]] = {}
    for unit in units.values():
        members.setdefault(unit.parent or "", []).append(unit)
    return Organization(
        departments={
            d.id: OrgUnit(
                d.id,
                d.name,
                quotas_of(d.resources) if d.resources else _together(members.get(d.id, []), pools),
            )
            for d in departments
        },
        projects=units,
    )


def _together(projects: Sequence[OrgUnit], pools: Sequence[str]) -> Quotas:
    """What `projects` deserve together in each pool."""
    by_pool = {}
    for pool in pools:
        quotas = [p.quotas.in_pool(pool) for p in projects]

        def summed(resource: Resource, quotas: list[PoolQuota] = quotas) -> Quota:
            return Quota(deserved=sum(q.of(resource).deserved for q in quotas))

        by_pool[pool] = PoolQuota(
            pool, summed(Resource.GPU), summed(Resource.CPU), summed(Resource.MEMORY)
        )
    return Quotas(by_pool)


def shares_to_store(decisions: Decisions, usage: Usage) -> dict[ShareKey, StoredShares]:
    """Per project and department, pool and resource: its figures (-1: unlimited), and a
    project's recent usage where it has some."""
    stored: dict[ShareKey, StoredShares] = {}
    for org_type, shares in (
        (OrgType.PROJECT, decisions.shares),
        (OrgType.DEPARTMENT, decisions.department_shares),
    ):
        for unit_id, by_pool in _figures(shares, usage if org_type is OrgType.PROJECT else {}):
            for pool, resources in by_pool.items():
                stored[(org_type.value, unit_id, pool)] = resources
    return stored


def _figures(
    shares: Shares, usage: Usage
) -> list[tuple[str, dict[str, dict[str, dict[str, float]]]]]:
    units = []
    for unit_id in sorted(set(shares) | set(usage)):
        by_pool: dict[str, dict[str, dict[str, float]]] = {}
        for pool, resources in shares.get(unit_id, {}).items():
            by_pool[pool] = {
                resource.value: {
                    "deserved": _wire(share.deserved),
                    "fairShare": _wire(share.fair_share),
                    "allocated": share.allocated,
                    "requested": share.requested,
                }
                for resource, share in resources.items()
            }
        for pool, used in usage.get(unit_id, {}).items():
            for resource, fraction in used.items():
                figures = by_pool.setdefault(pool, {}).setdefault(resource.value, {})
                figures["recentUsage"] = round(fraction, USAGE_DIGITS)
        units.append((unit_id, by_pool))
    return units


def _wire(value: float) -> float:
    return -1 if math.isinf(value) else value


def usage_from_store(stored: Mapping[ShareKey, StoredShares]) -> Usage:
    """The recent usage kept with the stored shares."""
    usage: Usage = {}
    for (org_type, unit_id, pool), resources in stored.items():
        if org_type != OrgType.PROJECT.value:
            continue
        for resource, figures in resources.items():
            if "recentUsage" in figures:
                pools = usage.setdefault(unit_id, {})
                pools.setdefault(pool, {})[Resource(resource)] = float(figures["recentUsage"])
    return usage
