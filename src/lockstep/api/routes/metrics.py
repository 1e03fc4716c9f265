"""The metrics endpoints: series over a window of a workload, a pod, a project, a department, a
cluster, a node pool and a node, and the telemetry of workloads and projects.

Included before the routes of workloads and projects, whose `/{id}` paths would otherwise
take `telemetry` for an id.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, ParamSpec

from fastapi import APIRouter, Path, Query
from starlette.responses import Response

from lockstep.api.deps import (
    CallerDep,
    ClusterUuid,
    DepartmentId,
    ProjectId,
    Services,
    ServicesDep,
)
from lockstep.api.deps import WorkloadId as WorkloadIdPath
from lockstep.api.metrics_window import ClusterMetricsWindow, MetricsWindow, PooledMetricsWindow
from lockstep.api.responses import json_response
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.metrics import Measurement
from lockstep.schemas.metrics import (
    CLUSTER_METRIC_GROUPS,
    PROJECT_TELEMETRY_GROUPS,
    WORKLOAD_TELEMETRY_GROUPS,
)

router = APIRouter(tags=["metrics"])
P = ParamSpec("P")

NodepoolName = Annotated[str | None, Query(alias="nodepoolName")]
GroupBy = Annotated[list[str] | None, Query(alias="groupBy")]
TelemetryType = Annotated[str | None, Query(alias="telemetryType")]
ClusterFilter = Annotated[str | None, Query(alias="clusterId")]
DepartmentFilter = Annotated[str | None, Query(alias="departmentId")]


def _answer(measurements: list[Measurement]) -> Response:
    return json_response({"measurements": [m.to_json() for m in measurements]})


async def _measured(
    services: Services, function: Callable[P, list[Measurement]], *args: P.args, **kwargs: P.kwargs
) -> list[Measurement]:
    """A metrics call: on a worker thread where its source waits on the network (the
    cluster's Prometheus), else as any store call."""
    if services.metrics.remote:
        return await services.calls.store_off_loop(function, *args, **kwargs)
    return await services.calls.store(function, *args, **kwargs)


def _list(values: Sequence[str] | None) -> list[str]:
    """A comma-separated (or repeated) query parameter's items."""
    return [part.strip() for value in values or () for part in value.split(",") if part.strip()]


def _groups(values: Sequence[str] | None, allowed: Sequence[str], *, most: int) -> list[str]:
    chosen = _list(values)
    for name in chosen:
        if name not in allowed:
            raise InvalidRequest.of(
                "groupBy", f"{name!r} is not a grouping; one of {', '.join(allowed)}"
            )
    if len(chosen) > most:
        raise InvalidRequest.of("groupBy", f"at most {most} groupings, not {len(chosen)}")
    if len(set(chosen)) != len(chosen):
        raise InvalidRequest.of("groupBy", "names a grouping twice")
    return chosen


def _telemetry_type(value: str | None) -> str:
    if value is None or not value.strip():
        raise InvalidRequest.of("telemetryType", "is required")
    return value.strip()


@router.get("/api/v1/workloads/telemetry")
async def workloads_telemetry(
    caller: CallerDep,
    services: ServicesDep,
    telemetry_type: TelemetryType = None,
    group_by: GroupBy = None,
    cluster_id: ClusterFilter = None,
    department_id: DepartmentFilter = None,
    nodepool_name: NodepoolName = None,
    filter_by_phases: Annotated[list[str] | None, Query(alias="filterByPhases")] = None,
) -> Response:
    """Current figures of the workloads the caller may read (`nodepoolName` is accepted; the
    local runtime's workloads are all in the default pool's accounting)."""
    kind = _telemetry_type(telemetry_type)
    groups = _groups(group_by, WORKLOAD_TELEMETRY_GROUPS, most=2)
    body = await services.calls.store(
        services.telemetry.workloads,
        caller,
        kind,
        group_by=groups,
        cluster_id=cluster_id,
        department_id=department_id,
        phases=_list(filter_by_phases),
    )
    return json_response(body)


@router.get("/api/v1/workloads/{workloadId}/metrics")
async def workload_metrics(
    workload_id: WorkloadIdPath,
    caller: CallerDep,
    services: ServicesDep,
    query: MetricsWindow,
) -> Response:
    found = await _measured(
        services,
        services.metrics.workload,
        caller,
        str(workload_id),
        asked=query.metric_type,
        window=query.window(),
    )
    return _answer(found)


@router.get("/api/v1/workloads/{workloadId}/pods/{podId}/metrics")
async def pod_metrics(
    workload_id: WorkloadIdPath,
    pod_id: Annotated[str, Path(alias="podId")],
    caller: CallerDep,
    services: ServicesDep,
    query: MetricsWindow,
) -> Response:
    found = await _measured(
        services,
        services.metrics.pod,
        caller,
        str(workload_id),
        pod_id,
        asked=query.metric_type,
        window=query.window(),
    )
    return _answer(found)


@router.get("/api/v1/org-unit/projects/telemetry")
async def projects_telemetry(
    caller: CallerDep,
    services: ServicesDep,
    telemetry_type: TelemetryType = None,
    group_by: GroupBy = None,
    cluster_id: ClusterFilter = None,
    department_id: DepartmentFilter = None,
    nodepool_id: Annotated[str | None, Query(alias="nodepoolId")] = None,
) -> Response:
    kind = _telemetry_type(telemetry_type)
    groups = _groups(group_by, PROJECT_TELEMETRY_GROUPS, most=2)
    body = await services.calls.store(
        services.telemetry.projects,
        caller,
        kind,
        group_by=groups,
        cluster_id=cluster_id,
        department_id=department_id,
        pool_id=nodepool_id,
    )
    return json_response(body)


@router.get("/api/v1/org-unit/projects/{projectId}/metrics")
async def project_metrics(
    project_id: ProjectId,
    caller: CallerDep,
    services: ServicesDep,
    query: PooledMetricsWindow,
) -> Response:
    found = await _measured(
        services,
        services.metrics.project,
        caller,
        project_id,
        asked=query.metric_type,
        window=query.window(),
        pool=query.nodepool_name,
    )
    return _answer(found)


@router.get("/api/v1/org-unit/departments/{departmentId}/metrics")
async def department_metrics(
    department_id: DepartmentId,
    caller: CallerDep,
    services: ServicesDep,
    query: PooledMetricsWindow,
) -> Response:
    found = await _measured(
        services,
        services.metrics.department,
        caller,
        department_id,
        asked=query.metric_type,
        window=query.window(),
        pool=query.nodepool_name,
    )
    return _answer(found)


@router.get("/api/v1/clusters/{clusterUuid}/metrics")
async def cluster_metrics(
    cluster_id: ClusterUuid,
    caller: CallerDep,
    services: ServicesDep,
    query: ClusterMetricsWindow,
) -> Response:
    """Ungrouped: a grouping the document names is refused, saying lockstep does not group
    these yet."""
    if query.group_by is not None:
        if query.group_by not in CLUSTER_METRIC_GROUPS:
            raise InvalidRequest.of(
                "groupBy",
                f"{query.group_by!r} is not a grouping; one of {', '.join(CLUSTER_METRIC_GROUPS)}",
            )
        raise InvalidRequest.of("groupBy", "lockstep does not group a cluster's metrics")
    found = await _measured(
        services,
        services.metrics.cluster,
        caller,
        str(cluster_id),
        asked=query.metric_type,
        window=query.window(),
        pool=query.nodepool_name,
    )
    return _answer(found)


@router.get("/api/v1/clusters/{clusterUuid}/nodepools/{nodepoolName}/metrics")
async def node_pool_metrics(
    cluster_id: ClusterUuid,
    nodepool_name: Annotated[str, Path(alias="nodepoolName")],
    caller: CallerDep,
    services: ServicesDep,
    query: MetricsWindow,
) -> Response:
    found = await _measured(
        services,
        services.metrics.node_pool,
        caller,
        str(cluster_id),
        nodepool_name,
        asked=query.metric_type,
        window=query.window(),
    )
    return _answer(found)


@router.get("/api/v1/nodes/{nodeId}/metrics")
async def node_metrics(
    node_id: Annotated[str, Path(alias="nodeId")],
    caller: CallerDep,
    services: ServicesDep,
    query: MetricsWindow,
) -> Response:
    """A node by its name (lockstep's nodes have no other id)."""
    found = await _measured(
        services,
        services.metrics.node,
        caller,
        node_id,
        asked=query.metric_type,
        window=query.window(),
    )
    return _answer(found)
