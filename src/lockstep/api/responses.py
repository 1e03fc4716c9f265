"""Small helpers for JSON responses and request bodies. A large body is parsed on a worker
thread: validating a body of a megabyte takes a tenth of a second, too long to hold the loop."""

from __future__ import annotations

from typing import Any, TypeVar

import orjson
from anyio import to_thread
from pydantic import BaseModel, ValidationError
from starlette.responses import Response

from lockstep.api.errors import violations_of
from lockstep.domain.errors import InvalidRequest
from lockstep.schemas.bounds import RequestBounds

M = TypeVar("M", bound=BaseModel)

ACCEPTED = {"code": 202, "message": "Request has been accepted."}
LARGE_BODY_BYTES = 16 * 1024
"""A body larger than this is checked and parsed on a worker thread (a millisecond or more of
work); a smaller one on the event loop, in less time than a hop to a thread costs."""


def json_response(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


async def parse_body(model: type[M], body: bytes, *, bounds: RequestBounds | None = None) -> M:
    """Validate a JSON body against `model`, under `bounds` (schemas/bounds.py) when given;
    `InvalidRequest` naming each bad field."""
    if len(body) > LARGE_BODY_BYTES:
        return await to_thread.run_sync(_parsed, model, body, bounds)
    return _parsed(model, body, bounds)


def _parsed(model: type[M], body: bytes, bounds: RequestBounds | None) -> M:
    if not body.strip():
        raise InvalidRequest.of("body", "a JSON object is required")
    try:
        return model.model_validate_json(body, context=None if bounds is None else bounds.context())
    except ValidationError as error:
        if any(e["type"] == "json_invalid" for e in error.errors()):
            raise InvalidRequest.of("body", "is not valid JSON") from error
        raise InvalidRequest(violations_of(error)) from error


def page(items: list[Any], *, key: str, offset: int, has_more: bool) -> dict[str, Any]:
    body: dict[str, Any] = {key: items}
    if has_more:
        body["next"] = offset + len(items)
    return body
