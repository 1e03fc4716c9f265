"""`/api/v1/org-unit/projects`, `/api/v1/org-unit/departments` and `/api/v1/clusters`."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, ServicesDep
from lockstep.api.responses import json_response, page, parse_body
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.listing import SortOrder, check_paging, parse_filters
from lockstep.schemas.organization import DepartmentCreationRequest, ProjectCreationRequest
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
def get_projects(
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
    projects, _ = services.organization.projects(
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
def create_project(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    project = services.organization.create_project(caller, parse_body(ProjectCreationRequest, body))
    return json_response(views.project(project), 201)


@router.get("/api/v1/org-unit/projects/{projectId}")
def get_project(projectId: str, caller: CallerDep, services: ServicesDep) -> Response:  # noqa: N803
    return json_response(views.project(services.organization.project(caller, projectId)))


@router.get("/api/v1/org-unit/departments")
def get_departments(
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
    departments, _ = services.organization.departments(
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
def create_department(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    department = services.organization.create_department(
        caller, parse_body(DepartmentCreationRequest, body)
    )
    return json_response(views.department(department), 201)


@router.get("/api/v1/org-unit/departments/{departmentId}")
def get_department(departmentId: str, caller: CallerDep, services: ServicesDep) -> Response:  # noqa: N803
    department, _ = services.organization.department(caller, departmentId)
    return json_response(views.department(department))


@router.get("/api/v1/clusters")
def get_clusters(caller: CallerDep, services: ServicesDep) -> Response:
    return json_response(
        [views.cluster(c, version=services.version) for c in services.organization.clusters(caller)]
    )


@router.get("/api/v1/clusters/{clusterUuid}")
def get_cluster(clusterUuid: UUID, caller: CallerDep, services: ServicesDep) -> Response:  # noqa: N803
    cluster = services.organization.cluster(caller, str(clusterUuid))
    return json_response(views.cluster(cluster, version=services.version))
