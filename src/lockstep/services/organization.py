"""Organization use cases: clusters, departments and projects, seen through access rules.

A caller sees the projects its rules cover, plus the department and cluster of each of them;
departments and clusters its rules cover directly are visible too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lockstep.auth.access import Access, Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock
from lockstep.domain.cluster import Node
from lockstep.domain.errors import Conflict, InvalidRequest, NotFound
from lockstep.domain.listing import Filter, SortOrder, matches
from lockstep.domain.node_pools import DEFAULT_POOL
from lockstep.domain.organization import Cluster, Department, Project
from lockstep.domain.pod_security import DEFAULT_LEVEL, PodSecurityLevel
from lockstep.schemas.organization import (
    DepartmentCreationRequest,
    DepartmentUpdateRequest,
    ProjectCreationRequest,
    ProjectUpdateRequest,
    ResourcesUpdateRequest,
)
from lockstep.services.access import access_of
from lockstep.services.quota_resources import merged, resolved
from lockstep.services.quota_status import QuotaStatuses, quota_statuses
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


NAMED_IN_CONFLICT = 20
"""The most workloads or projects a 409 names."""

NodesOf = Callable[[], Sequence[Node]]
Wake = Callable[[], None]


def _no_nodes() -> Sequence[Node]:
    return ()


def _no_wake() -> None:
    return None


class OrganizationService:
    def __init__(
        self,
        database: Database,
        *,
        clock: Clock,
        nodes: NodesOf = _no_nodes,
        wake: Wake = _no_wake,
    ) -> None:
        """`nodes`: the cluster's nodes (their pools are node pools, stored when first seen);
        `wake`: called after a commit that changed the organization or its quotas, so that
        the reconciler applies them at once (a scheduling cycle; on Kubernetes, the queues)."""
        self._db = database
        self._clock = clock
        self.clock = clock
        self._nodes = nodes
        self._wake = wake

    def seen_pools(self, unit: UnitOfWork, cluster_id: str, by: str) -> None:
        """Store the pools the nodes are in that the cluster has no record of."""
        names = {n.pool for n in self._nodes()} | {DEFAULT_POOL}
        unit.node_pools.ensure(cluster_id, names, by=by, now=self._clock())

    def _resolved(
        self, unit: UnitOfWork, cluster_id: str, caller: Principal, entries: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        self.seen_pools(unit, cluster_id, caller.name)
        return resolved(entries, unit.node_pools.pools(cluster_id))

    def _quota_changed(self) -> None:
        self._wake()

    def quota_statuses(self) -> QuotaStatuses:
        """Every project's quota status (see services/quota_status.py)."""
        nodes = self._nodes()
        with self._db.read() as unit:
            department_projects: dict[str, list[str]] = {}
            for p in unit.organization.projects():
                department_projects.setdefault(p.department_id, []).append(p.id)
            return quota_statuses(
                admitted=unit.workloads.admitted(),
                pending=unit.workloads.pending(),
                nodes=nodes,
                pool_ids={p.name: p.id for p in unit.node_pools.pools()},
                department_projects=department_projects,
            )

    def visible_in(self, unit: UnitOfWork, caller: Principal) -> Visible:
        """What the caller sees, read in the caller's transaction `unit`."""
        return _visible(unit, caller)

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
            resources = self._resolved(unit, cluster_id, caller, request.resources_wire())
            project = unit.organization.add_project(
                name=request.name,
                cluster_id=cluster_id,
                department_id=department.id,
                created_by=caller.name,
                requested_namespace=request.requested_namespace,
                resources=resources,
                now=self._clock(),
                pod_security_level=request.pod_security_level or DEFAULT_LEVEL,
                description=request.description or "",
            )
        self._quota_changed()
        return project

    def _writable_project(
        self, unit: UnitOfWork, caller: Principal, project_id: str, action: Action
    ) -> Project:
        project = unit.organization.project(project_id)
        if project is None:
            raise NotFound(f"no project has the id {project_id!r}")
        access_of(unit, caller).check(action, Resource.PROJECTS, _project_scope(project))
        return project

    def update_project(
        self, caller: Principal, project_id: str, request: ProjectUpdateRequest
    ) -> Project:
        """PUT: the project's `resources[]` (and description) replaced."""
        with self._db.write() as unit:
            project = self._writable_project(unit, caller, project_id, Action.UPDATE)
            resources = self._resolved(unit, project.cluster_id, caller, request.resources_wire())
            updated = unit.organization.update_project(
                project.id, now=self._clock(), resources=resources, description=request.description
            )
        self._quota_changed()
        return updated

    def set_resources(
        self, caller: Principal, project_id: str, request: ResourcesUpdateRequest, *, patch: bool
    ) -> Project:
        """PUT replaces `resources[]`; PATCH merges it pool by pool (quota_resources.merged)."""
        with self._db.write() as unit:
            project = self._writable_project(unit, caller, project_id, Action.UPDATE)
            if patch:
                changes = self._resolved(
                    unit, project.cluster_id, caller, request.resources_patch()
                )
                resources = merged(project.resources, changes)
            else:
                resources = self._resolved(
                    unit, project.cluster_id, caller, request.resources_wire()
                )
            updated = unit.organization.update_project(
                project.id, now=self._clock(), resources=resources
            )
        self._quota_changed()
        return updated

    def delete_project(self, caller: Principal, project_id: str) -> None:
        """The project, unless workloads of it are not deleted (409 naming them)."""
        with self._db.write() as unit:
            project = self._writable_project(unit, caller, project_id, Action.DELETE)
            live = unit.organization.live_workload_names(project.id, limit=NAMED_IN_CONFLICT + 1)
            if live:
                raise Conflict(
                    f"project {project.name!r} has workloads that are not deleted: "
                    f"{_named(live)}; delete them first"
                )
            unit.organization.delete_project(project.id)
        self._quota_changed()

    def update_department(
        self, caller: Principal, department_id: str, request: DepartmentUpdateRequest
    ) -> Department:
        with self._db.write() as unit:
            department = self._writable_department(unit, caller, department_id, Action.UPDATE)
            wire = request.resources_wire()
            resources = (
                None if wire is None else self._resolved(unit, department.cluster_id, caller, wire)
            )
            updated = unit.organization.update_department(
                department.id,
                now=self._clock(),
                resources=resources,
                description=request.description,
            )
        self._quota_changed()
        return updated

    def delete_department(self, caller: Principal, department_id: str) -> None:
        """The department, unless it has projects (409 naming them)."""
        with self._db.write() as unit:
            department = self._writable_department(unit, caller, department_id, Action.DELETE)
            names = [
                p.name for p in unit.organization.projects() if p.department_id == department.id
            ]
            if names:
                raise Conflict(
                    f"department {department.name!r} has projects: {_named(names)}; "
                    "delete them or move their quota first"
                )
            unit.organization.delete_department(department.id)

    def _writable_department(
        self, unit: UnitOfWork, caller: Principal, department_id: str, action: Action
    ) -> Department:
        department = unit.organization.department(department_id)
        if department is None:
            raise NotFound(f"no department has the id {department_id!r}")
        access_of(unit, caller).check(
            action, Resource.DEPARTMENTS, Scope(department.cluster_id, department.id)
        )
        return department

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
            resources = self._resolved(unit, cluster_id, caller, request.resources_wire())
            return unit.organization.add_department(
                name=request.name,
                cluster_id=cluster_id,
                created_by=caller.name,
                resources=resources,
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


def _named(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMED_IN_CONFLICT])
    return shown + (" and more" if len(names) > NAMED_IN_CONFLICT else "")


def _project_scope(project: Project) -> Scope:
    return Scope(project.cluster_id, project.department_id, project.id)


def visible_clusters(unit: UnitOfWork, caller: Principal) -> set[str]:
    """The clusters the caller sees: those it may read, and those of what it may read (the
    cluster of a readable project or department)."""
    return {c.id for c in _visible(unit, caller).clusters}


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
