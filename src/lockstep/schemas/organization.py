"""Projects, departments and clusters: creation requests (responses are built in api/views.py).

Names and requested namespaces become Kubernetes namespaces and queues, so they follow
Kubernetes' DNS-1123 label rules. `resources[]` follows the document's `ResourcesNullable`:
per node pool, each of `gpu`, `cpu` and `memory` has a `deserved` share (-1: unlimited), a
`limit` (-1 or absent: none) and an `overQuotaWeight`, all finite numbers from 0 to
`MAX_QUOTA_AMOUNT`, with `limit` at least `deserved`; at most `MAX_RESOURCE_ENTRIES` entries.
The services check that each entry's node pool exists (services/quota_resources.py); the
entries are stored and returned in their wire form.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Annotated, Any, Self
from uuid import UUID

from annotated_types import Len
from pydantic import AfterValidator, BeforeValidator, StringConstraints, model_validator

from lockstep.schemas.base import StringId, WireModel, is_dns_label
from lockstep.schemas.security import PodSecurityLevel

NO_LIMIT = -1
"""A `limit` of -1 (or none) puts no ceiling on what the project may hold; a `deserved` of -1
is unlimited (everything asked is within the deserved share)."""

MAX_QUOTA_AMOUNT = 1e12
"""The largest `deserved`, `limit` or `overQuotaWeight` (GPUs, millicores, memory units)."""

MAX_RESOURCE_ENTRIES = 64
"""The most entries `resources[]` may have (one per node pool, and one without a pool)."""

PROJECT_NAME_MAX = 57
"""A project without `requestedNamespace` runs in `runai-<name>`, itself a DNS-1123 label."""


def _dns_label(value: str) -> str:
    if not is_dns_label(value):
        raise ValueError(
            "must be a Kubernetes name (DNS-1123 label): at most 63 lowercase letters, digits "
            "and '-', starting and ending with a letter or digit"
        )
    return value


KubernetesName = Annotated[str, AfterValidator(_dns_label)]


def _project_name(value: str) -> str:
    _dns_label(value)
    if len(value) > PROJECT_NAME_MAX:
        raise ValueError(
            f"must be at most {PROJECT_NAME_MAX} characters, so that its namespace "
            f"runai-<name> is a Kubernetes name"
        )
    return value


def _finite(value: object) -> object:
    """JSON numbers only (not booleans), and finite ones."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number")
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return float(value)


Amount = Annotated[float, BeforeValidator(_finite)]


class MemoryUnits(StrEnum):
    MIB = "Mib"
    MB = "MB"
    GB = "GB"


class NodePoolReference(WireModel):
    id: StringId
    name: str | None = None


class ResourceQuota(WireModel):
    """One resource's quota in one node pool."""

    deserved: Amount | None = None
    limit: Amount | None = None
    over_quota_weight: Amount | None = None

    @model_validator(mode="after")
    def _in_range(self) -> Self:
        for field in ("deserved", "limit", "over_quota_weight"):
            value = getattr(self, field)
            name = "overQuotaWeight" if field == "over_quota_weight" else field
            if value is not None and value > MAX_QUOTA_AMOUNT:
                raise ValueError(f"{name} must be at most {MAX_QUOTA_AMOUNT:g}")
        if self.over_quota_weight is not None and self.over_quota_weight < 0:
            raise ValueError("overQuotaWeight must be greater than or equal to 0")
        if self.deserved is not None and self.deserved < 0 and self.deserved != NO_LIMIT:
            raise ValueError("deserved must be -1 (unlimited) or greater than or equal to 0")
        if self.limit is not None and self.limit != NO_LIMIT:
            if self.limit < 0:
                raise ValueError("limit must be -1 (no limit) or greater than or equal to 0")
            if self.deserved == NO_LIMIT:
                raise ValueError("limit must be -1 (no limit) when deserved is -1 (unlimited)")
            if self.deserved is not None and self.limit < self.deserved:
                raise ValueError(
                    f"limit ({self.limit:g}) must be -1 (no limit) or at least "
                    f"deserved ({self.deserved:g})"
                )
        return self


class MemoryQuota(ResourceQuota):
    units: MemoryUnits


class NodePoolResources(WireModel):
    """`resources[]`: the quotas of one node pool."""

    node_pool: NodePoolReference | None = None
    gpu: ResourceQuota | None = None
    cpu: ResourceQuota | None = None
    memory: MemoryQuota | None = None
    priority: str | None = None

    def stored(self) -> dict[str, Any]:
        """The wire form as stored and returned: what was sent, with the document's default
        GPU share (`gpu.deserved` 0) where it was left out."""
        wire = self.to_wire()
        gpu = dict(wire.get("gpu") or {})
        if gpu.get("deserved") is None:
            gpu["deserved"] = 0
        wire["gpu"] = gpu
        return wire


ResourceList = Annotated[list[NodePoolResources], Len(max_length=MAX_RESOURCE_ENTRIES)]


def _resources_wire(resources: list[NodePoolResources] | None) -> list[dict[str, Any]]:
    return [r.stored() for r in resources or ()]


class ProjectCreationRequest(WireModel):
    name: Annotated[str, StringConstraints(min_length=1), AfterValidator(_project_name)]
    cluster_id: UUID
    description: str | None = None
    parent_id: StringId | None = None
    requested_namespace: KubernetesName | None = None
    enforce_runai_scheduler: bool | None = None
    resources: ResourceList
    scheduling_rules: dict[str, Any] | None = None
    default_node_pools: list[str] | None = None
    node_types: dict[str, Any] | None = None
    pod_security_level: PodSecurityLevel | None = None
    """An extension: what the project's pods may ask (lockstep.domain.pod_security);
    baseline when absent."""

    def resources_wire(self) -> list[dict[str, Any]]:
        """`resources` as stored and returned: camelCase, only what was sent."""
        return _resources_wire(self.resources)


class DepartmentCreationRequest(WireModel):
    name: KubernetesName
    cluster_id: UUID
    description: str | None = None
    resources: ResourceList | None = None
    scheduling_rules: dict[str, Any] | None = None
    default_node_pools: list[str] | None = None
    node_types: dict[str, Any] | None = None
    overtime_data: dict[str, Any] | None = None

    def resources_wire(self) -> list[dict[str, Any]]:
        """`resources` as stored and returned: camelCase, only what was sent."""
        return _resources_wire(self.resources)


class ProjectUpdateRequest(WireModel):
    """`PUT /org-unit/projects/{projectId}`: the document's updatable fields."""

    description: str | None = None
    enforce_runai_scheduler: bool | None = None
    resources: ResourceList
    scheduling_rules: dict[str, Any] | None = None
    default_node_pools: list[str] | None = None
    node_types: dict[str, Any] | None = None

    def resources_wire(self) -> list[dict[str, Any]]:
        return _resources_wire(self.resources)


class DepartmentUpdateRequest(WireModel):
    """`PUT /org-unit/departments/{departmentId}`: the document's updatable fields."""

    description: str | None = None
    resources: ResourceList | None = None
    scheduling_rules: dict[str, Any] | None = None
    default_node_pools: list[str] | None = None
    node_types: dict[str, Any] | None = None

    def resources_wire(self) -> list[dict[str, Any]] | None:
        return None if self.resources is None else _resources_wire(self.resources)


class ResourcesUpdateRequest(WireModel):
    """`PUT`/`PATCH /org-unit/projects/{projectId}/resources`: the body is the bare array,
    read as this object's `resources` (so that errors name `resources[i]…`)."""

    resources: ResourceList

    def resources_wire(self) -> list[dict[str, Any]]:
        return _resources_wire(self.resources)

    def resources_patch(self) -> list[dict[str, Any]]:
        """The entries as sent, with no default filled in (a PATCH changes only those)."""
        return [r.to_wire() for r in self.resources]
