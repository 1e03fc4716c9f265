"""What the scheduler knows of the organisation: departments and projects with their quotas.

A candidate or holder whose project is not in the `Organization` (or a project whose
department is not) has no quotas there: deserved 0, no limit, weight 1 in every pool. An
`Organization` with no department and no project (`NO_ORGANIZATION`) puts no quotas in
force: every project is unlimited, as before quotas.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from lockstep.domain.quotas import Quotas


class OrgType(StrEnum):
    """Which level of the hierarchy a quota belongs to (a pending message's `orgType`)."""

    PROJECT = "project"
    DEPARTMENT = "department"


@dataclass(frozen=True, slots=True)
class OrgUnit:
    """A department or a project: its id, its name (for messages) and its quotas."""

    id: str
    name: str
    quotas: Quotas = field(default_factory=Quotas)
    parent: str | None = None
    """A project's department id (None: the project stands directly under the cluster)."""


@dataclass(frozen=True, slots=True)
class Organization:
    """Every department and project, keyed by id."""

    departments: Mapping[str, OrgUnit] = field(default_factory=dict)
    projects: Mapping[str, OrgUnit] = field(default_factory=dict)


NO_ORGANIZATION = Organization()
