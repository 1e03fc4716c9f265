"""Metrics use cases: the series of a workload, a pod, a project, a department, a cluster, a
node pool and a node over a window, and the telemetry (current figures) of workloads and
projects. Each checks the caller's access as reading the subject itself does.

What is measured comes from a `MetricsSource` (the samples lockstep keeps: `SampledMetrics`;
on a runtime without one, `NoMetricsSource` says what is needed); what is declared — requests
and limits from a workload's spec, quotas from an org unit's resources, GPUs from the nodes —
is computed here, the same whatever the source.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock, iso
from lockstep.domain.cluster import Node
from lockstep.domain.errors import InvalidRequest, MetricsUnavailable, NotFound
from lockstep.domain.metrics import (
    Measurement,
    Point,
    Sampled,
    Window,
    WorkloadFigures,
    combined,
    constant,
    figure,
    mean,
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
from lockstep.services.access import access_of
from lockstep.store.database import Database, UnitOfWork
from lockstep.store.metrics import CurrentWorkload, SampleScope


@dataclass(frozen=True, slots=True)
class SeriesQuery:
    """Measured series of `types` for whatever `scope` selects, over `window`."""

    scope: SampleScope
    types: Sequence[str]
    window: Window


class MetricsSource(Protocol):
    def series(self, query: SeriesQuery) -> list[Measurement]:
        """One measurement per type (per GPU device for a `_PER_GPU` type), in the order
        asked; a type without data has no values."""
        ...


@dataclass(frozen=True, slots=True)
class _FromSamples:
    sampled: Sampled
    how: Callable[[Sequence[float]], float]
    per_gpu: bool = False


FROM_SAMPLES: dict[str, _FromSamples] = {
    "CPU_USAGE_CORES": _FromSamples(Sampled.CPU_USAGE_CORES, sum),
    "CPU_MEMORY_USAGE_BYTES": _FromSamples(Sampled.CPU_MEMORY_USAGE_BYTES, sum),
    "GPU_UTILIZATION": _FromSamples(Sampled.GPU_UTILIZATION_PER_GPU, mean),
    "GPU_MEMORY_USAGE_BYTES": _FromSamples(Sampled.GPU_MEMORY_USAGE_BYTES_PER_GPU, sum),
    "GPU_UTILIZATION_PER_GPU": _FromSamples(Sampled.GPU_UTILIZATION_PER_GPU, mean, per_gpu=True),
    "GPU_MEMORY_USAGE_BYTES_PER_GPU": _FromSamples(
        Sampled.GPU_MEMORY_USAGE_BYTES_PER_GPU, mean, per_gpu=True
    ),
    "POD_COUNT": _FromSamples(Sampled.POD_COUNT, sum),
    "RUNNING_POD_COUNT": _FromSamples(Sampled.RUNNING_POD_COUNT, sum),
    "GPU_ALLOCATION": _FromSamples(Sampled.GPU_ALLOCATION, sum),
    "ALLOCATED_GPU": _FromSamples(Sampled.GPU_ALLOCATION, sum),
}
"""Each measured type: the sampled figure it is made of and how the pods' (or devices')
series are combined per point."""


class SampledMetrics:
    """The samples the local runtime's sampler keeps in the store."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def series(self, query: SeriesQuery) -> list[Measurement]:
        wanted = {FROM_SAMPLES[t].sampled for t in query.types}
        with self._db.read() as unit:
            samples = unit.metrics.samples(
                query.scope, wanted, start=query.window.start, end=query.window.end
            )
        by_metric = defaultdict(list)
        for sample in samples:
            by_metric[sample.metric].append(sample)
        measurements = []
        for name in query.types:
            rule = FROM_SAMPLES[name]
            chosen = by_metric[rule.sampled]
            if not rule.per_gpu:
                measurements.append(Measurement(name, combined(chosen, query.window, how=rule.how)))
                continue
            devices = sorted({s.gpu for s in chosen}, key=_device_order)
            for gpu in devices:
                points = combined([s for s in chosen if s.gpu == gpu], query.window, how=rule.how)
                measurements.append(Measurement(name, points, labels={"gpu": gpu}))
            if not devices:
                measurements.append(Measurement(name, []))
        return measurements


def _device_order(gpu: str) -> tuple[int, str]:
    return (int(gpu), "") if gpu.isdigit() else (1 << 30, gpu)


PROMETHEUS_NEEDED = (
    "metrics on the Kubernetes runtime come from the cluster's Prometheus: set "
    "LOCKSTEP_PROMETHEUS_URL to its address (not supported by this version of lockstep yet)"
)


class NoMetricsSource:
    """A runtime without a source of metrics: every request says what is needed."""

    def __init__(self, why: str) -> None:
        self._why = why

    def series(self, query: SeriesQuery) -> list[Measurement]:
        raise MetricsUnavailable(self._why)


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
        workload = unit.workloads.get(workload_id)
        if workload is None:
            raise NotFound(f"no workload has the id {workload_id!r}")
        scope = Scope(workload.cluster_id, workload.department_id, workload.project_id)
        access_of(unit, caller).check(Action.READ, Resource.WORKLOADS, scope)
        return workload

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
            "GPU_QUOTA": _deserved(quotas, pools, "gpu"),
            "CPU_QUOTA_MILLICORES": _deserved(quotas, pools, "cpu"),
            "CPU_MEMORY_QUOTA_MB": _deserved(quotas, pools, "memory") / 10**6,
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
        quota = sum(_deserved(quotas_of(p.resources), pools, "gpu") for p in projects)
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
            access = access_of(unit, caller)
            clusters = unit.organization.clusters()
        if not any(access.allows(Action.READ, Resource.CLUSTERS, Scope(c.id)) for c in clusters):
            raise NotFound(f"no node is named {node_id!r}")
        if node_id not in _names(self._nodes()):
            raise NotFound(f"no node is named {node_id!r}")
        return self._source.series(SeriesQuery(SampleScope(nodes=[node_id]), types, window))

    def _readable_cluster(self, unit: UnitOfWork, caller: Principal, cluster_id: str) -> None:
        if unit.organization.cluster(cluster_id) is None:
            raise NotFound(f"no cluster has the id {cluster_id!r}")
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

    # --- telemetry ---

    def workloads_telemetry(
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

    def projects_telemetry(
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
                groups[key] += _deserved(quotas_of(project.resources), pool_names, resource) / (
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


def _deserved(quotas: Quotas, pools: Sequence[str], resource: str) -> float:
    """What the unit is guaranteed over `pools` (an unlimited share counts nothing)."""
    total = 0.0
    for pool in pools:
        deserved = getattr(quotas.in_pool(pool), resource).deserved
        if deserved != UNLIMITED and deserved > 0:
            total += deserved
    return total


def _names(nodes: Sequence[Node]) -> list[str]:
    return [n.name for n in nodes]
