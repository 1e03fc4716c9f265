"""Metrics use cases: the series of a workload, a pod, a project, a department, a cluster, a
node pool and a node over a window (telemetry, the current figures: services/metrics/telemetry.py),
and the workload list's figures. Each checks the caller's access as reading the subject
itself does.

What is measured comes from a `MetricsSource` (services/metrics/sources.py); what is
declared — requests and limits from a workload's spec, quotas from an org unit's resources,
GPUs from the nodes — is computed here, the same whatever the source.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock
from lockstep.domain.cluster import Node
from lockstep.domain.errors import NotFound
from lockstep.domain.metrics import (
    Measurement,
    Point,
    Window,
    WorkloadFigures,
    constant,
    parse_metric_types,
)
from lockstep.domain.quantities import parse_quantity
from lockstep.domain.quotas import UNLIMITED, Quotas, quotas_of
from lockstep.domain.workload import Workload
from lockstep.schemas.metrics import (
    CLUSTER_METRIC_TYPES,
    NODE_METRIC_TYPES,
    ORG_UNIT_METRIC_TYPES,
    POD_METRIC_TYPES,
    WORKLOAD_METRIC_TYPES,
)
from lockstep.services.access import access_of, workload_for
from lockstep.services.metrics.sources import FROM_SAMPLES, MetricsSource, SeriesQuery
from lockstep.services.organization import visible_clusters
from lockstep.store.database import Database, UnitOfWork
from lockstep.store.metrics import SampleScope

# --- what each endpoint answers --------------------------------------------------------------

WORKLOAD_REQUESTS = (
    "CPU_REQUEST_CORES",
    "CPU_LIMIT_CORES",
    "CPU_MEMORY_REQUEST_BYTES",
    "CPU_MEMORY_LIMIT_BYTES",
    "GPU_MEMORY_REQUEST_BYTES",
)
WORKLOAD_MEASURED = (
    "GPU_UTILIZATION",
    "GPU_MEMORY_USAGE_BYTES",
    "CPU_USAGE_CORES",
    "CPU_MEMORY_USAGE_BYTES",
    "POD_COUNT",
    "RUNNING_POD_COUNT",
    "GPU_ALLOCATION",
)
POD_MEASURED = (
    "GPU_UTILIZATION_PER_GPU",
    "GPU_UTILIZATION",
    "GPU_MEMORY_USAGE_BYTES_PER_GPU",
    "GPU_MEMORY_USAGE_BYTES",
    "CPU_USAGE_CORES",
    "CPU_MEMORY_USAGE_BYTES",
)
ORG_UNIT_QUOTAS = ("GPU_QUOTA", "CPU_QUOTA_MILLICORES", "CPU_MEMORY_QUOTA_MB")
ORG_UNIT_MEASURED = ("GPU_ALLOCATION",)
CLUSTER_DECLARED = ("TOTAL_GPU_NODES", "TOTAL_GPU", "GPU_QUOTA")
CLUSTER_MEASURED = ("ALLOCATED_GPU", "UNALLOCATED_GPU", "GPU_UTILIZATION")
NODE_MEASURED = POD_MEASURED


def _requests(workload: Workload) -> dict[str, float]:
    """The workload's requests and limits, summed over its pods (absent where no pod sets
    them)."""
    totals: dict[str, float] = {}

    def add(name: str, value: float | None) -> None:
        if value is not None:
            totals[name] = totals.get(name, 0.0) + value

    for replica in workload.plan().replicas:
        compute = replica.spec.compute
        if compute is None:
            continue
        add("CPU_REQUEST_CORES", compute.cpu_core_request)
        add("CPU_LIMIT_CORES", compute.cpu_core_limit)
        add("CPU_MEMORY_REQUEST_BYTES", _bytes(compute.cpu_memory_request))
        add("CPU_MEMORY_LIMIT_BYTES", _bytes(compute.cpu_memory_limit))
        devices = compute.gpu_devices_request or 1
        add("GPU_MEMORY_REQUEST_BYTES", _times(_bytes(compute.gpu_memory_request), devices))
    return totals


def _bytes(quantity: str | None) -> float | None:
    return None if quantity is None else float(parse_quantity(str(quantity)))


def _times(value: float | None, count: int) -> float | None:
    return None if value is None else value * count


class MetricsService:
    def __init__(
        self,
        database: Database,
        *,
        source: MetricsSource,
        nodes: Callable[[], Sequence[Node]],
        clock: Clock,
    ) -> None:
        self._db = database
        self._source = source
        self._nodes = nodes
        self._clock = clock

    @property
    def remote(self) -> bool:
        """Its source waits on the network (see `MetricsSource.remote`)."""
        return self._source.remote

    # --- workloads and pods ---

    def figures(self, workload_ids: Sequence[str]) -> dict[str, WorkloadFigures]:
        """The list's figures of workloads the caller was shown (idleGpus,
        totalPendingTimeSeconds, totalRunningTimeSeconds)."""
        with self._db.read() as unit:
            return unit.metrics.figures(workload_ids, self._clock())

    def workload(
        self, caller: Principal, workload_id: str, *, asked: Sequence[str] | None, window: Window
    ) -> list[Measurement]:
        types = parse_metric_types(
            asked, known=WORKLOAD_METRIC_TYPES, measured=WORKLOAD_MEASURED + WORKLOAD_REQUESTS
        )
        with self._db.read() as unit:
            workload = self._readable_workload(unit, caller, workload_id)
        requests = _requests(workload) if any(t in WORKLOAD_REQUESTS for t in types) else {}
        until = workload.completed_at or workload.deleted_at or window.end
        scope = SampleScope(workload_id=workload.id)
        return self._answer(
            types,
            window,
            scope,
            declared=lambda name: (
                constant(requests[name], window, since=workload.created_at, until=until)
                if name in requests
                else []
            ),
        )

    def pod(
        self,
        caller: Principal,
        workload_id: str,
        pod_id: str,
        *,
        asked: Sequence[str] | None,
        window: Window,
    ) -> list[Measurement]:
        types = parse_metric_types(asked, known=POD_METRIC_TYPES, measured=POD_MEASURED)
        with self._db.read() as unit:
            self._readable_workload(unit, caller, workload_id)
            pod = next((p for p in unit.workloads.pods(workload_id) if p.id == pod_id), None)
        if pod is None:
            raise NotFound(f"workload {workload_id} has no pod with the id {pod_id!r}")
        return self._source.series(
            SeriesQuery(SampleScope(workload_id=workload_id, pod=pod.name), types, window)
        )

    def _readable_workload(self, unit: UnitOfWork, caller: Principal, workload_id: str) -> Workload:
        return workload_for(unit, caller, Action.READ, workload_id)

    # --- org units ---

    def project(
        self,
        caller: Principal,
        project_id: str,
        *,
        asked: Sequence[str] | None,
        window: Window,
        pool: str | None,
    ) -> list[Measurement]:
        types = self._org_unit_types(asked)
        with self._db.read() as unit:
            project = unit.organization.project(project_id) if project_id.isdigit() else None
            if project is None:
                raise NotFound(f"no project has the id {project_id!r}")
            scope = Scope(project.cluster_id, project.department_id, project.id)
            access_of(unit, caller).check(Action.READ, Resource.PROJECTS, scope)
            pools = self._pools(unit, project.cluster_id, pool)
        return self._org_unit(
            types,
            window,
            quotas_of(project.resources),
            pools,
            SampleScope(project_ids=[project.id], nodes=self._pool_nodes(pool)),
            since=project.created_at,
        )

    def department(
        self,
        caller: Principal,
        department_id: str,
        *,
        asked: Sequence[str] | None,
        window: Window,
        pool: str | None,
    ) -> list[Measurement]:
        types = self._org_unit_types(asked)
        with self._db.read() as unit:
            department = (
                unit.organization.department(department_id) if department_id.isdigit() else None
            )
            if department is None:
                raise NotFound(f"no department has the id {department_id!r}")
            scope = Scope(department.cluster_id, department.id)
            access_of(unit, caller).check(Action.READ, Resource.DEPARTMENTS, scope)
            pools = self._pools(unit, department.cluster_id, pool)
        return self._org_unit(
            types,
            window,
            quotas_of(department.resources),
            pools,
            SampleScope(department_id=department.id, nodes=self._pool_nodes(pool)),
            since=department.created_at,
        )

    @staticmethod
    def _org_unit_types(asked: Sequence[str] | None) -> list[str]:
        return parse_metric_types(
            asked, known=ORG_UNIT_METRIC_TYPES, measured=ORG_UNIT_QUOTAS + ORG_UNIT_MEASURED
        )

    def _org_unit(
        self,
        types: list[str],
        window: Window,
        quotas: Quotas,
        pools: list[str],
        scope: SampleScope,
        *,
        since: datetime,
    ) -> list[Measurement]:
        figures = {
            "GPU_QUOTA": deserved(quotas, pools, "gpu"),
            "CPU_QUOTA_MILLICORES": deserved(quotas, pools, "cpu"),
            "CPU_MEMORY_QUOTA_MB": deserved(quotas, pools, "memory") / 10**6,
        }
        return self._answer(
            types,
            window,
            scope,
            declared=lambda name: constant(figures[name], window, since=since, until=window.end),
        )

    def _pools(self, unit: UnitOfWork, cluster_id: str, pool: str | None) -> list[str]:
        names = sorted(
            {p.name for p in unit.node_pools.pools(cluster_id)} | {n.pool for n in self._nodes()}
        )
        if pool is None:
            return names
        if pool not in names:
            raise NotFound(f"no node pool is named {pool!r}")
        return [pool]

    def _pool_nodes(self, pool: str | None) -> list[str] | None:
        return None if pool is None else [n.name for n in self._nodes() if n.pool == pool]

    # --- clusters, node pools and nodes ---

    def cluster(
        self,
        caller: Principal,
        cluster_id: str,
        *,
        asked: Sequence[str] | None,
        window: Window,
        pool: str | None,
    ) -> list[Measurement]:
        with self._db.read() as unit:
            self._readable_cluster(unit, caller, cluster_id)
            pools = self._pools(unit, cluster_id, pool)
            projects = [p for p in unit.organization.projects() if p.cluster_id == cluster_id]
        types = self._cluster_types(asked)
        nodes = [n for n in self._nodes() if pool is None or n.pool == pool]
        quota = sum(deserved(quotas_of(p.resources), pools, "gpu") for p in projects)
        return self._cluster_answer(
            types, window, nodes, quota, SampleScope(cluster_id=cluster_id, nodes=_names(nodes))
        )

    def node_pool(
        self,
        caller: Principal,
        cluster_id: str,
        pool: str,
        *,
        asked: Sequence[str] | None,
        window: Window,
    ) -> list[Measurement]:
        return self.cluster(caller, cluster_id, asked=asked, window=window, pool=pool)

    def _cluster_types(self, asked: Sequence[str] | None) -> list[str]:
        return parse_metric_types(
            asked, known=CLUSTER_METRIC_TYPES, measured=CLUSTER_DECLARED + CLUSTER_MEASURED
        )

    def _cluster_answer(
        self,
        types: list[str],
        window: Window,
        nodes: Sequence[Node],
        quota: float,
        scope: SampleScope,
    ) -> list[Measurement]:
        total = float(sum(len(n.gpus) for n in nodes))
        figures = {
            "TOTAL_GPU_NODES": float(sum(1 for n in nodes if n.gpus)),
            "TOTAL_GPU": total,
            "GPU_QUOTA": quota,
        }
        measured = [t for t in types if t in CLUSTER_MEASURED]
        asked_of_source = sorted(
            {"ALLOCATED_GPU" if t == "UNALLOCATED_GPU" else t for t in measured}
        )
        found = (
            {m.type: m for m in self._source.series(SeriesQuery(scope, asked_of_source, window))}
            if asked_of_source
            else {}
        )
        answer = []
        for name in types:
            if name in figures:
                points = constant(figures[name], window, since=window.start, until=window.end)
                answer.append(Measurement(name, points))
            elif name == "UNALLOCATED_GPU":
                held = found["ALLOCATED_GPU"].points
                answer.append(Measurement(name, [Point(p.at, total - p.value) for p in held]))
            else:
                answer.append(found[name])
        return answer

    def node(
        self, caller: Principal, node_id: str, *, asked: Sequence[str] | None, window: Window
    ) -> list[Measurement]:
        types = parse_metric_types(asked, known=NODE_METRIC_TYPES, measured=NODE_MEASURED)
        with self._db.read() as unit:
            seen = visible_clusters(unit, caller)
        if not seen:
            raise NotFound(f"no node is named {node_id!r}")
        if node_id not in _names(self._nodes()):
            raise NotFound(f"no node is named {node_id!r}")
        return self._source.series(SeriesQuery(SampleScope(nodes=[node_id]), types, window))

    def _readable_cluster(self, unit: UnitOfWork, caller: Principal, cluster_id: str) -> None:
        """As reading the cluster itself: a cluster the caller sees (services/organization.py)
        is readable."""
        if unit.organization.cluster(cluster_id) is None:
            raise NotFound(f"no cluster has the id {cluster_id!r}")
        if cluster_id not in visible_clusters(unit, caller):
            access_of(unit, caller).check(Action.READ, Resource.CLUSTERS, Scope(cluster_id))

    def _answer(
        self,
        types: list[str],
        window: Window,
        scope: SampleScope,
        *,
        declared: Callable[[str], list[Point]],
    ) -> list[Measurement]:
        """Measured types from the source, the others from `declared`, in the order asked."""
        measured = [t for t in types if t in FROM_SAMPLES]
        found: dict[str, list[Measurement]] = defaultdict(list)
        if measured:
            for m in self._source.series(SeriesQuery(scope, measured, window)):
                found[m.type].append(m)
        answer: list[Measurement] = []
        for name in types:
            answer.extend(
                found[name] if name in FROM_SAMPLES else [Measurement(name, declared(name))]
            )
        return answer


def deserved(quotas: Quotas, pools: Sequence[str], resource: str) -> float:
    """What the unit is guaranteed over `pools` (an unlimited share counts nothing, a CPU or
    memory quota not enforced included: finite whatever the quotas)."""
    total = 0.0
    for pool in pools:
        deserved = getattr(quotas.in_pool(pool), resource).deserved
        if deserved != UNLIMITED and deserved > 0:
            total += deserved
    return total


def _names(nodes: Sequence[Node]) -> list[str]:
    return [n.name for n in nodes]
