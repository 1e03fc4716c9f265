"""`POST /api/v1/token`: the only endpoint that needs no bearer token. An application's secret
(`app_token`, `client_credentials`) and a user's password (`password`) are checked through the
token guard (api/token_guard.py): rates per client address and per application id or user
name, and a bounded number hashing at once. A refresh token (`refresh_token`) is checked by its
signature and the user's standing, and the one-time code of a sign-in through an identity
provider (`exchange_token`, services/single_sign_on.py) by its digest: neither costs hashing."""

from __future__ import annotations

import functools
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from lockstep.api.audit_trail import SignIn, note_sign_in
from lockstep.api.deps import BodyDep, Services, ServicesDep, client_address
from lockstep.api.responses import json_response
from lockstep.domain.audit import AuditSubjectType
from lockstep.domain.errors import InvalidRequest, Unauthenticated
from lockstep.schemas.tokens import TokenRequest
from lockstep.services.token_requests import (
    PasswordCredentials,
    RefreshCredentials,
    SignInCode,
    checked,
)
from lockstep.services.users import SignedIn

router = APIRouter(tags=["tokens"])


@router.post("/api/v1/token")
async def grant_token(request: Request, services: ServicesDep, body: BodyDep) -> Response:
    try:
        parsed: Any = orjson.loads(body or b"null")
    except orjson.JSONDecodeError as error:
        raise InvalidRequest.of("body", "is not valid JSON") from error
    if not isinstance(parsed, dict):
        raise InvalidRequest.of("body", "a JSON object is required")
    credentials = checked(TokenRequest.from_body(parsed))
    address = client_address(request)
    if isinstance(credentials, PasswordCredentials):
        name = credentials.username.lower()
        note_sign_in(request, SignIn(name, AuditSubjectType.USER, "password"))
        signed_in = await services.token_guard.check(
            address,
            f"user:{name}",
            functools.partial(services.users.sign_in, name, credentials.password),
            named=f"the user {name!r}",
        )
        return _tokens(signed_in)
    if isinstance(credentials, RefreshCredentials):
        _note_refresh(request, services, credentials.refresh_token)
        renewed = await services.calls.store(services.users.refresh, credentials.refresh_token)
        return _tokens(renewed)
    if isinstance(credentials, SignInCode):
        note_sign_in(request, SignIn("anonymous", AuditSubjectType.USER, "exchange_token"))
        exchanged = await services.calls.store(
            services.single_sign_on.exchange, credentials.code, credentials.redirect_uri
        )
        person = services.tokens.verify(exchanged.access.token).name
        note_sign_in(request, SignIn(person, AuditSubjectType.USER, "exchange_token"))
        return _tokens(exchanged)
    note_sign_in(
        request, SignIn(credentials.client_id, AuditSubjectType.APP, credentials.grant_type)
    )
    issued = await services.token_guard.check(
        address,
        credentials.client_id,
        functools.partial(services.identity.issue_token, credentials),
    )
    return json_response({"accessToken": issued.token, "expiresIn": issued.expires_in})


def _note_refresh(request: Request, services: Services, refresh_token: str) -> None:
    """The audit trail's subject of a renewal: the user its refresh token names, once its
    signature is checked (the token itself is never recorded)."""
    try:
        name = services.tokens.verify_refresh(refresh_token).name
    except Unauthenticated:
        return
    note_sign_in(request, SignIn(name, AuditSubjectType.USER, "refresh_token"))


def _tokens(signed_in: SignedIn) -> Response:
    return json_response(
        {
            "accessToken": signed_in.access.token,
            "refreshToken": signed_in.refresh.token,
            "expiresIn": signed_in.access.expires_in,
        }
    )
