"""What the SDK raises: one exception per kind of answer a caller handles differently, each
carrying the server's message (Run:ai's error body `{"code", "message"}`), and those of `wait`
(the workload ended otherwise, or the time ran out)."""

from __future__ import annotations

from typing import Any

import httpx


class ClientError(Exception):
    """Anything that went wrong talking to lockstep."""


class Unreachable(ClientError):
    """No answer: the server could not be reached (after the retries idempotent calls get)."""


class ApiError(ClientError):
    """lockstep answered with an error."""

    def __init__(self, status: int, message: str, *, details: list[Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details or []


class InvalidRequest(ApiError):
    """400: the request breaks a rule; the message names the field and the rule."""


class Unauthorized(ApiError):
    """401: no valid token, or the credentials were refused."""


class Forbidden(ApiError):
    """403: the caller may not do this in that project."""


class NotFound(ApiError):
    """404: no such workload (or project, pod, …)."""


class Conflict(ApiError):
    """409: e.g. a live workload of that name exists in the project."""


class TooManyRequests(ApiError):
    """429: asked more often than the server allows (checks of a secret, at the token endpoint);
    the same call may succeed after the answer's `Retry-After` seconds."""


class Unavailable(ApiError):
    """503: the server is up but cannot serve now (its store is unreachable)."""


class ServerError(ApiError):
    """Any other error status."""


class WaitTimeout(ClientError):
    """`wait` gave up: the workload did not reach the phase in time."""


class WorkloadEnded(ClientError):
    """`wait` saw the workload end (Completed or Failed) in a phase that was not asked for."""

    def __init__(self, workload: dict[str, Any]) -> None:
        super().__init__(
            f"workload {workload.get('name')} ended {workload.get('phase')}: "
            f"{workload.get('phaseMessage') or ''}".rstrip(": ")
        )
        self.workload = workload


_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: InvalidRequest,
    429: TooManyRequests,
    503: Unavailable,
}


def error_from(response: httpx.Response) -> ApiError:
    """The exception for an error response, with the server's message when it sent one."""
    message = response.reason_phrase or f"HTTP {response.status_code}"
    details: list[Any] = []
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        message = str(body.get("message") or body.get("detail") or message)
        found = body.get("details")
        details = found if isinstance(found, list) else []
    kind = _BY_STATUS.get(response.status_code, ServerError)
    return kind(response.status_code, message, details=details)
