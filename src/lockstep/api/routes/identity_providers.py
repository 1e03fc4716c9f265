"""`/api/v1/idps`: the OpenID Connect providers people sign in with (create, list, read,
replace, delete) and their mappers. Each answer names the provider's `redirectUri`, the
address to register at the provider: `/sso/{alias}/callback` under lockstep's public URL
(routes/single_sign_on.py serves it)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, ServicesDep
from lockstep.api.responses import json_response, parse_body
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.single_sign_on import (
    OIDC,
    MandatoryClaim,
    Mappers,
    alias_violation,
    discovery_url_violation,
    scopes_of,
)
from lockstep.schemas.bounds import MAX_ALIAS_LENGTH
from lockstep.schemas.identity_providers import (
    MASKED_SECRET,
    IdpCreationRequest,
    MappersBody,
)
from lockstep.services.identity_providers import ProviderSettings

router = APIRouter(tags=["identity providers"])

Alias = Annotated[str, Path(alias="idp", max_length=MAX_ALIAS_LENGTH)]


def callback_uri(request: Request, public_url: str | None, alias: str) -> str:
    """Where a provider sends people back: lockstep's public URL, or the address this request
    came to."""
    base = public_url or str(request.base_url).rstrip("/")
    return f"{base}/sso/{alias}/callback"


@router.get("/api/v1/idps")
async def get_idps(request: Request, caller: CallerDep, services: ServicesDep) -> Response:
    found = await services.calls.store(services.identity_providers.providers, caller)
    return json_response(
        [
            views.identity_provider(
                p, redirect_uri=callback_uri(request, services.public_url, p.alias)
            )
            for p in found
        ]
    )


@router.post("/api/v1/idps", status_code=201)
async def create_idp(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    request = await parse_body(IdpCreationRequest, body)
    alias = request.name or request.type
    violation = alias_violation(alias)
    if violation is not None:
        raise InvalidRequest.of("name" if request.name else "type", violation)
    settings = _settings(alias, request, creating=True)
    created = await services.calls.store(services.identity_providers.create, caller, settings)
    return json_response({"alias": created.alias}, 201)


@router.get("/api/v1/idps/{idp}")
async def get_idp(
    alias: Alias, request: Request, caller: CallerDep, services: ServicesDep
) -> Response:
    found = await services.calls.store(services.identity_providers.provider, caller, alias)
    redirect = callback_uri(request, services.public_url, alias)
    return json_response(views.identity_provider(found, redirect_uri=redirect))


@router.put("/api/v1/idps/{idp}")
async def update_idp(
    alias: Alias, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    request = await parse_body(IdpCreationRequest, body)
    if request.name is not None and request.name != alias:
        raise InvalidRequest.of("name", f"must be the provider's alias {alias!r}, or left out")
    settings = _settings(alias, request, creating=False)
    await services.calls.store(services.identity_providers.replace, caller, settings)
    return Response(status_code=200)


@router.delete("/api/v1/idps/{idp}")
async def delete_idp(alias: Alias, caller: CallerDep, services: ServicesDep) -> Response:
    await services.calls.store(services.identity_providers.delete, caller, alias)
    return Response(status_code=200)


@router.get("/api/v1/idps/{idp}/mappers")
async def get_idp_mappers(alias: Alias, caller: CallerDep, services: ServicesDep) -> Response:
    found = await services.calls.store(services.identity_providers.provider, caller, alias)
    return json_response(views.mappers(alias, found.mappers))


@router.put("/api/v1/idps/{idp}/mappers", status_code=202)
async def update_idp_mappers(
    alias: Alias, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    request = await parse_body(MappersBody, body)
    await services.calls.store(
        services.identity_providers.set_mappers, caller, alias, _mappers(request)
    )
    return Response(status_code=202)


def _settings(alias: str, request: IdpCreationRequest, *, creating: bool) -> ProviderSettings:
    if request.type != OIDC:
        raise InvalidRequest.of(
            "type",
            f"{request.type!r} is not supported: lockstep signs people in through OpenID "
            "Connect ('oidc') only",
        )
    oidc = request.oidc_data
    if oidc is None:
        raise InvalidRequest.of("oidcData", "required for the type 'oidc'")
    if request.saml_data is not None or request.ocp_data is not None:
        given = "samlData" if request.saml_data is not None else "ocpData"
        raise InvalidRequest.of(given, "must be left out for the type 'oidc'")
    violation = discovery_url_violation(oidc.discover_document_url)
    if violation is not None:
        raise InvalidRequest.of("oidcData.discoverDocumentUrl", violation)
    scopes = scopes_of(oidc.scopes)
    if isinstance(scopes, str):
        raise InvalidRequest.of("oidcData.scopes", scopes)
    secret: str | None = oidc.client_secret
    if secret == MASKED_SECRET:
        if creating:
            raise InvalidRequest.of("oidcData.clientSecret", "must be the provider's secret")
        secret = None  # sent back as a read shows it: keep the stored one
    claim = oidc.mandatory_claim
    return ProviderSettings(
        alias=alias,
        discovery_url=oidc.discover_document_url,
        client_id=oidc.client_id,
        client_secret=secret,
        scopes=scopes,
        mandatory_claim=None if claim is None else MandatoryClaim(claim.claim, tuple(claim.values)),
        mappers=_mappers(request.mappers or MappersBody()),
    )


def _mappers(body: MappersBody) -> Mappers:
    defaults = Mappers()
    return Mappers(
        email=body.email or defaults.email,
        groups=body.groups or defaults.groups,
        uid=body.uid,
        gid=body.gid,
        supplementary_groups=body.supplementary_groups,
    )
