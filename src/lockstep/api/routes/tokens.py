"""`POST /api/v1/token`: the only endpoint that needs no bearer token."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter
from starlette.responses import Response

from lockstep.api.deps import BodyDep, ServicesDep
from lockstep.api.responses import json_response
from lockstep.domain.errors import InvalidRequest
from lockstep.schemas.tokens import TokenRequest

router = APIRouter(tags=["tokens"])


@router.post("/api/v1/token")
async def grant_token(services: ServicesDep, body: BodyDep) -> Response:
    try:
        parsed: Any = orjson.loads(body or b"null")
    except orjson.JSONDecodeError as error:
        raise InvalidRequest.of("body", "is not valid JSON") from error
    if not isinstance(parsed, dict):
        raise InvalidRequest.of("body", "a JSON object is required")
    issued = await services.calls.blocking(
        services.identity.issue_token, TokenRequest.from_body(parsed)
    )
    return json_response({"accessToken": issued.token, "expiresIn": issued.expires_in})
