"""Telemetry: current figures of the workloads and projects the caller may read, counted and
summed by group (`GET /api/v1/workloads/telemetry`, `GET /api/v1/org-unit/projects/telemetry`).
The workloads' come from the store's records, the projects' from their resources and their
workloads' allocations."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock, iso
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.metrics import figure
from lockstep.domain.quotas import quotas_of
from lockstep.services.access import access_of
from lockstep.services.metrics.series import deserved
from lockstep.store.database import Database
from lockstep.store.metrics import CurrentWorkload


class TelemetryService:
    def __init__(self, database: Database, *, clock: Clock) -> None:
        self._db = database
        self._clock = clock

    def workloads(
        self,
        caller: Principal,
        telemetry_type: str,
        *,
        group_by: Sequence[str],
        cluster_id: str | None,
        department_id: str | None,
        phases: Sequence[str],
    ) -> dict[str, object]:
        if telemetry_type not in ("WORKLOADS_COUNT", "GPU_ALLOCATION"):
            raise InvalidRequest.of(
                "telemetryType",
                f"{telemetry_type} is not measured by lockstep; it measures WORKLOADS_COUNT, "
                "GPU_ALLOCATION",
            )
        with self._db.read() as unit:
            access = access_of(unit, caller)
            current = unit.metrics.current_workloads()
        chosen = [
            w
            for w in current
            if access.allows(
                Action.READ, Resource.WORKLOADS, Scope(w.cluster_id, w.department_id, w.project_id)
            )
            and (cluster_id is None or w.cluster_id == cluster_id)
            and (department_id is None or w.department_id == department_id)
            and (not phases or w.phase.value in phases)
        ]
        groups: dict[tuple[str, ...], float] = defaultdict(float)
        for w in chosen:
            key = tuple(_workload_group(w, name) for name in group_by)
            groups[key] += 1 if telemetry_type == "WORKLOADS_COUNT" else w.allocated_gpus
        if not group_by:
            groups.setdefault((), 0.0)
        return self._telemetry(telemetry_type, group_by, groups)

    def projects(
        self,
        caller: Principal,
        telemetry_type: str,
        *,
        group_by: Sequence[str],
        cluster_id: str | None,
        department_id: str | None,
        pool_id: str | None,
    ) -> dict[str, object]:
        resource = _PROJECT_TELEMETRY.get(telemetry_type)
        if resource is None:
            raise InvalidRequest.of(
                "telemetryType",
                f"{telemetry_type} is not measured by lockstep; it measures "
                + ", ".join(_PROJECT_TELEMETRY),
            )
        with self._db.read() as unit:
            access = access_of(unit, caller)
            projects = [
                p
                for p in unit.organization.projects()
                if access.allows(
                    Action.READ, Resource.PROJECTS, Scope(p.cluster_id, p.department_id, p.id)
                )
                and (cluster_id is None or p.cluster_id == cluster_id)
                and (department_id is None or p.department_id == department_id)
            ]
            pools = {p.id: p.name for p in unit.node_pools.pools()}
            current = unit.metrics.current_workloads()
        if pool_id is not None and pool_id not in pools:
            raise InvalidRequest.of("nodepoolId", f"no node pool has the id {pool_id!r}")
        pool_names = [pools[pool_id]] if pool_id is not None else sorted(set(pools.values()))
        allocated: dict[str, float] = defaultdict(float)
        for w in current:
            allocated[w.project_id] += w.allocated_gpus
        groups: dict[tuple[str, ...], float] = defaultdict(float)
        for project in projects:
            key = tuple(
                {
                    "ClusterId": project.cluster_id,
                    "ParentId": project.department_id,
                    "NodepoolId": pool_id or "",
                }[name]
                for name in group_by
            )
            if resource == "allocation":
                groups[key] += allocated[project.id]
            else:
                groups[key] += deserved(quotas_of(project.resources), pool_names, resource) / (
                    10**6 if resource == "memory" else 1
                )
        if not group_by:
            groups.setdefault((), 0.0)
        return self._telemetry(telemetry_type, group_by, groups)

    def _telemetry(
        self, kind: str, group_by: Sequence[str], groups: dict[tuple[str, ...], float]
    ) -> dict[str, object]:
        values = []
        for key in sorted(groups):
            value: dict[str, object] = {"value": figure(groups[key])}
            if group_by:
                value["groups"] = [
                    {"key": name, "value": part} for name, part in zip(group_by, key, strict=True)
                ]
            values.append(value)
        return {"type": kind, "timestamp": iso(self._clock()), "values": values}


_PROJECT_TELEMETRY = {
    "GPU_QUOTA": "gpu",
    "CPU_QUOTA": "cpu",
    "MEMORY_QUOTA": "memory",
    "GPU_ALLOCATION": "allocation",
}
"""Projects' telemetry lockstep answers: quotas (CPU in millicores, memory in MB) and the GPUs
their workloads hold."""


def _workload_group(workload: CurrentWorkload, name: str) -> str:
    return {
        "ClusterId": workload.cluster_id,
        "DepartmentId": workload.department_id or "",
        "ProjectId": workload.project_id,
        "Type": workload.kind.value,
        "CurrentNodepools": "default",
        "Phase": workload.phase.value,
        "Category": workload.category or "",
    }[name]
