"""Typed errors of lockstep, shared by every layer and mapped to HTTP in one place (api/errors.py).

Permanent errors describe a request or a state that will not change by retrying; transient ones
(`StoreUnavailable`) are worth retrying with a delay. The SDK raises the same classes.
"""

from __future__ import annotations

from dataclasses import dataclass


class LockstepError(Exception):
    """Base of every error lockstep raises on purpose."""

    transient = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule of a request: the field's path in camelCase and the rule it breaks."""

    field: str
    rule: str

    def __str__(self) -> str:
        return f"{self.field}: {self.rule}" if self.field else self.rule


class InvalidRequest(LockstepError):
    """The request breaks the schema or a semantic rule; nothing was stored."""

    def __init__(self, violations: list[Violation]) -> None:
        if not violations:
            raise ValueError("an InvalidRequest needs at least one violation")
        super().__init__("; ".join(str(v) for v in violations))
        self.violations = violations

    @classmethod
    def of(cls, field: str, rule: str) -> InvalidRequest:
        return cls([Violation(field, rule)])


class Unauthenticated(LockstepError):
    """No valid bearer token (missing, malformed, wrongly signed or expired) or bad credentials."""


class Forbidden(LockstepError):
    """The caller's access rules do not allow the action in that scope."""


class NotFound(LockstepError):
    """No such resource (or it was deleted)."""


class Conflict(LockstepError):
    """The request conflicts with the current state, e.g. a name already in use."""


class TooManyRequests(LockstepError):
    """The caller asked more often than the server allows; the same request may succeed after
    `retry_after_seconds`."""

    transient = True

    def __init__(self, message: str, *, retry_after_seconds: int) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class StoreUnavailable(LockstepError):
    """The database cannot be reached right now; retrying later may succeed."""

    transient = True


class SealBroken(LockstepError):
    """A sealed (encrypted) value could not be opened: it was sealed with another key, or
    altered since. Retrying does not help; the key or the stored value must be put right."""


class MetricsUnavailable(LockstepError):
    """Measured metrics cannot be had: the runtime has no source of them configured (the
    Kubernetes runtime needs a Prometheus to ask), or the Prometheus cannot be reached,
    answers late, refuses the query or answers something else than its API's."""


class ProviderFailed(LockstepError):
    """An identity provider could not be reached, or answered what a sign-in cannot accept
    (its discovery document, its keys, its tokens)."""

    transient = True
