"""The bounds of what a request may hold, so that no request can hurt the server.

Fixed bounds, the store's: integers fit a signed 64-bit integer, numbers are finite and strings
hold no NUL character (PostgreSQL cannot store one); a list has at most `MAX_FILTER_CLAUSES`
`filterBy` clauses. The bounds a site may raise (`RequestBounds`, from `LOCKSTEP_MAX_*`) are
checked by the schemas' own validators when a request is parsed with `RequestBounds.context()`
(the server does): a model parsed without it, as the SDK parses the server's answers, is held
to none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationInfo

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1
"""Kubernetes' bound on counts and durations in seconds (and on uids and gids)."""
INT64_RULE = f"must be an integer from {INT64_MIN} to {INT64_MAX} (a signed 64-bit integer)"

MAX_FILTER_CLAUSES = 100
"""`filterBy` clauses a list request may hold, across all its `filterBy` parameters."""

DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024
DEFAULT_MAX_WORKERS = 1000
DEFAULT_MAX_COMMAND_LENGTH = 10_000
"""Run:ai's own limit on `command` and on `args`."""

_CONTEXT_KEY = "lockstep.bounds"


@dataclass(frozen=True, slots=True)
class RequestBounds:
    """The bounds a site may raise: the size of a request's body, the workers of a workload
    (`numWorkers`, `minReplicas`, `maxReplicas`: a workload has at most this many workers plus
    its master) and the length of a pod's `command` and of its `args`."""

    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    max_workers: int = DEFAULT_MAX_WORKERS
    max_command_length: int = DEFAULT_MAX_COMMAND_LENGTH

    def context(self) -> dict[str, Any]:
        """The validation context under which the schemas check these bounds."""
        return {_CONTEXT_KEY: self}


def bounds_in(info: ValidationInfo) -> RequestBounds | None:
    """The bounds a model is being validated under, if any."""
    context = info.context
    if not isinstance(context, dict):
        return None
    bounds = context.get(_CONTEXT_KEY)
    return bounds if isinstance(bounds, RequestBounds) else None
