"""The one place where errors become HTTP responses, all in the Run:ai error body
`{"code", "message"}`. A client never sees a traceback; unexpected errors are logged."""

from __future__ import annotations

import logging
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Match

from lockstep.domain.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    LockstepError,
    MetricsUnavailable,
    NotFound,
    ProviderFailed,
    StoreUnavailable,
    TooManyRequests,
    Unauthenticated,
    Violation,
)

log = logging.getLogger(__name__)

STATUS: dict[type[LockstepError], int] = {
    InvalidRequest: 400,
    Unauthenticated: 401,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    TooManyRequests: 429,
    StoreUnavailable: 503,
    MetricsUnavailable: 503,
    ProviderFailed: 502,
}


def error_response(
    code: int,
    message: str,
    *,
    details: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    body: dict[str, Any] = {"code": code, "message": message}
    if details:
        body["details"] = details
    if code == 401:
        headers = {"WWW-Authenticate": "Bearer", **(headers or {})}
    if code == 503:
        headers = {"Retry-After": "1", **(headers or {})}
    return Response(
        orjson.dumps(body), status_code=code, media_type="application/json", headers=headers
    )


def _field(location: tuple[int | str, ...]) -> str:
    path = ""
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "body"


def _rule(error: Any) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return "is not a known field"
    message = str(error["msg"])
    if message.startswith("Value error, "):
        message = message.removeprefix("Value error, ")
    return message[0].lower() + message[1:] if message else kind


def violations_of(
    error: ValidationError | RequestValidationError, *, prefix: tuple[str, ...] = ()
) -> list[Violation]:
    """Pydantic errors as violations naming the camelCase field."""
    violations = []
    for item in error.errors():
        location = tuple(item["loc"])
        if location and location[0] in {"body", "query", "path"}:
            location = location[1:]
        violations.append(Violation(_field(prefix + location), _rule(item)))
    return violations


HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> list[str]:
    """The methods some route serves at the request's path (an endpoint's methods are often
    served by several routes), for a 405's `Allow` header."""
    routes = request.app.router.routes
    return [
        method
        for method in HTTP_METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes
        )
    ]


def install(app: FastAPI) -> None:
    @app.exception_handler(LockstepError)
    async def _known(_: Request, error: LockstepError) -> Response:
        status = next((code for kind, code in STATUS.items() if isinstance(error, kind)), 500)
        details = None
        if isinstance(error, InvalidRequest) and len(error.violations) > 1:
            details = "\n".join(str(v) for v in error.violations)
        headers = None
        if isinstance(error, TooManyRequests):
            headers = {"Retry-After": str(error.retry_after_seconds)}
        return error_response(status, error.message, details=details, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _request(_: Request, error: RequestValidationError) -> Response:
        violations = violations_of(error)
        return error_response(400, "; ".join(str(v) for v in violations))

    @app.exception_handler(HTTPException)
    async def _http(request: Request, error: HTTPException) -> Response:
        if error.status_code == 405:
            allowed = allowed_methods(request)
            return error_response(
                405,
                f"method {request.method} is not allowed on this endpoint; "
                f"allowed: {', '.join(allowed)}",
                headers={"Allow": ", ".join(allowed)},
            )
        messages = {404: "no such endpoint"}
        return error_response(error.status_code, messages.get(error.status_code, str(error.detail)))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, error: Exception) -> Response:
        log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=error)
        return error_response(500, "lockstep hit an unexpected error; it has been logged")
