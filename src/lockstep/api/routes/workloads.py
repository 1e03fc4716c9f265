"""`/api/v1/workloads`: the list and count of every workload, and one workload's detail,
pods, events and phase history."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import CallerDep, ServicesDep
from lockstep.api.responses import json_response, page
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.listing import ListQuery, SortOrder, check_paging, parse_filters
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
def get_workloads(
    caller: CallerDep,
    services: ServicesDep,
    filter_by: FilterBy = None,
    sort_by: SortBy = None,
    sort_order: Order = SortOrder.ASC,
    offset: Offset = None,
    limit: Limit = None,
    search: Search = None,
    deleted: Deleted = None,
) -> Response:
    query = _query(filter_by, sort_by, sort_order, offset, limit, search, deleted)
    result = services.workloads.page(caller, query)
    items = [views.workload_item(row) for row in result.items]
    return json_response(
        page(items, key="workloads", offset=query.offset, has_more=result.has_more)
    )


@router.get("/count")
def count_workloads(
    caller: CallerDep,
    services: ServicesDep,
    filter_by: FilterBy = None,
    search: Search = None,
    deleted: Deleted = None,
) -> Response:
    query = _query(filter_by, None, SortOrder.ASC, None, None, search, deleted)
    return json_response({"count": services.workloads.count(caller, query)})


@router.get("/{workloadId}")
def get_workload(workloadId: UUID, caller: CallerDep, services: ServicesDep) -> Response:  # noqa: N803
    row = services.workloads.get(caller, str(workloadId))
    item = views.workload_item(row)
    message = row.workload.phase_message
    if row.workload.actual_phase.value == "Pending" and message:
        item["pendingSchedulingMessages"] = [
            {"nodePool": "default", "phaseReason": "OverLimit", "reason": message}
        ]
    return json_response(item)


@router.get("/{workloadId}/pods")
def get_workload_pods(
    workloadId: UUID,  # noqa: N803
    caller: CallerDep,
    services: ServicesDep,
    deleted: Deleted = None,
    offset: Offset = None,
    limit: Limit = None,
    search: Search = None,
) -> Response:
    start, size = check_paging(offset, limit)
    row, pods = services.workloads.pods(caller, str(workloadId), deleted=bool(deleted))
    if search:
        pods = [p for p in pods if search in p.name]
    chosen = pods[start : start + size]
    items = [views.pod_item(p, row) for p in chosen]
    return json_response(page(items, key="pods", offset=start, has_more=start + size < len(pods)))


@router.get("/{workloadId}/events")
def get_workload_events(
    workloadId: UUID,  # noqa: N803
    caller: CallerDep,
    services: ServicesDep,
    offset: Offset = None,
    limit: Limit = None,
    sort_order: Annotated[SortOrder, Query(alias="sortOrder")] = SortOrder.DESC,
) -> Response:
    start, size = check_paging(offset, limit)
    row, events = services.workloads.events(
        caller, str(workloadId), offset=start, limit=size + 1, order=sort_order
    )
    items = [views.event_item(e, row) for e in events[:size]]
    return json_response(page(items, key="events", offset=start, has_more=len(events) > size))


@router.get("/{workloadId}/history")
def get_workload_history(
    workloadId: UUID,  # noqa: N803
    caller: CallerDep,
    services: ServicesDep,
    offset: Offset = None,
    limit: Limit = None,
) -> Response:
    start, size = check_paging(offset, limit)
    row, records = services.workloads.history(caller, str(workloadId), offset=start, limit=size + 1)
    items = [views.history_item(r, row) for r in records[:size]]
    return json_response(page(items, key="records", offset=start, has_more=len(records) > size))
