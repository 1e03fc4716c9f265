"""`/api/v1/node-pools`: list, count, get, create, update (PUT, PATCH) and delete."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, NodepoolId, Services, ServicesDep
from lockstep.api.responses import json_response, parse_body
from lockstep.auth.tokens import Principal
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.listing import SortOrder, check_paging, parse_filters
from lockstep.schemas.node_pools import NodePoolCreateRequest, NodePoolUpdateRequest
from lockstep.services.node_pools import POOL_FIELDS

router = APIRouter(tags=["node pools"])

FilterBy = Annotated[list[str] | None, Query(alias="filterBy")]
FIELDS = frozenset(POOL_FIELDS)


def _sort_field(sort_by: str | None) -> str | None:
    if sort_by is not None and sort_by not in FIELDS:
        raise InvalidRequest.of(
            "sortBy", f"cannot sort by {sort_by!r}; fields: {', '.join(sorted(FIELDS))}"
        )
    return sort_by


@router.get("/api/v1/node-pools")
async def get_node_pools(
    caller: CallerDep,
    services: ServicesDep,
    filter_by: FilterBy = None,
    sort_by: Annotated[str | None, Query(alias="sortBy")] = None,
    sort_order: Annotated[SortOrder, Query(alias="sortOrder")] = SortOrder.ASC,
    offset: int | None = None,
    limit: int | None = None,
) -> Response:
    start, size = check_paging(offset, limit)
    found = await services.calls.store_off_loop(
        services.node_pools.pools,
        caller,
        filters=parse_filters(filter_by or [], allowed=FIELDS),
        sort_by=_sort_field(sort_by),
        order=sort_order,
    )
    return json_response({"nodepools": [views.node_pool(v) for v in found[start : start + size]]})


@router.get("/api/v1/node-pools/count")
async def count_node_pools(
    caller: CallerDep, services: ServicesDep, filter_by: FilterBy = None
) -> Response:
    found = await services.calls.store_off_loop(
        services.node_pools.pools, caller, filters=parse_filters(filter_by or [], allowed=FIELDS)
    )
    return json_response({"count": len(found)})


@router.post("/api/v1/node-pools", status_code=201)
async def create_node_pool(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    request = await parse_body(NodePoolCreateRequest, body)
    view = await services.calls.store_off_loop(services.node_pools.create, caller, request)
    return json_response(views.node_pool(view), 201)


@router.get("/api/v1/node-pools/{nodepoolId}")
async def get_node_pool(
    nodepool_id: NodepoolId, caller: CallerDep, services: ServicesDep
) -> Response:
    view = await services.calls.store_off_loop(services.node_pools.pool, caller, nodepool_id)
    return json_response(views.node_pool(view))


async def _update(nodepool_id: str, caller: Principal, services: Services, body: bytes) -> Response:
    request = await parse_body(NodePoolUpdateRequest, body)
    view = await services.calls.store_off_loop(
        services.node_pools.update, caller, nodepool_id, request
    )
    return json_response(views.node_pool(view))


@router.put("/api/v1/node-pools/{nodepoolId}")
async def update_node_pool(
    nodepool_id: NodepoolId, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    return await _update(nodepool_id, caller, services, body)


@router.patch("/api/v1/node-pools/{nodepoolId}")
async def patch_node_pool(
    nodepool_id: NodepoolId, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    return await _update(nodepool_id, caller, services, body)


@router.delete("/api/v1/node-pools/{nodepoolId}", status_code=204)
async def delete_node_pool(
    nodepool_id: NodepoolId, caller: CallerDep, services: ServicesDep
) -> Response:
    """Not the default pool, nor one that resources name (409)."""
    await services.calls.store_off_loop(services.node_pools.delete, caller, nodepool_id)
    return Response(status_code=204)
