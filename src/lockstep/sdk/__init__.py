"""lockstep's Python SDK: `Client` and `AsyncClient` (see client.py), each kind's calls
(`Workloads`, `AsyncWorkloads`) and the errors they raise."""

from lockstep.sdk.client import AsyncClient, AsyncWorkloads, Client, Workloads
from lockstep.sdk.errors import (
    ApiError,
    ClientError,
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    ServerError,
    TooManyRequests,
    Unauthorized,
    Unavailable,
    Unreachable,
    WaitTimeout,
    WorkloadEnded,
)
from lockstep.sdk.retry import Retry

__all__ = [
    "ApiError",
    "AsyncClient",
    "AsyncWorkloads",
    "Client",
    "ClientError",
    "Conflict",
    "Forbidden",
    "InvalidRequest",
    "NotFound",
    "Retry",
    "ServerError",
    "TooManyRequests",
    "Unauthorized",
    "Unavailable",
    "Unreachable",
    "WaitTimeout",
    "WorkloadEnded",
    "Workloads",
]
