"""Clients over the API (services/clients.py says who may do what): service accounts at
`/api/v1/service-accounts` and the deprecated `/api/v1/apps`; a user's access keys at
`/api/v1/access-keys` and the deprecated `/api/v1/user-applications`; every user's access keys
for an administrator at `/api/v1/administration/…`. A secret is in the answer that makes it,
under the name each path's contract gives it (`clientSecret`, or `secret` for the deprecated
ones), and nowhere else."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, ServicesDep
from lockstep.api.responses import json_response, parse_body
from lockstep.domain.clock import iso
from lockstep.schemas.clients import ClientCreationRequest, ClientPatchRequest
from lockstep.services.token_standing import CLIENT

router = APIRouter(tags=["clients"])

ServiceAccountId = Annotated[str, Path(alias="serviceAccountId", max_length=64)]
AppId = Annotated[str, Path(alias="appId", max_length=64)]
AccessKeyId = Annotated[str, Path(alias="accessKeyId", max_length=64)]


# Service accounts, and the deprecated applications.


@router.get("/api/v1/service-accounts")
async def get_service_accounts(caller: CallerDep, services: ServicesDep) -> Response:
    found = await services.calls.store(services.clients.service_accounts, caller)
    return json_response([views.service_account(a) for a in found])


@router.get("/api/v1/apps", deprecated=True)
async def get_applications(caller: CallerDep, services: ServicesDep) -> Response:
    return await get_service_accounts(caller, services)


async def _created_account(
    caller: CallerDep, services: ServicesDep, body: BodyDep, secret_key: str
) -> Response:
    request = await parse_body(ClientCreationRequest, body)
    account, secret = await services.calls.store_off_loop(
        services.clients.create_service_account, caller, request.name
    )
    shown = {"id": account.uid, "name": account.name, "clientId": account.client_id}
    return json_response({**shown, secret_key: secret}, 201)


@router.post("/api/v1/service-accounts", status_code=201)
async def create_service_account(
    caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    return await _created_account(caller, services, body, "clientSecret")


@router.post("/api/v1/apps", status_code=201, deprecated=True)
async def create_application(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    return await _created_account(caller, services, body, "secret")


@router.get("/api/v1/service-accounts/{serviceAccountId}")
async def get_service_account_by_id(
    uid: ServiceAccountId, caller: CallerDep, services: ServicesDep
) -> Response:
    found = await services.calls.store(services.clients.service_account, caller, uid)
    return json_response(views.service_account(found))


@router.get("/api/v1/apps/{appId}", deprecated=True)
async def get_application_by_id(uid: AppId, caller: CallerDep, services: ServicesDep) -> Response:
    return await get_service_account_by_id(uid, caller, services)


@router.patch("/api/v1/service-accounts/{serviceAccountId}")
async def update_service_account_by_id(
    uid: ServiceAccountId, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    request = await parse_body(ClientPatchRequest, body)
    changed = await services.calls.store(
        services.clients.set_enabled, caller, uid, enabled=request.enabled
    )
    services.standing.forget(CLIENT, changed.client_id)
    return json_response(views.service_account(changed))


@router.patch("/api/v1/apps/{appId}", deprecated=True)
async def update_application_by_id(
    uid: AppId, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    return await update_service_account_by_id(uid, caller, services, body)


@router.delete("/api/v1/service-accounts/{serviceAccountId}", status_code=204)
async def delete_service_account_by_id(
    uid: ServiceAccountId, caller: CallerDep, services: ServicesDep
) -> Response:
    gone = await services.calls.store(services.clients.delete_service_account, caller, uid)
    services.standing.forget(CLIENT, gone.client_id)
    return Response(status_code=204)


@router.delete("/api/v1/apps/{appId}", status_code=204, deprecated=True)
async def delete_application_by_id(
    uid: AppId, caller: CallerDep, services: ServicesDep
) -> Response:
    return await delete_service_account_by_id(uid, caller, services)


async def _regenerated_account(
    uid: str, caller: CallerDep, services: ServicesDep, secret_key: str
) -> Response:
    account, secret = await services.calls.store_off_loop(
        services.clients.regenerate_service_account, caller, uid
    )
    services.standing.forget(CLIENT, account.client_id)
    return json_response({secret_key: secret})


@router.post("/api/v1/service-accounts/{serviceAccountId}/secret")
async def regenerate_service_account_secret(
    uid: ServiceAccountId, caller: CallerDep, services: ServicesDep
) -> Response:
    return await _regenerated_account(uid, caller, services, "clientSecret")


@router.post("/api/v1/apps/{appId}/secret", deprecated=True)
async def regenerate_application_secret(
    uid: AppId, caller: CallerDep, services: ServicesDep
) -> Response:
    return await _regenerated_account(uid, caller, services, "secret")


# A user's access keys, and the deprecated user applications.


@router.get("/api/v1/access-keys")
async def get_access_keys(caller: CallerDep, services: ServicesDep) -> Response:
    found = await services.calls.store(services.clients.access_keys, caller)
    return json_response({"accessKeys": [views.access_key(k) for k in found]})


@router.get("/api/v1/user-applications", deprecated=True)
async def get_user_applications(caller: CallerDep, services: ServicesDep) -> Response:
    found = await services.calls.store(services.clients.access_keys, caller)
    return json_response([views.access_key(k) for k in found])


async def _created_key(
    caller: CallerDep, services: ServicesDep, body: BodyDep, secret_key: str
) -> Response:
    request = await parse_body(ClientCreationRequest, body)
    key, secret = await services.calls.store_off_loop(
        services.clients.create_access_key, caller, request.name
    )
    shown = {
        "id": key.uid,
        "name": key.name,
        "clientId": key.client_id,
        "createdAt": iso(key.created_at),
    }
    return json_response({**shown, secret_key: secret}, 201)


@router.post("/api/v1/access-keys", status_code=201)
async def create_access_key1(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    return await _created_key(caller, services, body, "clientSecret")


@router.post("/api/v1/user-applications", status_code=201, deprecated=True)
async def create_user_application(
    caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    return await _created_key(caller, services, body, "secret")


@router.get("/api/v1/access-keys/{accessKeyId}")
async def get_access_key_by_id1(
    uid: AccessKeyId, caller: CallerDep, services: ServicesDep
) -> Response:
    found = await services.calls.store(services.clients.access_key, caller, uid)
    return json_response(views.access_key(found))


@router.get("/api/v1/user-applications/{appId}", deprecated=True)
async def get_user_application_by_id(
    uid: AppId, caller: CallerDep, services: ServicesDep
) -> Response:
    return await get_access_key_by_id1(uid, caller, services)


@router.delete("/api/v1/access-keys/{accessKeyId}", status_code=204)
async def delete_access_key_by_id(
    uid: AccessKeyId, caller: CallerDep, services: ServicesDep
) -> Response:
    gone = await services.calls.store(services.clients.delete_access_key, caller, uid)
    services.standing.forget(CLIENT, gone.client_id)
    return Response(status_code=204)


@router.delete("/api/v1/user-applications/{appId}", status_code=204, deprecated=True)
async def delete_user_application_by_id(
    uid: AppId, caller: CallerDep, services: ServicesDep
) -> Response:
    return await delete_access_key_by_id(uid, caller, services)


@router.post("/api/v1/access-keys/{accessKeyId}/secret")
async def regenerate_access_key_secret(
    uid: AccessKeyId, caller: CallerDep, services: ServicesDep
) -> Response:
    key, secret = await services.calls.store_off_loop(
        services.clients.regenerate_access_key, caller, uid
    )
    services.standing.forget(CLIENT, key.client_id)
    return json_response({"clientSecret": secret})


@router.post("/api/v1/user-applications/{appId}/secret", deprecated=True)
async def regenerate_user_application_secret(
    uid: AppId, caller: CallerDep, services: ServicesDep
) -> Response:
    return await regenerate_access_key_secret(uid, caller, services)


# Every user's access keys, for an administrator.


ClientIdFilter = Annotated[str | None, Query(alias="clientId", max_length=255)]
CreatedByFilter = Annotated[str | None, Query(alias="createdBy", max_length=255)]


async def _all_keys(
    caller: CallerDep, services: ServicesDep, client_id: str | None, created_by: str | None
) -> list[dict[str, object]]:
    found = await services.calls.store(
        services.clients.all_access_keys, caller, client_id=client_id, created_by=created_by
    )
    return [views.access_key(k, administration=True) for k in found]


@router.get("/api/v1/administration/access-keys")
async def get_access_keys_administration(
    caller: CallerDep,
    services: ServicesDep,
    client_id: ClientIdFilter = None,
    created_by: CreatedByFilter = None,
) -> Response:
    return json_response({"accessKeys": await _all_keys(caller, services, client_id, created_by)})


@router.get("/api/v1/administration/user-applications", deprecated=True)
async def get_user_applications_administration(
    caller: CallerDep,
    services: ServicesDep,
    client_id: ClientIdFilter = None,
    created_by: CreatedByFilter = None,
) -> Response:
    return json_response(await _all_keys(caller, services, client_id, created_by))


@router.delete("/api/v1/administration/access-keys/{accessKeyId}", status_code=204)
async def delete_access_key_by_id_administration(
    uid: AccessKeyId, caller: CallerDep, services: ServicesDep
) -> Response:
    gone = await services.calls.store(services.clients.delete_any_access_key, caller, uid)
    services.standing.forget(CLIENT, gone.client_id)
    return Response(status_code=204)


@router.delete("/api/v1/administration/user-applications/{appId}", status_code=204, deprecated=True)
async def delete_user_application_by_id_administration(
    uid: AppId, caller: CallerDep, services: ServicesDep
) -> Response:
    return await delete_access_key_by_id_administration(uid, caller, services)
