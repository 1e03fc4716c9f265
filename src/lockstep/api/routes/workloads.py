"""`/api/v1/workloads`: the list and count of every workload, the pods of every workload, and
one workload's detail, pods, events and phase history; the list also as a stream of its
changes (`watch=true`)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import CallerDep, ServicesDep, WorkloadId
from lockstep.api.responses import json_response, page
from lockstep.api.routes.watch import watch_workloads
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.listing import ListQuery, SortOrder, check_paging, parse_filters
from lockstep.domain.plan import ReplicaPlan
from lockstep.services.workloads import POD_FIELDS
from lockstep.store.workloads import FILTER_FIELDS, SORT_FIELDS

router = APIRouter(prefix="/api/v1/workloads", tags=["workloads"])

FilterBy = Annotated[list[str] | None, Query(alias="filterBy")]
SortBy = Annotated[str | None, Query(alias="sortBy")]
Order = Annotated[SortOrder, Query(alias="sortOrder")]
Offset = Annotated[int | None, Query()]
Limit = Annotated[int | None, Query()]
Search = Annotated[str | None, Query()]
Deleted = Annotated[bool | None, Query()]


def _query(
    filter_by: list[str] | None,
    sort_by: str | None,
    order: SortOrder,
    offset: int | None,
    limit: int | None,
    search: str | None,
    deleted: bool | None,
) -> ListQuery:
    if sort_by is not None and sort_by not in SORT_FIELDS:
        raise InvalidRequest.of(
            "sortBy", f"cannot sort by {sort_by!r}; fields: {', '.join(sorted(SORT_FIELDS))}"
        )
    start, size = check_paging(offset, limit)
    return ListQuery(
        filters=parse_filters(filter_by or [], allowed=FILTER_FIELDS),
        sort_by=sort_by,
        sort_order=order,
        offset=start,
        limit=size,
        search=search or None,
        deleted=bool(deleted),
    )


@router.get("")
async def get_workloads(
    request: Request,
    caller: CallerDep,
    services: ServicesDep,
    filter_by: FilterBy = None,
    sort_by: SortBy = None,
    sort_order: Order = SortOrder.ASC,
    offset: Offset = None,
    limit: Limit = None,
    search: Search = None,
    deleted: Deleted = None,
    watch: Annotated[bool, Query()] = False,
) -> Response:
    """With `watch=true`, a stream of the list and its changes (routes/watch.py)."""
    query = _query(filter_by, sort_by, sort_order, offset, limit, search, deleted)
    if watch:
        return await watch_workloads(request, caller, services, query)
    body = await services.calls.store(services.workload_list.page, caller, query)
    return Response(body, media_type="application/json")


@router.get("/count")
async def count_workloads(
    caller: CallerDep,
    services: ServicesDep,
    filter_by: FilterBy = None,
    search: Search = None,
    deleted: Deleted = None,
) -> Response:
    query = _query(filter_by, None, SortOrder.ASC, None, None, search, deleted)
    return json_response(
        {"count": await services.calls.store(services.workloads.count, caller, query)}
    )


class PodVerbosity(StrEnum):
    BRIEF = "brief"
    FULL = "full"


_COMPLETED = {"true": True, "false": False, "all": None, "": None}


@router.get("/pods")
async def list_pods(
    caller: CallerDep,
    services: ServicesDep,
    deleted: Deleted = None,
    offset: Offset = None,
    limit: Limit = None,
    sort_order: Order = SortOrder.ASC,
    sort_by: SortBy = None,
    filter_by: FilterBy = None,
    verbosity: Annotated[PodVerbosity, Query()] = PodVerbosity.BRIEF,
    completed: Annotated[str, Query()] = "all",
    search: Search = None,
) -> Response:
    """The pods of every workload the caller may read."""
    if sort_by is not None and sort_by not in POD_FIELDS:
        raise InvalidRequest.of(
            "sortBy", f"cannot sort by {sort_by!r}; fields: {', '.join(sorted(POD_FIELDS))}"
        )
    if completed.lower() not in _COMPLETED:
        raise InvalidRequest.of("completed", f"{completed!r} is not one of true, false, all")
    start, size = check_paging(offset, limit)
    query = ListQuery(
        filters=parse_filters(filter_by or [], allowed=frozenset(POD_FIELDS)),
        sort_by=sort_by,
        sort_order=sort_order,
        offset=start,
        limit=size,
        search=search or None,
        deleted=bool(deleted),
    )
    result = await services.calls.store(
        services.workloads.pod_list, caller, query, completed=_COMPLETED[completed.lower()]
    )
    plans: dict[str, ReplicaPlan] = {}
    items = []
    for listed in result.items:
        workload = listed.workload
        plan = plans.get(workload.id) or plans.setdefault(workload.id, workload.plan())
        items.append(
            views.listed_pod(
                listed.pod,
                workload,
                plan,
                deleted_at=listed.deleted_at,
                full=verbosity is PodVerbosity.FULL,
            )
        )
    return json_response(page(items, key="pods", offset=start, has_more=result.has_more))


@router.get("/{workloadId}")
async def get_workload(
    workload_id: WorkloadId, caller: CallerDep, services: ServicesDep
) -> Response:
    workload, position = await services.calls.store(
        services.workloads.get_with_position, caller, str(workload_id)
    )
    figures = await services.calls.store(services.metrics.figures, [workload.id])
    item = views.workload_item(
        workload,
        image_environments=services.image_environments,
        unapplied=services.unapplied,
        figures=figures.get(workload.id),
    )
    if workload.request.exposed_urls:
        _, pods = await services.calls.store(
            services.workloads.pods, caller, str(workload_id), deleted=False
        )
        item["urls"] = views.exposed_urls(workload, pods, host=services.public_host)
    if workload.pending:
        item["pendingSchedulingMessages"] = [m.to_json() for m in workload.pending]
    if position is not None:
        item["queuePosition"] = position
    return json_response(item)


@router.get("/{workloadId}/pods")
async def get_workload_pods(
    workload_id: WorkloadId,
    caller: CallerDep,
    services: ServicesDep,
    deleted: Deleted = None,
    offset: Offset = None,
    limit: Limit = None,
    search: Search = None,
) -> Response:
    start, size = check_paging(offset, limit)
    workload, pods = await services.calls.store(
        services.workloads.pods, caller, str(workload_id), deleted=bool(deleted)
    )
    if search:
        pods = [p for p in pods if search in p.name]
    chosen = pods[start : start + size]
    plan = workload.plan()
    items = [views.pod_item(p, workload, plan) for p in chosen]
    return json_response(page(items, key="pods", offset=start, has_more=start + size < len(pods)))


@router.get("/{workloadId}/events")
async def get_workload_events(
    workload_id: WorkloadId,
    caller: CallerDep,
    services: ServicesDep,
    offset: Offset = None,
    limit: Limit = None,
    sort_order: Annotated[SortOrder, Query(alias="sortOrder")] = SortOrder.DESC,
) -> Response:
    start, size = check_paging(offset, limit)
    workload, events = await services.calls.store(
        services.workloads.events,
        caller,
        str(workload_id),
        offset=start,
        limit=size + 1,
        order=sort_order,
    )
    items = [views.event_item(e, workload) for e in events[:size]]
    return json_response(page(items, key="events", offset=start, has_more=len(events) > size))


@router.get("/{workloadId}/history")
async def get_workload_history(
    workload_id: WorkloadId,
    caller: CallerDep,
    services: ServicesDep,
    offset: Offset = None,
    limit: Limit = None,
) -> Response:
    start, size = check_paging(offset, limit)
    workload, records = await services.calls.store(
        services.workloads.history, caller, str(workload_id), offset=start, limit=size + 1
    )
    items = [views.history_item(r, workload) for r in records[:size]]
    return json_response(page(items, key="records", offset=start, has_more=len(records) > size))
