"""The quota `status` of projects and departments (the document's `QuotaStatus` and
`QuotaStatusNodePool`): per node pool and summed, what admitted workloads hold (`allocated`,
and of it what non-preemptible workloads hold, `allocatedNonPreemptible`) and what is asked
(`requested`: allocated plus what pending workloads ask).

A placed pod counts in the pool of the node it was placed on; a pending workload asks in the
first pool its spec names (`nodePools`) that has nodes, else in the first pool of the nodes,
as the scheduler counts it. Units are the document's:
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
from lockstep.domain.workload import Workload
from lockstep.scheduler.gang.of_workload import gang_of
from lockstep.scheduler.quota.pool_amounts import asked, home_pool, placed_amounts

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


def _in_megabytes(amounts: Sequence[float]) -> Amounts:
    """The scheduler's amounts (GPUs, millicores, bytes) in the document's units."""
    gpu, cpu, memory = amounts
    return Amounts(gpu=gpu, cpu=cpu, memory=memory / MEGABYTE)


def quota_statuses(
    *,
    admitted: Sequence[Workload],
    pending: Sequence[Workload],
    nodes: Sequence[Node],
    pool_ids: Mapping[str, str],
    department_projects: Mapping[str, Sequence[str]],
) -> QuotaStatuses:
    """Counted as the scheduler counts them (scheduler/quota/pool_amounts.py), from each workload's
    gang: what a pending one asks costs its shape's groups, not a pod each."""
    pool_of_node = {n.name: n.pool for n in nodes}
    pools = list(dict.fromkeys(n.pool for n in nodes))
    by_project: dict[str, UnitStatus] = defaultdict(lambda: defaultdict(PoolStatus))
    for workload in admitted:
        if workload.placement is None:
            continue
        non_preemptible = not workload.preemptible
        needs = list(gang_of(workload).shape.pods())
        for pool, amounts in placed_amounts(needs, workload.placement, pool_of_node).items():
            held = _in_megabytes(amounts)
            status = by_project[workload.project_id][pool]
            status.allocated.add(held)
            status.requested.add(held)
            if non_preemptible:
                status.allocated_non_preemptible.add(held)
    for workload in pending:
        shape = gang_of(workload).shape
        status = by_project[workload.project_id][home_pool(shape, pools or [DEFAULT_POOL])]
        status.requested.add(_in_megabytes(asked(shape)))
    return QuotaStatuses(by_project, pool_ids, department_projects)
