"""`POST /api/v1/token`: the only endpoint that needs no bearer token. Its secret checks go
through the token guard (api/token_guard.py): rates per client address and application id, and
a bounded number hashing at once."""

from __future__ import annotations

import functools
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from lockstep.api.deps import BodyDep, ServicesDep, client_address
from lockstep.api.responses import json_response
from lockstep.domain.errors import InvalidRequest
from lockstep.schemas.tokens import TokenRequest
from lockstep.services.token_requests import checked

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
    issued = await services.token_guard.check(
        client_address(request),
        credentials.client_id,
        functools.partial(services.identity.issue_token, credentials),
    )
    return json_response({"accessToken": issued.token, "expiresIn": issued.expires_in})
