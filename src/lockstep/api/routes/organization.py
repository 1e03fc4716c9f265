"""`/api/v1/org-unit/projects`, `/api/v1/org-unit/departments` and `/api/v1/clusters`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, ClusterUuid, DepartmentId, ProjectId, ServicesDep
from lockstep.api.responses import json_response, page, parse_body
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.listing import ListQuery, SortOrder, check_paging, parse_filters
from lockstep.schemas.organization import DepartmentCreationRequest, ProjectCreationRequest
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
    chosen = [views.project(p) for p in projects[start : start + size]]
    return json_response(
        page(chosen, key="projects", offset=start, has_more=start + size < len(projects))
    )


@router.post("/api/v1/org-unit/projects", status_code=201)
async def create_project(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    request = await parse_body(ProjectCreationRequest, body)
    project = await services.calls.store(services.organization.create_project, caller, request)
    return json_response(views.project(project), 201)


@router.get("/api/v1/org-unit/projects/{projectId}")
async def get_project(project_id: ProjectId, caller: CallerDep, services: ServicesDep) -> Response:
    project = await services.calls.store(services.organization.project, caller, project_id)
    return json_response(views.project(project))


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
    chosen = [views.department(d) for d in departments[start : start + size]]
    return json_response(
        page(chosen, key="departments", offset=start, has_more=start + size < len(departments))
    )


@router.post("/api/v1/org-unit/departments", status_code=201)
async def create_department(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    request = await parse_body(DepartmentCreationRequest, body)
    department = await services.calls.store(
        services.organization.create_department, caller, request
    )
    return json_response(views.department(department), 201)


@router.get("/api/v1/org-unit/departments/{departmentId}")
async def get_department(
    department_id: DepartmentId, caller: CallerDep, services: ServicesDep
) -> Response:
    department = await services.calls.store(services.organization.department, caller, department_id)
    return json_response(views.department(department))


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
