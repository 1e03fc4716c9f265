"""The quota `status` of projects and departments (the document's `QuotaStatus` and
`QuotaStatusNodePool`): per node pool and summed, what admitted workloads hold (`allocated`,
and of it what non-preemptible workloads hold, `allocatedNonPreemptible`) and what is asked
(`requested`: allocated plus what pending workloads ask).

A placed pod counts in the pool of the node it was placed on; a pending workload asks in the
first pool its spec names (`nodePools`), else in the default pool. Units are the document's:
GPUs in devices (a fraction for a share of one), CPU in millicores, memory in MB (10^6 bytes).
Called by the organization service, inside its read transaction.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lockstep.domain.cluster import Node
from lockstep.domain.node_pools import DEFAULT_POOL
from lockstep.domain.priorities import is_preemptible
from lockstep.domain.workload import Workload
from lockstep.scheduler.placement import PodNeed
from lockstep.scheduler.resources import gang_needs

MEGABYTE = 10**6


@dataclass(slots=True)
class Amounts:
    """GPUs (devices), CPU (millicores) and memory (MB)."""

    gpu: float = 0.0
    cpu: float = 0.0
    memory: float = 0.0

    def add(self, other: Amounts) -> None:
        self.gpu += other.gpu
        self.cpu += other.cpu
        self.memory += other.memory

    def wire(self) -> dict[str, float]:
        return {
            "gpu": round(self.gpu, 6),
            "cpu": round(self.cpu, 3),
            "memory": round(self.memory, 3),
        }


@dataclass(slots=True)
class PoolStatus:
    allocated: Amounts = field(default_factory=Amounts)
    allocated_non_preemptible: Amounts = field(default_factory=Amounts)
    requested: Amounts = field(default_factory=Amounts)

    def add(self, other: PoolStatus) -> None:
        self.allocated.add(other.allocated)
        self.allocated_non_preemptible.add(other.allocated_non_preemptible)
        self.requested.add(other.requested)

    def wire(self) -> dict[str, Any]:
        return {
            "allocated": self.allocated.wire(),
            "allocatedNonPreemptible": self.allocated_non_preemptible.wire(),
            "requested": self.requested.wire(),
        }


UnitStatus = dict[str, PoolStatus]
"""Pool name → status."""


@dataclass(frozen=True, slots=True)
class QuotaStatuses:
    """Every project's status, by project id, and the pools' ids by name."""

    by_project: Mapping[str, UnitStatus]
    pool_ids: Mapping[str, str]
    department_projects: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def of_department(self, department_id: str) -> dict[str, Any]:
        """The sum of its projects' statuses."""
        return self.of_projects(self.department_projects.get(department_id, ()))

    def of_project(self, project_id: str) -> dict[str, Any]:
        return self._wire(self.by_project.get(project_id, {}))

    def of_projects(self, project_ids: Iterable[str]) -> dict[str, Any]:
        summed: UnitStatus = defaultdict(PoolStatus)
        for project_id in project_ids:
            for pool, status in self.by_project.get(project_id, {}).items():
                summed[pool].add(status)
        return self._wire(summed)

    def _wire(self, status: UnitStatus) -> dict[str, Any]:
        """`nodePoolQuotaStatuses` (every known pool) and `quotaStatus` (their sum)."""
        total = PoolStatus()
        pools = []
        for name in sorted(set(self.pool_ids) | set(status)):
            of_pool = status.get(name, PoolStatus())
            total.add(of_pool)
            pools.append(
                {"nodePoolName": name, "nodePoolId": self.pool_ids.get(name, ""), **of_pool.wire()}
            )
        return {"nodePoolQuotaStatuses": pools, "quotaStatus": total.wire()}


def _amounts(need: PodNeed, *, gpus: float | None = None) -> Amounts:
    asked = need.gpu
    wanted = float(asked.devices) * (float(asked.portion) if asked.memory is None else 1.0)
    return Amounts(
        gpu=wanted if gpus is None else gpus,
        cpu=float(need.cpu) * 1000,
        memory=float(need.memory) / MEGABYTE,
    )


def _preemptible(workload: Workload) -> bool:
    spec = workload.request.get("spec") or {}
    return is_preemptible(workload.priority_class, spec.get("preemptibility"))


def _asked_pool(workload: Workload) -> str:
    pools = (workload.request.get("spec") or {}).get("nodePools") or []
    return str(pools[0]) if pools else DEFAULT_POOL


def quota_statuses(
    *,
    admitted: Sequence[Workload],
    pending: Sequence[Workload],
    nodes: Sequence[Node],
    pool_ids: Mapping[str, str],
    department_projects: Mapping[str, Sequence[str]],
) -> QuotaStatuses:
    pool_of_node = {n.name: n.pool for n in nodes}
    by_project: dict[str, UnitStatus] = defaultdict(lambda: defaultdict(PoolStatus))
    for workload in admitted:
        if workload.placement is None:
            continue
        non_preemptible = not _preemptible(workload)
        for need in gang_needs(workload.plan()):
            assignment = workload.placement.get(need.pod)
            if assignment is None:
                continue
            held = _amounts(need, gpus=float(assignment.gpu_amount))
            status = by_project[workload.project_id][
                pool_of_node.get(assignment.node, DEFAULT_POOL)
            ]
            status.allocated.add(held)
            status.requested.add(held)
            if non_preemptible:
                status.allocated_non_preemptible.add(held)
    for workload in pending:
        status = by_project[workload.project_id][_asked_pool(workload)]
        for need in gang_needs(workload.plan()):
            status.requested.add(_amounts(need))
    return QuotaStatuses(by_project, pool_ids, department_projects)
