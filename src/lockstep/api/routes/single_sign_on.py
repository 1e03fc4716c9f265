"""`/sso`: the browser's side of signing in through an identity provider
(services/single_sign_on.py tells the flow). Like the token endpoint, these need no bearer
token — they are how a person gets one:

- `GET /sso` — the providers one may sign in with (aliases only), for the console's page;
- `GET /sso/{alias}/sign-in?redirect_uri=…&state=…` — on to the provider; `redirect_uri` is
  the console's `/console/` or a loopback address of `lockstep login --sso`;
- `GET /sso/{alias}/callback` — back from the provider, on to `redirect_uri` with a one-time
  code (or an error) and the caller's `state`.

The browser carries a cookie from the first step to the last, named after the sign-in's state,
so that sign-ins in several tabs do not meet and none can be finished in another browser."""

from __future__ import annotations

import hashlib
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import RedirectResponse, Response

from lockstep.api.deps import ServicesDep
from lockstep.api.responses import json_response
from lockstep.api.routes.identity_providers import callback_uri
from lockstep.domain.single_sign_on import CONSOLE_PATH
from lockstep.schemas.bounds import MAX_ALIAS_LENGTH, MAX_URL_LENGTH
from lockstep.services.single_sign_on import MAX_RETURN_STATE_LENGTH, SIGN_IN_SECONDS

router = APIRouter(tags=["single sign-on"], include_in_schema=False)  # pages, not an API

Alias = Annotated[str, Path(max_length=MAX_ALIAS_LENGTH)]
COOKIE_PATH = "/sso/"
MAX_PARAMETER_LENGTH = 4096
"""The longest code, state or error a provider's answer may carry."""


def _cookie_name(state: str) -> str:
    return "lockstep_sso_" + hashlib.sha256(state.encode()).hexdigest()[:16]


@router.get("/sso")
async def sign_in_options(services: ServicesDep) -> Response:
    aliases = await services.calls.store(services.identity_providers.aliases)
    return json_response([{"alias": alias} for alias in aliases])


@router.get("/sso/{alias}/sign-in")
async def sign_in(
    alias: Alias,
    request: Request,
    services: ServicesDep,
    redirect_uri: Annotated[str, Query(max_length=MAX_URL_LENGTH)] = CONSOLE_PATH,
    state: Annotated[str, Query(max_length=MAX_RETURN_STATE_LENGTH)] = "",
) -> Response:
    begun = await services.single_sign_on.begin(
        alias,
        callback_uri=callback_uri(request, services.public_url, alias),
        return_uri=redirect_uri,
        return_state=state,
    )
    response = RedirectResponse(begun.provider_url, status_code=302)
    response.set_cookie(
        _cookie_name(begun.state),
        begun.state,
        max_age=SIGN_IN_SECONDS,
        path=COOKIE_PATH,
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="lax",
    )
    return response


@router.get("/sso/{alias}/callback")
async def callback(
    alias: Alias,
    request: Request,
    services: ServicesDep,
    state: Annotated[str, Query(max_length=MAX_PARAMETER_LENGTH)],
    code: Annotated[str | None, Query(max_length=MAX_PARAMETER_LENGTH)] = None,
    error: Annotated[str | None, Query(max_length=MAX_PARAMETER_LENGTH)] = None,
) -> Response:
    cookie = _cookie_name(state)
    target = await services.single_sign_on.finish(
        alias,
        callback_uri=callback_uri(request, services.public_url, alias),
        state=state,
        browser_state=request.cookies.get(cookie),
        code=code,
        error=error,
    )
    response = RedirectResponse(target, status_code=302)
    response.delete_cookie(cookie, path=COOKIE_PATH)
    return response
