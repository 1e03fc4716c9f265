"""The organization a workload belongs to: cluster, department, project."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lockstep.domain.pod_security import DEFAULT_LEVEL, PodSecurityLevel


@dataclass(frozen=True, slots=True)
class Cluster:
    id: str
    name: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Department:
    id: str
    name: str
    cluster_id: str
    created_by: str
    created_at: datetime
    updated_at: datetime
    resources: list[dict[str, Any]] = field(default_factory=list)
    description: str = ""


@dataclass(frozen=True, slots=True)
class Project:
    id: str
    name: str
    cluster_id: str
    department_id: str
    created_by: str
    created_at: datetime
    updated_at: datetime
    requested_namespace: str | None = None
    resources: list[dict[str, Any]] = field(default_factory=list)
    pod_security_level: PodSecurityLevel = DEFAULT_LEVEL
    """What its pods may ask (see pod_security.py); an administrator sets it."""
    description: str = ""

    @property
    def namespace(self) -> str:
        """The namespace the project's workloads run in, as Run:ai names it."""
        return self.requested_namespace or f"runai-{self.name}"
