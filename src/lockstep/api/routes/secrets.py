"""`/api/v1/org-unit/projects/{projectId}/secrets` and `.../configmaps`: a lockstep extension
(the Run:ai document has no such endpoints) for the secrets and config maps that workloads'
environment variables refer to. No response carries a secret's values, only its keys."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, ProjectId, ServicesDep
from lockstep.api.responses import json_response, parse_body
from lockstep.domain.errors import InvalidRequest
from lockstep.schemas.secrets import ValuesCreationRequest, ValuesReplacementRequest

router = APIRouter(tags=["values"])

SECRETS = "/api/v1/org-unit/projects/{projectId}/secrets"
CONFIG_MAPS = "/api/v1/org-unit/projects/{projectId}/configmaps"
Name = Annotated[str, Path(alias="name")]


async def _replacement(body: bytes, name: str) -> ValuesReplacementRequest:
    request = await parse_body(ValuesReplacementRequest, body)
    if request.name is not None and request.name != name:
        raise InvalidRequest.of("name", f"must be {name!r}, the name in the path, or left out")
    return request


@router.get(SECRETS)
async def get_secrets(project_id: ProjectId, caller: CallerDep, services: ServicesDep) -> Response:
    secrets = await services.calls.store(services.secrets.secrets, caller, project_id)
    return json_response({"secrets": [views.secret(s) for s in secrets]})


@router.post(SECRETS, status_code=201)
async def create_secret(
    project_id: ProjectId, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    request = await parse_body(ValuesCreationRequest, body)
    secret = await services.calls.store(
        services.secrets.create_secret, caller, project_id, name=request.name, data=request.data
    )
    return json_response(views.secret(secret), 201)


@router.get(SECRETS + "/{name}")
async def get_secret(
    project_id: ProjectId, name: Name, caller: CallerDep, services: ServicesDep
) -> Response:
    secret = await services.calls.store(services.secrets.secret, caller, project_id, name)
    return json_response(views.secret(secret))


@router.put(SECRETS + "/{name}")
async def replace_secret(
    project_id: ProjectId, name: Name, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    request = await _replacement(body, name)
    secret = await services.calls.store(
        services.secrets.replace_secret, caller, project_id, name=name, data=request.data
    )
    return json_response(views.secret(secret))


@router.delete(SECRETS + "/{name}", status_code=204)
async def delete_secret(
    project_id: ProjectId, name: Name, caller: CallerDep, services: ServicesDep
) -> Response:
    await services.calls.store(services.secrets.delete_secret, caller, project_id, name)
    return Response(status_code=204)


@router.get(CONFIG_MAPS)
async def get_config_maps(
    project_id: ProjectId, caller: CallerDep, services: ServicesDep
) -> Response:
    config_maps = await services.calls.store(services.secrets.config_maps, caller, project_id)
    return json_response({"configMaps": [views.config_map(c) for c in config_maps]})


@router.post(CONFIG_MAPS, status_code=201)
async def create_config_map(
    project_id: ProjectId, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    request = await parse_body(ValuesCreationRequest, body)
    config_map = await services.calls.store(
        services.secrets.create_config_map, caller, project_id, name=request.name, data=request.data
    )
    return json_response(views.config_map(config_map), 201)


@router.get(CONFIG_MAPS + "/{name}")
async def get_config_map(
    project_id: ProjectId, name: Name, caller: CallerDep, services: ServicesDep
) -> Response:
    config_map = await services.calls.store(services.secrets.config_map, caller, project_id, name)
    return json_response(views.config_map(config_map))


@router.put(CONFIG_MAPS + "/{name}")
async def replace_config_map(
    project_id: ProjectId, name: Name, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    request = await _replacement(body, name)
    config_map = await services.calls.store(
        services.secrets.replace_config_map, caller, project_id, name=name, data=request.data
    )
    return json_response(views.config_map(config_map))


@router.delete(CONFIG_MAPS + "/{name}", status_code=204)
async def delete_config_map(
    project_id: ProjectId, name: Name, caller: CallerDep, services: ServicesDep
) -> Response:
    await services.calls.store(services.secrets.delete_config_map, caller, project_id, name)
    return Response(status_code=204)
