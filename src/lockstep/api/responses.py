"""Small helpers for JSON responses and request bodies."""

from __future__ import annotations

from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError
from starlette.responses import Response

from lockstep.api.errors import violations_of
from lockstep.domain.errors import InvalidRequest

M = TypeVar("M", bound=BaseModel)

ACCEPTED = {"code": 202, "message": "Request has been accepted."}


def json_response(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


def parse_body(model: type[M], body: bytes) -> M:
    """Validate a JSON body against `model`; `InvalidRequest` naming each bad field."""
    if not body.strip():
        raise InvalidRequest.of("body", "a JSON object is required")
    try:
        return model.model_validate_json(body)
    except ValidationError as error:
        if any(e["type"] == "json_invalid" for e in error.errors()):
            raise InvalidRequest.of("body", "is not valid JSON") from error
        raise InvalidRequest(violations_of(error)) from error


def page(items: list[Any], *, key: str, offset: int, has_more: bool) -> dict[str, Any]:
    body: dict[str, Any] = {key: items}
    if has_more:
        body["next"] = offset + len(items)
    return body
