"""The bounds of what a request may hold, so that no request can hurt the server.

Every body is first checked storable (api/storable_json.py): integers within a signed 64-bit
integer, numbers finite, strings without NUL characters (PostgreSQL cannot store one). A list
request has at most `MAX_FILTER_CLAUSES` `filterBy` clauses.

The bounds of fields are declared here as types (`WorkerCount`, `CommandLine`, `at_most(…)`)
and checked when a request is parsed under `RequestBounds.context()`, as the server parses
what it is asked. They are bounds on what may be asked, not on what was: a model parsed without
them (a stored workload read back, the SDK reading the server's answers) is held to none, so
that a site lowering a limit, or a stricter lockstep, never makes stored workloads unreadable.
The site's own (`RequestBounds`, from `LOCKSTEP_MAX_*`) may be raised; the others are the
store's, Kubernetes' and Linux's. Quantities (`cpuMemoryRequest`, sizes) are held to
Kubernetes' largest, 2^63-1, where they are parsed (domain/rules.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, StringConstraints, ValidationInfo

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
INT64_RULE = f"must be an integer from {INT64_MIN} to {INT64_MAX} (a signed 64-bit integer)"
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
"""Kubernetes' bound on counts and durations in seconds, and on uids and gids; and the
Run:ai document's on `offset`."""

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
        """The validation context under which a request is held to the bounds."""
        return {_CONTEXT_KEY: self}


def bounds_in(info: ValidationInfo) -> RequestBounds | None:
    """The bounds a model is being validated under, if any."""
    context = info.context
    if not isinstance(context, dict):
        return None
    bounds = context.get(_CONTEXT_KEY)
    return bounds if isinstance(bounds, RequestBounds) else None


def when_requested(rule: Callable[[Any, RequestBounds], str | None]) -> AfterValidator:
    """A validator holding a value to `rule` (which names what the value breaks, or None)
    when a request is parsed under bounds."""

    def check(value: Any, info: ValidationInfo) -> Any:
        bounds = bounds_in(info)
        if bounds is not None:
            broken = rule(value, bounds)
            if broken is not None:
                raise ValueError(broken)
        return value

    return AfterValidator(check)


def between(low: int, high: int) -> AfterValidator:
    """An integer from `low` to `high`, in a request."""

    def rule(value: int, _: RequestBounds) -> str | None:
        if value < low:
            return f"must be greater than or equal to {low}"
        if value > high:
            return f"must be less than or equal to {high}"
        return None

    return when_requested(rule)


def at_most_characters(limit: int) -> AfterValidator:
    """A string of at most `limit` characters, in a request."""
    return when_requested(
        lambda value, _: None if len(value) <= limit else f"must be at most {limit} characters"
    )


def _site_limit(value: int, bounds: RequestBounds) -> str | None:
    if value <= bounds.max_workers:
        return None
    return f"must be less than or equal to {bounds.max_workers} (this server's limit)"


def _command_length(value: str, bounds: RequestBounds) -> str | None:
    if len(value) <= bounds.max_command_length:
        return None
    return f"must be at most {bounds.max_command_length} characters (this server's limit)"


WorkerCount = Annotated[int, when_requested(_site_limit)]
"""`numWorkers`, `minReplicas`, `maxReplicas`: at most LOCKSTEP_MAX_WORKERS."""
CommandLine = Annotated[str, StringConstraints(min_length=1), when_requested(_command_length)]
"""`command` or `args`: at most LOCKSTEP_MAX_COMMAND_LENGTH characters."""
Count32 = Annotated[int, between(INT32_MIN, INT32_MAX)]
"""A count or a duration in seconds, as Kubernetes holds one (32 bits)."""
Id32 = Annotated[int, between(0, INT32_MAX)]
"""A uid or a gid, within Kubernetes' range."""
PORT_RANGE = between(1, 65535)
"""A port this machine (or a Service) can have."""
StoredName = Annotated[str, at_most_characters(255)]
"""A name the store keeps in a column of its own (a workload's category, priority class)."""
Image = Annotated[str, StringConstraints(min_length=1), at_most_characters(1024)]
"""An image reference, as long as the store keeps one for each pod."""
MAX_ENVIRONMENT_NAME_LENGTH = 253
"""Kubernetes' longest ConfigMap and Secret key, which `envFrom` makes a variable's name."""
EnvironmentName = Annotated[
    str, StringConstraints(min_length=1), at_most_characters(MAX_ENVIRONMENT_NAME_LENGTH)
]
"""The name of a pod's environment variable."""
MAX_PATH_LENGTH = 4096
"""Linux's PATH_MAX (4,096 bytes, the longest path the kernel resolves), counted here in
characters."""
FilePath = Annotated[str, StringConstraints(min_length=1), at_most_characters(MAX_PATH_LENGTH)]
"""A path in a pod or on a machine: a working directory, where a volume is mounted, what a
host path or an NFS export names."""

MAX_EMAIL_LENGTH = 254
"""The longest user email (RFC 5321's limit on an address)."""
MAX_PASSWORD_LENGTH = 256
"""The longest password a user may set or send."""

# Identity providers (/api/v1/idps).
MAX_ALIAS_LENGTH = 63
MAX_SCOPES = 32
MAX_SCOPE_LENGTH = 255
MAX_URL_LENGTH = 2048
MAX_CLIENT_ID_LENGTH = 1024
MAX_CLIENT_SECRET_LENGTH = 4096
MAX_CLAIM_NAME_LENGTH = 255
MAX_CLAIM_VALUES = 64
