"""`/api/v1/org-unit/projects`, `/api/v1/org-unit/departments` and `/api/v1/clusters`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import (
    BodyDep,
    CallerDep,
    ClusterUuid,
    DepartmentId,
    ProjectId,
    Services,
    ServicesDep,
)
from lockstep.api.responses import json_response, page, parse_body
from lockstep.auth.tokens import Principal
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.listing import ListQuery, SortOrder, check_paging, parse_filters
from lockstep.domain.organization import Department, Project
from lockstep.schemas.organization import (
    DepartmentCreationRequest,
    DepartmentUpdateRequest,
    ProjectCreationRequest,
    ProjectUpdateRequest,
    ResourcesUpdateRequest,
)
from lockstep.services.nodes import NODE_FIELDS
from lockstep.services.organization import DEPARTMENT_FIELDS, PROJECT_FIELDS

router = APIRouter(tags=["organization"])

FilterBy = Annotated[list[str] | None, Query(alias="filterBy")]
SortBy = Annotated[str | None, Query(alias="sortBy")]
Order = Annotated[SortOrder, Query(alias="sortOrder")]


def _sort_field(sort_by: str | None, allowed: frozenset[str]) -> str | None:
    if sort_by is not None and sort_by not in allowed:
        raise InvalidRequest.of(
            "sortBy", f"cannot sort by {sort_by!r}; fields: {', '.join(sorted(allowed))}"
        )
    return sort_by


@router.get("/api/v1/org-unit/projects")
async def get_projects(
    caller: CallerDep,
    services: ServicesDep,
    filter_by: FilterBy = None,
    sort_by: SortBy = None,
    sort_order: Order = SortOrder.ASC,
    offset: int | None = None,
    limit: int | None = None,
    search: str | None = None,
) -> Response:
    fields = frozenset(PROJECT_FIELDS)
    start, size = check_paging(offset, limit)
    projects = await services.calls.store(
        services.organization.projects,
        caller,
        filters=parse_filters(filter_by or [], allowed=fields),
        sort_by=_sort_field(sort_by, fields),
        order=sort_order,
        search=search,
    )
    quota = await services.calls.store_off_loop(services.organization.quota_statuses)
    chosen = [views.project(p, quota.of_project(p.id)) for p in projects[start : start + size]]
    return json_response(
        page(chosen, key="projects", offset=start, has_more=start + size < len(projects))
    )


@router.post("/api/v1/org-unit/projects", status_code=201)
async def create_project(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    request = await parse_body(ProjectCreationRequest, body)
    project = await services.calls.store(services.organization.create_project, caller, request)
    return json_response(await _project_view(services, project), 201)


async def _project_view(services: Services, project: Project) -> dict[str, Any]:
    quota = await services.calls.store_off_loop(services.organization.quota_statuses)
    return views.project(project, quota.of_project(project.id))


@router.get("/api/v1/org-unit/projects/count")
async def count_projects(
    caller: CallerDep,
    services: ServicesDep,
    filter_by: FilterBy = None,
    search: str | None = None,
) -> Response:
    projects = await services.calls.store(
        services.organization.projects,
        caller,
        filters=parse_filters(filter_by or [], allowed=frozenset(PROJECT_FIELDS)),
        search=search,
    )
    return json_response({"count": len(projects)})


@router.get("/api/v1/org-unit/projects/{projectId}")
async def get_project(project_id: ProjectId, caller: CallerDep, services: ServicesDep) -> Response:
    project = await services.calls.store(services.organization.project, caller, project_id)
    return json_response(await _project_view(services, project))


@router.put("/api/v1/org-unit/projects/{projectId}")
async def update_project(
    project_id: ProjectId, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    request = await parse_body(ProjectUpdateRequest, body)
    project = await services.calls.store(
        services.organization.update_project, caller, project_id, request
    )
    return json_response(await _project_view(services, project))


@router.delete("/api/v1/org-unit/projects/{projectId}", status_code=204)
async def delete_project(
    project_id: ProjectId, caller: CallerDep, services: ServicesDep
) -> Response:
    await services.calls.store(services.organization.delete_project, caller, project_id)
    return Response(status_code=204)


async def _set_resources(
    project_id: str, caller: Principal, services: Services, body: bytes, *, patch: bool
) -> Response:
    if not body.strip():
        raise InvalidRequest.of("body", "a JSON array is required")
    request = await parse_body(ResourcesUpdateRequest, b'{"resources":' + body + b"}")
    project = await services.calls.store(
        services.organization.set_resources, caller, project_id, request, patch=patch
    )
    return json_response(project.resources)


@router.put("/api/v1/org-unit/projects/{projectId}/resources")
async def update_project_resources(
    project_id: ProjectId, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    """Replace the project's `resources[]`: the next scheduling cycle applies it."""
    return await _set_resources(project_id, caller, services, body, patch=False)


@router.patch("/api/v1/org-unit/projects/{projectId}/resources")
async def patch_project_resources(
    project_id: ProjectId, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    """Merge into the project's `resources[]`, pool by pool and field by field."""
    return await _set_resources(project_id, caller, services, body, patch=True)


@router.get("/api/v1/org-unit/departments")
async def get_departments(
    caller: CallerDep,
    services: ServicesDep,
    filter_by: FilterBy = None,
    sort_by: SortBy = None,
    sort_order: Order = SortOrder.ASC,
    offset: int | None = None,
    limit: int | None = None,
) -> Response:
    fields = frozenset(DEPARTMENT_FIELDS)
    start, size = check_paging(offset, limit)
    departments = await services.calls.store(
        services.organization.departments,
        caller,
        filters=parse_filters(filter_by or [], allowed=fields),
        sort_by=_sort_field(sort_by, fields),
        order=sort_order,
    )
    quota = await services.calls.store_off_loop(services.organization.quota_statuses)
    chosen = [
        views.department(d, quota.of_department(d.id)) for d in departments[start : start + size]
    ]
    return json_response(
        page(chosen, key="departments", offset=start, has_more=start + size < len(departments))
    )


@router.post("/api/v1/org-unit/departments", status_code=201)
async def create_department(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    request = await parse_body(DepartmentCreationRequest, body)
    department = await services.calls.store(
        services.organization.create_department, caller, request
    )
    return json_response(await _department_view(services, department), 201)


async def _department_view(services: Services, department: Department) -> dict[str, Any]:
    quota = await services.calls.store_off_loop(services.organization.quota_statuses)
    return views.department(department, quota.of_department(department.id))


@router.get("/api/v1/org-unit/departments/{departmentId}")
async def get_department(
    department_id: DepartmentId, caller: CallerDep, services: ServicesDep
) -> Response:
    department = await services.calls.store(services.organization.department, caller, department_id)
    return json_response(await _department_view(services, department))


@router.put("/api/v1/org-unit/departments/{departmentId}")
async def update_department(
    department_id: DepartmentId, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    request = await parse_body(DepartmentUpdateRequest, body)
    department = await services.calls.store(
        services.organization.update_department, caller, department_id, request
    )
    return json_response(await _department_view(services, department))


@router.delete("/api/v1/org-unit/departments/{departmentId}", status_code=204)
async def delete_department(
    department_id: DepartmentId, caller: CallerDep, services: ServicesDep
) -> Response:
    await services.calls.store(services.organization.delete_department, caller, department_id)
    return Response(status_code=204)


@router.get("/api/v1/clusters")
async def get_clusters(caller: CallerDep, services: ServicesDep) -> Response:
    return json_response(
        [
            views.cluster(c, version=services.version)
            for c in await services.calls.store(services.organization.clusters, caller)
        ]
    )


@router.get("/api/v1/clusters/{clusterUuid}/nodes")
async def get_cluster_nodes(
    cluster_id: ClusterUuid,
    caller: CallerDep,
    services: ServicesDep,
    node_name: Annotated[str | None, Query(alias="nodeName")] = None,
    filter_by: FilterBy = None,
    sort_by: SortBy = None,
    sort_order: Order = SortOrder.ASC,
    offset: int | None = None,
    limit: int | None = None,
    search: str | None = None,
) -> Response:
    """The cluster's nodes, their capacity and what admitted workloads hold."""
    fields = frozenset(NODE_FIELDS)
    start, size = check_paging(offset, limit)
    query = ListQuery(
        filters=parse_filters(filter_by or [], allowed=fields),
        sort_by=_sort_field(sort_by, fields),
        sort_order=sort_order,
        offset=start,
        limit=size,
        search=search or None,
    )
    found = await services.calls.store(
        services.nodes.nodes, caller, str(cluster_id), query, name=node_name
    )
    chosen = [views.node(use, found.cluster) for use in found.nodes]
    return json_response(page(chosen, key="nodes", offset=start, has_more=found.has_more))


@router.get("/api/v1/clusters/{clusterUuid}")
async def get_cluster(
    cluster_id: ClusterUuid, caller: CallerDep, services: ServicesDep
) -> Response:
    cluster = await services.calls.store(services.organization.cluster, caller, str(cluster_id))
    return json_response(views.cluster(cluster, version=services.version))
