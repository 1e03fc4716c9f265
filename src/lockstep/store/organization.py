"""The organization repository: clusters, departments and projects."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Connection, bindparam, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from lockstep.domain.errors import Conflict
from lockstep.domain.organization import Cluster, Department, Project
from lockstep.domain.pod_security import DEFAULT_LEVEL, PodSecurityLevel
from lockstep.schemas.bounds import INT32_MAX
from lockstep.store.tables import (
    access_rules,
    clusters,
    config_maps,
    departments,
    events,
    phase_changes,
    pods,
    projects,
    secrets,
    workloads,
)


def _cluster(row: Any) -> Cluster:
    return Cluster(row.id, row.name, row.created_at, row.updated_at)


def _department(row: Any) -> Department:
    return Department(
        id=str(row.id),
        name=row.name,
        cluster_id=row.cluster_id,
        created_by=row.created_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
        resources=orjson.loads(row.resources),
        description=row.description,
    )


def _project(row: Any) -> Project:
    return Project(
        id=str(row.id),
        name=row.name,
        cluster_id=row.cluster_id,
        department_id=str(row.department_id),
        created_by=row.created_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
        requested_namespace=row.requested_namespace,
        resources=orjson.loads(row.resources),
        pod_security_level=PodSecurityLevel(row.pod_security_level),
        description=row.description,
    )


def _as_int(value: str) -> int | None:
    """The stored key of an id; None for an id no row can have (keys are 32-bit integers)."""
    key = int(value) if value.isascii() and value.isdigit() and len(value) <= 10 else None
    return key if key is not None and key <= INT32_MAX else None


_CLUSTER_BY_ID = select(clusters).where(clusters.c.id == bindparam("id"))
_DEPARTMENT_BY_ID = select(departments).where(departments.c.id == bindparam("id"))
_PROJECT_BY_ID = select(projects).where(projects.c.id == bindparam("id"))


class OrganizationRepository:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    def _insert(self, table: Any, values: dict[str, Any], what: str) -> Any:
        nested = self._db.begin_nested()
        try:
            row = self._db.execute(insert(table).returning(table), values).one()
        except IntegrityError as error:
            nested.rollback()
            raise Conflict(f"{what} named {values['name']!r} already exists") from error
        nested.commit()
        return row

    def add_cluster(self, cluster_id: str, name: str, now: datetime) -> Cluster:
        values = {"id": cluster_id, "name": name, "created_at": now, "updated_at": now}
        return _cluster(self._insert(clusters, values, "a cluster"))

    def add_department(
        self,
        *,
        name: str,
        cluster_id: str,
        created_by: str,
        resources: list[Any],
        now: datetime,
        description: str = "",
    ) -> Department:
        values = {
            "name": name,
            "cluster_id": cluster_id,
            "created_by": created_by,
            "resources": orjson.dumps(resources).decode(),
            "description": description,
            "created_at": now,
            "updated_at": now,
        }
        return _department(self._insert(departments, values, "a department"))

    def add_project(
        self,
        *,
        name: str,
        cluster_id: str,
        department_id: str,
        created_by: str,
        requested_namespace: str | None,
        resources: list[Any],
        now: datetime,
        pod_security_level: PodSecurityLevel = DEFAULT_LEVEL,
        description: str = "",
    ) -> Project:
        values = {
            "pod_security_level": pod_security_level.value,
            "name": name,
            "cluster_id": cluster_id,
            "department_id": int(department_id),
            "created_by": created_by,
            "requested_namespace": requested_namespace,
            "resources": orjson.dumps(resources).decode(),
            "description": description,
            "created_at": now,
            "updated_at": now,
        }
        return _project(self._insert(projects, values, "a project"))

    def set_pod_security_level(
        self, project_id: str, level: PodSecurityLevel, *, now: datetime
    ) -> Project:
        query = (
            update(projects)
            .where(projects.c.id == int(project_id))
            .values(pod_security_level=level.value, updated_at=now)
            .returning(*projects.c)
        )
        return _project(self._db.execute(query).one())

    def update_project(
        self,
        project_id: str,
        *,
        now: datetime,
        resources: list[Any],
        description: str | None = None,
    ) -> Project:
        """Replace the project's `resources[]` (and its description when given)."""
        values: dict[str, Any] = {"resources": orjson.dumps(resources).decode(), "updated_at": now}
        if description is not None:
            values["description"] = description
        query = (
            update(projects)
            .where(projects.c.id == int(project_id))
            .values(**values)
            .returning(*projects.c)
        )
        return _project(self._db.execute(query).one())

    def update_department(
        self,
        department_id: str,
        *,
        now: datetime,
        resources: list[Any] | None,
        description: str | None = None,
    ) -> Department:
        """Replace the department's `resources[]` when given (and its description)."""
        values: dict[str, Any] = {"updated_at": now}
        if resources is not None:
            values["resources"] = orjson.dumps(resources).decode()
        if description is not None:
            values["description"] = description
        query = (
            update(departments)
            .where(departments.c.id == int(department_id))
            .values(**values)
            .returning(*departments.c)
        )
        return _department(self._db.execute(query).one())

    def live_workload_names(self, project_id: str, *, limit: int) -> list[str]:
        """The names of the project's workloads that are not deleted, oldest first."""
        query = (
            select(workloads.c.name)
            .where(workloads.c.project_id == int(project_id), workloads.c.deleted_at.is_(None))
            .order_by(workloads.c.created_at)
            .limit(limit)
        )
        return list(self._db.execute(query).scalars())

    def delete_project(self, project_id: str) -> None:
        """The project, with what is left of its deleted workloads, its secrets, its config maps
        and the access rules given on it (the caller made sure no workload of it is live)."""
        key = int(project_id)
        owned = select(workloads.c.id).where(workloads.c.project_id == key).scalar_subquery()
        for table in (phase_changes, events, pods):
            self._db.execute(delete(table).where(table.c.workload_id.in_(owned)))
        self._db.execute(delete(workloads).where(workloads.c.project_id == key))
        for table in (secrets, config_maps):
            self._db.execute(delete(table).where(table.c.project_id == key))
        self._db.execute(
            delete(access_rules).where(
                access_rules.c.scope_type == "project", access_rules.c.scope_id == project_id
            )
        )
        self._db.execute(delete(projects).where(projects.c.id == key))

    def delete_department(self, department_id: str) -> None:
        """The department and the access rules given on it (it holds no project)."""
        key = int(department_id)
        self._db.execute(
            update(workloads).where(workloads.c.department_id == key).values(department_id=None)
        )
        self._db.execute(
            delete(access_rules).where(
                access_rules.c.scope_type == "department",
                access_rules.c.scope_id == department_id,
            )
        )
        self._db.execute(delete(departments).where(departments.c.id == key))

    def count_clusters(self) -> int:
        return int(self._db.execute(select(func.count()).select_from(clusters)).scalar_one())

    def clusters(self) -> list[Cluster]:
        rows = self._db.execute(select(clusters).order_by(clusters.c.created_at)).all()
        return [_cluster(r) for r in rows]

    def cluster(self, cluster_id: str) -> Cluster | None:
        row = self._db.execute(_CLUSTER_BY_ID, {"id": cluster_id}).first()
        return None if row is None else _cluster(row)

    def departments(self) -> list[Department]:
        rows = self._db.execute(select(departments).order_by(departments.c.id)).all()
        return [_department(r) for r in rows]

    def department(self, department_id: str) -> Department | None:
        key = _as_int(department_id)
        if key is None:
            return None
        row = self._db.execute(_DEPARTMENT_BY_ID, {"id": key}).first()
        return None if row is None else _department(row)

    def department_by_name(self, cluster_id: str, name: str) -> Department | None:
        query = select(departments).where(
            departments.c.cluster_id == cluster_id, departments.c.name == name
        )
        row = self._db.execute(query).first()
        return None if row is None else _department(row)

    def projects(self) -> list[Project]:
        rows = self._db.execute(select(projects).order_by(projects.c.id)).all()
        return [_project(r) for r in rows]

    def project(self, project_id: str) -> Project | None:
        key = _as_int(project_id)
        if key is None:
            return None
        row = self._db.execute(_PROJECT_BY_ID, {"id": key}).first()
        return None if row is None else _project(row)

    def project_by_name(self, cluster_id: str, name: str) -> Project | None:
        query = select(projects).where(projects.c.cluster_id == cluster_id, projects.c.name == name)
        row = self._db.execute(query).first()
        return None if row is None else _project(row)
