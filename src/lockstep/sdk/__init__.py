"""lockstep's Python SDK: `Client` and `AsyncClient` (see client.py) and the errors they
raise."""

from lockstep.sdk.client import AsyncClient, Client, WaitTimeout, WorkloadEnded
from lockstep.sdk.errors import (
    ApiError,
    ClientError,
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    ServerError,
    Unauthorized,
    Unavailable,
    Unreachable,
)
from lockstep.sdk.retry import Retry

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "ClientError",
    "Conflict",
    "Forbidden",
    "InvalidRequest",
    "NotFound",
    "Retry",
    "ServerError",
    "Unauthorized",
    "Unavailable",
    "Unreachable",
    "WaitTimeout",
    "WorkloadEnded",
]
