"""The organisation as the scheduling cycle walks it: each project's department, each unit's
name and level, and its quota per pool and resource — resolved once per unit and pool.

Quotas are in the scheduler's units, indexed like `RESOURCES` (amounts.py). A project the
organisation does not know (or a department a project names that it does not know) has no
quotas: deserved 0, no limit and weight 1 in every pool, as a pool its `resources[]` do not
name does. Departments and projects are numbered apart (the same id may name one of each), so
a unit is always named with its kind. An organisation with no unit at all puts no quotas in
force: every project is then unlimited (deserved and limit), as before quotas.
"""

from __future__ import annotations

from collections.abc import Iterable

from lockstep.domain.quotas import UNBOUNDED, Quota, Quotas
from lockstep.scheduler.quota.amounts import RESOURCES
from lockstep.scheduler.quota.organization import Organization, OrgType, OrgUnit

NO_QUOTAS = Quotas()


class Hierarchy:
    """Cluster → departments → projects, for the projects named in `organization` and those
    `also` names (workloads of projects it does not know)."""

    def __init__(self, organization: Organization, also: Iterable[str] = ()) -> None:
        self._organization = organization
        self.unbounded = not organization.projects and not organization.departments
        """No organisation at all: no quotas in force, every project unlimited."""
        self.projects: list[str] = list(organization.projects)
        known = set(self.projects)
        for project in also:
            if project not in known:
                known.add(project)
                self.projects.append(project)
        self.department_of: dict[str, str | None] = {}
        departments: dict[str, None] = dict.fromkeys(organization.departments)
        for project in self.projects:
            unit = organization.projects.get(project)
            parent = unit.parent if unit is not None else None
            self.department_of[project] = parent
            if parent is not None:
                departments.setdefault(parent, None)
        self.departments: list[str] = list(departments)
        self.members: dict[str, list[str]] = {d: [] for d in self.departments}
        self.loose: list[str] = []
        """Projects without a department: they stand beside the departments."""
        for project in self.projects:
            parent = self.department_of[project]
            if parent is None:
                self.loose.append(project)
            else:
                self.members[parent].append(project)
        self._quotas: dict[tuple[str, str, OrgType], tuple[Quota, ...]] = {}

    def name(self, unit: str, kind: OrgType = OrgType.PROJECT) -> str:
        known = self._unit(unit, kind)
        return known.name if known is not None else unit

    def quota(self, unit: str, pool: str, kind: OrgType = OrgType.PROJECT) -> tuple[Quota, ...]:
        """The unit's quota in `pool`, one per resource of `RESOURCES`."""
        key = (unit, pool, kind)
        found = self._quotas.get(key)
        if found is None:
            if self.unbounded:
                found = self._quotas[key] = (UNBOUNDED,) * len(RESOURCES)
                return found
            known = self._unit(unit, kind)
            in_pool = (known.quotas if known is not None else NO_QUOTAS).in_pool(pool)
            found = self._quotas[key] = tuple(in_pool.of(r) for r in RESOURCES)
        return found

    def _unit(self, unit: str, kind: OrgType) -> OrgUnit | None:
        if kind is OrgType.DEPARTMENT:
            return self._organization.departments.get(unit)
        return self._organization.projects.get(unit)
