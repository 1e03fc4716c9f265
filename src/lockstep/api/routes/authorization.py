"""`/api/v1/authorization/…`: the predefined roles and their permissions, the caller's own
permissions and rules, and access rules granted and revoked (services/access_rules.py says
who may). Reading the roles needs only a valid token: they are the same for everyone."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, ServicesDep
from lockstep.api.responses import json_response, parse_body
from lockstep.auth.roles import BY_ID, ROLES
from lockstep.domain.clock import parse_moment
from lockstep.domain.errors import InvalidRequest, NotFound
from lockstep.domain.identity import ScopeType, SubjectType
from lockstep.domain.listing import SortOrder, check_paging, parse_filters
from lockstep.schemas.authorization import AccessRuleCreationRequest
from lockstep.schemas.bounds import INT32_MAX
from lockstep.services.access_rules import (
    RULE_FIELDS,
    RulePage,
    RuleQuery,
    RuleRequest,
    ShownRule,
)

router = APIRouter(tags=["authorization"])

RuleId = Annotated[int, Path(alias="accessRuleId", ge=0, le=INT32_MAX)]
RoleId = Annotated[int, Path(alias="roleIdPath", ge=0, le=INT32_MAX)]
MAX_SUBJECT_IDS = 100
"""The most ids `subjectIds` may name."""


@router.get("/api/v1/authorization/roles")
async def get_roles_v1(caller: CallerDep) -> Response:
    del caller  # any valid token
    return json_response([views.role(definition) for definition in ROLES])


@router.get("/api/v1/authorization/roles/{roleIdPath}")
async def get_role_v1(role: RoleId, caller: CallerDep) -> Response:
    del caller
    definition = BY_ID.get(role)
    if definition is None:
        raise NotFound(f"no role has the id {role}")
    return json_response(views.role(definition))


@router.get("/api/v1/authorization/permissions")
async def get_permissions(caller: CallerDep, services: ServicesDep) -> Response:
    held = await services.calls.store(services.access_rules.permissions, caller)
    return json_response(views.permissions(held))


@router.post("/api/v1/authorization/access-rules", status_code=201)
async def create_access_rule(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    request = await parse_body(AccessRuleCreationRequest, body)
    rule = RuleRequest(
        subject_type=SubjectType(request.subject_type),
        subject_id=request.subject_id,
        role_id=request.role_id,
        scope_type=ScopeType(request.scope_type),
        scope_id=request.scope_id,
        cluster_id=request.cluster_id,
    )
    shown = await services.calls.store(services.access_rules.create, caller, rule)
    return json_response(views.access_rule(shown), 201)


@router.get("/api/v1/authorization/access-rules")
async def get_access_rules(
    caller: CallerDep,
    services: ServicesDep,
    subject_type: Annotated[str | None, Query(alias="subjectType", max_length=32)] = None,
    subject_part: Annotated[
        str | None, Query(alias="subjectIdFilter", max_length=255, deprecated=True)
    ] = None,
    subject_ids: Annotated[list[str] | None, Query(alias="subjectIds")] = None,
    limit: int | None = None,
    offset: int | None = None,
    last_updated: Annotated[str | None, Query(alias="lastUpdated", max_length=64)] = None,
    include_deleted: Annotated[bool, Query(alias="includeDeleted")] = False,
    cluster_id: Annotated[str | None, Query(alias="clusterId", max_length=64)] = None,
    scope_type: Annotated[
        str | None, Query(alias="scopeType", max_length=32, deprecated=True)
    ] = None,
    scope_id: Annotated[str | None, Query(alias="scopeId", max_length=64)] = None,
    role_id: Annotated[int | None, Query(alias="roleId", ge=1, deprecated=True)] = None,
    sort_order: Annotated[SortOrder, Query(alias="sortOrder")] = SortOrder.ASC,
    sort_by: Annotated[str | None, Query(alias="sortBy")] = None,
    filter_by: Annotated[list[str] | None, Query(alias="filterBy")] = None,
    search: Annotated[str | None, Query(max_length=1024)] = None,
) -> Response:
    start, size = check_paging(offset, limit)
    if sort_by is not None and sort_by not in RULE_FIELDS:
        fields = ", ".join(sorted(RULE_FIELDS))
        raise InvalidRequest.of("sortBy", f"cannot sort by {sort_by!r}; fields: {fields}")
    ids = [part for given in subject_ids or [] for part in given.split(",") if part]
    if len(ids) > MAX_SUBJECT_IDS:
        raise InvalidRequest.of("subjectIds", f"at most {MAX_SUBJECT_IDS} ids")
    query = RuleQuery(
        filters=parse_filters(filter_by or [], allowed=frozenset(RULE_FIELDS)),
        sort_by=sort_by,
        sort_order=sort_order,
        offset=start,
        limit=size,
        search=search or None,
        include_deleted=include_deleted,
        subject_type=subject_type,
        subject_ids=frozenset(ids) if subject_ids is not None else None,
        subject_part=subject_part or None,
        scope_type=scope_type,
        scope_id=scope_id,
        role_id=role_id,
        cluster_id=cluster_id,
        updated_since=_moment(last_updated),
    )
    found = await services.calls.store(services.access_rules.rules, caller, query)
    return json_response(_page(found, views.access_rule))


@router.get("/api/v1/authorization/access-rules/{accessRuleId}")
async def get_access_rule(rule_id: RuleId, caller: CallerDep, services: ServicesDep) -> Response:
    shown = await services.calls.store(services.access_rules.rule, caller, rule_id)
    return json_response(views.access_rule(shown))


@router.delete("/api/v1/authorization/access-rules/{accessRuleId}", status_code=204)
async def delete_access_rule(rule_id: RuleId, caller: CallerDep, services: ServicesDep) -> Response:
    await services.calls.store(services.access_rules.delete, caller, rule_id)
    return Response(status_code=204)


@router.get("/api/v1/authorization/me/access-rules")
async def get_me_access_rules(
    caller: CallerDep,
    services: ServicesDep,
    limit: int | None = None,
    offset: int | None = None,
    search: Annotated[str | None, Query(max_length=1024)] = None,
) -> Response:
    start, size = check_paging(offset, limit)
    found = await services.calls.store(
        services.access_rules.mine, caller, offset=start, limit=size, search=search or None
    )
    return json_response({"accessRules": _page(found, views.my_access_rule)})


def _page(found: RulePage, view: Callable[[ShownRule], dict[str, Any]]) -> dict[str, object]:
    return {
        "totalRecords": found.total,
        "displayRecords": len(found.rules),
        "accessRules": [view(shown) for shown in found.rules],
    }


def _moment(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        return parse_moment(text)
    except ValueError as error:
        raise InvalidRequest.of("lastUpdated", f"{text!r} is not an ISO-8601 date-time") from error
