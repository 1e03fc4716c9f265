"""Organization use cases: clusters, departments and projects, seen through access rules.

A caller sees the projects its rules cover, plus the department and cluster of each of them;
departments and clusters its rules cover directly are visible too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lockstep.auth.access import Access, Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock
from lockstep.domain.errors import InvalidRequest, NotFound
from lockstep.domain.listing import Filter, SortOrder, matches
from lockstep.domain.organization import Cluster, Department, Project
from lockstep.domain.pod_security import DEFAULT_LEVEL, PodSecurityLevel
from lockstep.schemas.organization import DepartmentCreationRequest, ProjectCreationRequest
from lockstep.services.access import access_of
from lockstep.store.database import Database, UnitOfWork

PROJECT_FIELDS: dict[str, Callable[[Project, dict[str, Department]], object]] = {
    "name": lambda p, _: p.name,
    "clusterId": lambda p, _: p.cluster_id,
    "departmentId": lambda p, _: p.department_id,
    "parentId": lambda p, _: p.department_id,
    "parentName": lambda p, d: d[p.department_id].name if p.department_id in d else None,
    "createdAt": lambda p, _: p.created_at,
}
DEPARTMENT_FIELDS: dict[str, Callable[[Department], object]] = {
    "name": lambda d: d.name,
    "clusterId": lambda d: d.cluster_id,
    "createdAt": lambda d: d.created_at,
}


@dataclass(frozen=True, slots=True)
class Visible:
    """What one caller may see of the organization."""

    projects: list[Project]
    departments: list[Department]
    clusters: list[Cluster]


class OrganizationService:
    def __init__(self, database: Database, *, clock: Clock) -> None:
        self._db = database
        self._clock = clock

    def visible(self, caller: Principal) -> Visible:
        with self._db.read() as unit:
            return _visible(unit, caller)

    def projects(
        self,
        caller: Principal,
        *,
        filters: Sequence[Filter] = (),
        sort_by: str | None = None,
        order: SortOrder = SortOrder.ASC,
        search: str | None = None,
    ) -> list[Project]:
        with self._db.read() as unit:
            visible = _visible(unit, caller)
            departments = {d.id: d for d in unit.organization.departments()}
        found = [
            p
            for p in visible.projects
            if all(matches(f, PROJECT_FIELDS[f.field](p, departments)) for f in filters)
            and (not search or search.lower() in p.name.lower())
        ]
        if sort_by is not None:
            key = PROJECT_FIELDS[sort_by]
            found.sort(key=lambda p: str(key(p, departments)), reverse=order is SortOrder.DESC)
        return found

    def project(self, caller: Principal, project_id: str) -> Project:
        with self._db.read() as unit:
            project = unit.organization.project(project_id)
            if project is None:
                raise NotFound(f"no project has the id {project_id!r}")
            access = access_of(unit, caller)
            if project.id not in {p.id for p in _visible(unit, caller, access).projects}:
                access.check(Action.READ, Resource.PROJECTS, _project_scope(project))
            return project

    def create_project(self, caller: Principal, request: ProjectCreationRequest) -> Project:
        cluster_id = str(request.cluster_id)
        with self._db.write() as unit:
            if unit.organization.cluster(cluster_id) is None:
                raise InvalidRequest.of("clusterId", f"no cluster has the id {cluster_id!r}")
            if request.parent_id is None:
                department = unit.organization.department_by_name(cluster_id, "default")
                if department is None:
                    raise InvalidRequest.of(
                        "parentId", "required: the cluster has no default department"
                    )
            else:
                department = unit.organization.department(request.parent_id)
                if department is None or department.cluster_id != cluster_id:
                    raise InvalidRequest.of(
                        "parentId", f"no department {request.parent_id!r} in cluster {cluster_id}"
                    )
            access = access_of(unit, caller)
            access.check(Action.CREATE, Resource.PROJECTS, Scope(cluster_id, department.id))
            if request.pod_security_level not in (None, DEFAULT_LEVEL):
                access.check(Action.UPDATE, Resource.PROJECTS, Scope())  # a system-wide decision
            return unit.organization.add_project(
                name=request.name,
                cluster_id=cluster_id,
                department_id=department.id,
                created_by=caller.name,
                requested_namespace=request.requested_namespace,
                resources=request.resources_wire(),
                now=self._clock(),
                pod_security_level=request.pod_security_level or DEFAULT_LEVEL,
                description=request.description or "",
            )

    def set_pod_security_level(
        self, caller: Principal, project_id: str, level: PodSecurityLevel
    ) -> Project:
        """Change what a project's pods may ask: an administrator's (system-wide) decision. It
        applies to the workloads submitted from then on and the pods started from then on."""
        with self._db.write() as unit:
            project = unit.organization.project(project_id)
            if project is None:
                raise NotFound(f"project {project_id} not found")
            access_of(unit, caller).check(Action.UPDATE, Resource.PROJECTS, Scope())
            return unit.organization.set_pod_security_level(project.id, level, now=self._clock())

    def departments(
        self,
        caller: Principal,
        *,
        filters: Sequence[Filter] = (),
        sort_by: str | None = None,
        order: SortOrder = SortOrder.ASC,
    ) -> list[Department]:
        with self._db.read() as unit:
            visible = _visible(unit, caller)
        found = [
            d
            for d in visible.departments
            if all(matches(f, DEPARTMENT_FIELDS[f.field](d)) for f in filters)
        ]
        if sort_by is not None:
            key = DEPARTMENT_FIELDS[sort_by]
            found.sort(key=lambda d: str(key(d)), reverse=order is SortOrder.DESC)
        return found

    def department(self, caller: Principal, department_id: str) -> Department:
        with self._db.read() as unit:
            department = unit.organization.department(department_id)
            if department is None:
                raise NotFound(f"no department has the id {department_id!r}")
            visible = _visible(unit, caller)
            if department.id not in {d.id for d in visible.departments}:
                access_of(unit, caller).check(
                    Action.READ, Resource.DEPARTMENTS, Scope(department.cluster_id, department.id)
                )
            return department

    def create_department(
        self, caller: Principal, request: DepartmentCreationRequest
    ) -> Department:
        cluster_id = str(request.cluster_id)
        with self._db.write() as unit:
            if unit.organization.cluster(cluster_id) is None:
                raise InvalidRequest.of("clusterId", f"no cluster has the id {cluster_id!r}")
            access_of(unit, caller).check(Action.CREATE, Resource.DEPARTMENTS, Scope(cluster_id))
            return unit.organization.add_department(
                name=request.name,
                cluster_id=cluster_id,
                created_by=caller.name,
                resources=request.resources_wire(),
                now=self._clock(),
                description=request.description or "",
            )

    def clusters(self, caller: Principal) -> list[Cluster]:
        return self.visible(caller).clusters

    def cluster(self, caller: Principal, cluster_id: str) -> Cluster:
        with self._db.read() as unit:
            cluster = unit.organization.cluster(cluster_id)
            if cluster is None:
                raise NotFound(f"no cluster has the id {cluster_id!r}")
            if cluster.id not in {c.id for c in _visible(unit, caller).clusters}:
                access_of(unit, caller).check(Action.READ, Resource.CLUSTERS, Scope(cluster.id))
            return cluster


def _project_scope(project: Project) -> Scope:
    return Scope(project.cluster_id, project.department_id, project.id)


def _visible(unit: UnitOfWork, caller: Principal, access: Access | None = None) -> Visible:
    access = access or access_of(unit, caller)
    projects = [
        p
        for p in unit.organization.projects()
        if access.allows(Action.READ, Resource.PROJECTS, _project_scope(p))
    ]
    project_departments = {p.department_id for p in projects}
    departments = [
        d
        for d in unit.organization.departments()
        if d.id in project_departments
        or access.allows(Action.READ, Resource.DEPARTMENTS, Scope(d.cluster_id, d.id))
    ]
    unit_clusters = {d.cluster_id for d in departments} | {p.cluster_id for p in projects}
    clusters = [
        c
        for c in unit.organization.clusters()
        if c.id in unit_clusters or access.allows(Action.READ, Resource.CLUSTERS, Scope(c.id))
    ]
    return Visible(projects, departments, clusters)
