"""`/api/v1/org-unit/projects/{projectId}/secrets` and `.../configmaps`: a lockstep extension
(the Run:ai document has no such endpoints) for the secrets and config maps that workloads'
environment variables refer to. One set of routes, registered once per kind. No response
carries a secret's values, only its keys."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Path
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, ProjectId, ServicesDep
from lockstep.api.responses import json_response, parse_body
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.secrets import SecretKind
from lockstep.schemas.secrets import SecretCreationRequest, SecretReplacementRequest

router = APIRouter(tags=["values"])

Name = Annotated[str, Path(alias="name")]


@dataclass(frozen=True, slots=True)
class _Collection:
    """Where one kind is served, and how its routes and its list are named."""

    kind: SecretKind
    path: str
    listed: str
    """The key of the list in `GET path`'s answer."""
    one: str
    many: str
    """The routes' names are `get_{many}`, `create_{one}`, `get_{one}`, `replace_{one}` and
    `delete_{one}` (FastAPI makes them the operations' ids and summaries)."""


_COLLECTIONS = (
    _Collection(
        SecretKind.SECRET,
        "/api/v1/org-unit/projects/{projectId}/secrets",
        listed="secrets",
        one="secret",
        many="secrets",
    ),
    _Collection(
        SecretKind.CONFIG_MAP,
        "/api/v1/org-unit/projects/{projectId}/configmaps",
        listed="configMaps",
        one="config_map",
        many="config_maps",
    ),
)


async def _replacement(body: bytes, name: str) -> SecretReplacementRequest:
    request = await parse_body(SecretReplacementRequest, body)
    if request.name is not None and request.name != name:
        raise InvalidRequest.of("name", f"must be {name!r}, the name in the path, or left out")
    return request


def _add_routes(collection: _Collection) -> None:
    """The five routes of one kind: list, create, get, replace and delete."""
    kind, path, named = collection.kind, collection.path, collection.path + "/{name}"

    async def listing(project_id: ProjectId, caller: CallerDep, services: ServicesDep) -> Response:
        found = await services.calls.store(services.secrets.secrets, caller, kind, project_id)
        return json_response({collection.listed: [views.secret(s) for s in found]})

    async def creation(
        project_id: ProjectId, caller: CallerDep, services: ServicesDep, body: BodyDep
    ) -> Response:
        request = await parse_body(SecretCreationRequest, body)
        created = await services.calls.store(
            services.secrets.create, caller, kind, project_id, name=request.name, data=request.data
        )
        return json_response(views.secret(created), 201)

    async def reading(
        project_id: ProjectId, name: Name, caller: CallerDep, services: ServicesDep
    ) -> Response:
        found = await services.calls.store(services.secrets.secret, caller, kind, project_id, name)
        return json_response(views.secret(found))

    async def replacement(
        project_id: ProjectId, name: Name, caller: CallerDep, services: ServicesDep, body: BodyDep
    ) -> Response:
        request = await _replacement(body, name)
        replaced = await services.calls.store(
            services.secrets.replace, caller, kind, project_id, name=name, data=request.data
        )
        return json_response(views.secret(replaced))

    async def deletion(
        project_id: ProjectId, name: Name, caller: CallerDep, services: ServicesDep
    ) -> Response:
        await services.calls.store(services.secrets.delete, caller, kind, project_id, name)
        return Response(status_code=204)

    router.add_api_route(path, listing, methods=["GET"], name=f"get_{collection.many}")
    router.add_api_route(
        path, creation, methods=["POST"], status_code=201, name=f"create_{collection.one}"
    )
    router.add_api_route(named, reading, methods=["GET"], name=f"get_{collection.one}")
    router.add_api_route(named, replacement, methods=["PUT"], name=f"replace_{collection.one}")
    router.add_api_route(
        named, deletion, methods=["DELETE"], status_code=204, name=f"delete_{collection.one}"
    )


for _collection in _COLLECTIONS:
    _add_routes(_collection)
