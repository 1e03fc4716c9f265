"""Projects, departments and clusters: creation requests (responses are built in api/views.py)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from lockstep.schemas.base import NonEmpty, StringId, WireModel
from lockstep.schemas.security import PodSecurityLevel


class ProjectCreationRequest(WireModel):
    name: NonEmpty
    cluster_id: UUID
    parent_id: StringId | None = None
    requested_namespace: NonEmpty | None = None
    enforce_runai_scheduler: bool | None = None
    resources: list[dict[str, Any]]
    scheduling_rules: dict[str, Any] | None = None
    default_node_pools: list[str] | None = None
    node_types: dict[str, Any] | None = None
    pod_security_level: PodSecurityLevel | None = None
    """An extension: what the project's pods may ask (lockstep.domain.pod_security);
    baseline when absent."""


class DepartmentCreationRequest(WireModel):
    name: NonEmpty
    cluster_id: UUID
    resources: list[dict[str, Any]] | None = None
    scheduling_rules: dict[str, Any] | None = None
    default_node_pools: list[str] | None = None
    node_types: dict[str, Any] | None = None
    overtime_data: dict[str, Any] | None = None
