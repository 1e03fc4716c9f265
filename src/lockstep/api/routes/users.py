"""`/api/v1/users` (list, create, get, delete, reset a password, sign out) and
`/api/v1/me/password`: people who sign in to lockstep (services/users.py says who may do
what). A password lockstep makes is in the answer that makes it, and nowhere else."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Path, Query
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, ServicesDep
from lockstep.api.responses import json_response, parse_body
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.listing import MAX_LIMIT, SortOrder, check_paging, parse_filters
from lockstep.schemas.users import UserChangePasswordRequest, UserCreationRequest
from lockstep.services.token_standing import USER
from lockstep.services.users import USER_FIELDS, USER_SORT_FIELDS, UserQuery

router = APIRouter(tags=["users"])

UserId = Annotated[str, Path(alias="userId", max_length=64)]
_DEPRECATED_FILTER = re.compile(r"^runai\.is_local:(true|false)$")


@router.get("/api/v1/users")
async def get_users(
    caller: CallerDep,
    services: ServicesDep,
    filter_: Annotated[str | None, Query(alias="filter", deprecated=True)] = None,
    filter_by: Annotated[list[str] | None, Query(alias="filterBy")] = None,
    sort_by: Annotated[str | None, Query(alias="sortBy")] = None,
    sort_order: Annotated[SortOrder, Query(alias="sortOrder")] = SortOrder.ASC,
    offset: int | None = None,
    limit: int | None = None,
    search: Annotated[str | None, Query(max_length=1024)] = None,
) -> Response:
    start, size = check_paging(offset, MAX_LIMIT if limit is None else limit)
    if sort_by is not None and sort_by not in USER_SORT_FIELDS:
        fields = ", ".join(sorted(USER_SORT_FIELDS))
        raise InvalidRequest.of("sortBy", f"cannot sort by {sort_by!r}; fields: {fields}")
    is_local = None
    if filter_ is not None:
        match = _DEPRECATED_FILTER.fullmatch(filter_)
        if match is None:
            raise InvalidRequest.of("filter", "must be runai.is_local:true or runai.is_local:false")
        is_local = match[1] == "true"
    query = UserQuery(
        filters=parse_filters(filter_by or [], allowed=frozenset(USER_FIELDS)),
        sort_by=sort_by,
        sort_order=sort_order,
        offset=start,
        limit=size,
        search=search or None,
        is_local=is_local,
    )
    found = await services.calls.store(services.users.users, caller, query)
    return json_response([views.user(u) for u in found])


@router.post("/api/v1/users", status_code=201)
async def create_user(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    request = await parse_body(UserCreationRequest, body)
    user, password = await services.calls.store_off_loop(
        services.users.create, caller, request.email
    )
    return json_response({"id": user.id, "username": user.username, "tempPassword": password}, 201)


@router.get("/api/v1/users/{userId}")
async def get_user_by_id(user_id: UserId, caller: CallerDep, services: ServicesDep) -> Response:
    return json_response(
        views.user(await services.calls.store(services.users.user, caller, user_id))
    )


@router.delete("/api/v1/users/{userId}", status_code=204)
async def delete_user_by_id(user_id: UserId, caller: CallerDep, services: ServicesDep) -> Response:
    await services.calls.store(services.users.delete, caller, user_id)
    services.standing.forget(USER, user_id)
    return Response(status_code=204)


@router.post("/api/v1/users/{userId}/password")
async def reset_user_password(
    user_id: UserId, caller: CallerDep, services: ServicesDep
) -> Response:
    password = await services.calls.store_off_loop(services.users.reset_password, caller, user_id)
    services.standing.forget(USER, user_id)
    return json_response({"tempPassword": password})


@router.post("/api/v1/users/{userId}/logout")
async def logout_user(user_id: UserId, caller: CallerDep, services: ServicesDep) -> Response:
    await services.calls.store(services.users.sign_out, caller, user_id)
    services.standing.forget(USER, user_id)
    return json_response({})


@router.post("/api/v1/me/password")
async def change_user_password(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    request = await parse_body(UserChangePasswordRequest, body)
    await services.calls.store_off_loop(
        services.users.change_own_password,
        caller,
        request.current_password,
        request.new_password,
    )
    services.standing.forget(USER, caller.user_id or "")
    return json_response({})
