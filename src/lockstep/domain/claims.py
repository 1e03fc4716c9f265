"""Claims, pure: what a claim (a pvc volume a project's workloads mount) is as measured when it
was looked at, the rules for a new one, how its bytes are shown, and `ClaimStore`, what a
backend that keeps claims of its own answers (the local runtime's, runtimes/local/volumes/
claims.py). Read by the claim service and the claims routes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from lockstep.domain.errors import Violation
from lockstep.schemas.base import is_dns_label

NAME_RULE = (
    "must be a DNS-1123 label: lower-case letters, digits and '-', "
    "starting and ending with a letter or digit, at most 63 characters"
)
_UNITS = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim as measured when it was looked at."""

    name: str
    project_id: str
    size_bytes: int | None
    """What was asked for; None when no size was given."""
    used_bytes: int
    """What its files take on disk (`du`, less the directory itself)."""
    created_at: datetime

    @property
    def over_size(self) -> bool:
        """It uses more than its size (a claim without a size never does)."""
        return self.size_bytes is not None and self.used_bytes > self.size_bytes


class ClaimStore(Protocol):
    """A backend's claims, per project."""

    def create(self, project_id: str, name: str, *, size_bytes: int | None) -> Claim:
        """A new, empty claim; `InvalidRequest` for a name or size `check_claim` refuses,
        `Conflict` when the project already has a claim of that name."""
        ...

    def list(self, project_id: str) -> list[Claim]:
        """The project's claims, by name, each measured now."""
        ...

    def get(self, project_id: str, name: str) -> Claim | None:
        """The claim, measured now; None when the project has none of that name."""
        ...

    def exists(self, project_id: str, name: str) -> bool:
        """Whether the project has the claim (without measuring it)."""
        ...

    def delete(self, project_id: str, name: str) -> bool:
        """Remove the claim and everything in it; False when there is no such claim."""
        ...


def check_claim(name: str, size_bytes: int | None) -> list[Violation]:
    """What is wrong with a new claim's name and size; empty when nothing is."""
    violations: list[Violation] = []
    if not is_dns_label(name):
        violations.append(Violation("name", NAME_RULE))
    if size_bytes is not None and size_bytes < 1:
        violations.append(Violation("size", "must be at least 1 byte"))
    return violations


def readable(count: int) -> str:
    """A byte count for people: in the largest binary unit it reaches, to one decimal
    (`12Gi`, `1.5Mi`, `512`)."""
    value, unit = float(count), ""
    for candidate in _UNITS:
        if value < 1024:
            break
        value, unit = value / 1024, candidate
    text = f"{value:.1f}".removesuffix(".0") if unit else str(count)
    return f"{text}{unit}"
