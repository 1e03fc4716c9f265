"""Node pools: creation and update requests (`NodepoolCreateFields`, `NodepoolUpdateFields`).

A pool's name is a Kubernetes name (a DNS-1123 label, at most 63 characters); `labelKey` is a
Kubernetes label key (at most 317 characters: a 253-character prefix, '/', a 63-character
name) and `labelValue` a label value (at most 63 characters). The deprecated and
scheduling-tuning fields of the document are accepted and not acted on.
"""

from __future__ import annotations

import re
from typing import Annotated, Any
from uuid import UUID

from pydantic import AfterValidator, Field

from lockstep.schemas.base import WireModel, is_dns_label

LABEL_KEY_MAX = 317
LABEL_VALUE_MAX = 63
_LABEL_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")


def _pool_name(value: str) -> str:
    if not is_dns_label(value):
        raise ValueError(
            "must be a Kubernetes name (DNS-1123 label): at most 63 lowercase letters, digits "
            "and '-', starting and ending with a letter or digit"
        )
    return value


def _label_key(value: str) -> str:
    prefix, _, name = value.rpartition("/")
    if len(value) > LABEL_KEY_MAX or len(prefix) > 253 or not _LABEL_NAME.match(name):
        raise ValueError(
            "must be a Kubernetes label key: an optional DNS prefix and '/', then at most 63 "
            "letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
        )
    return value


def _label_value(value: str) -> str:
    if not _LABEL_NAME.match(value):
        raise ValueError(
            "must be a Kubernetes label value: at most 63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return value


PoolName = Annotated[str, AfterValidator(_pool_name)]
LabelKey = Annotated[str, Field(min_length=1), AfterValidator(_label_key)]
LabelValue = Annotated[str, Field(min_length=1), AfterValidator(_label_value)]


class NodePoolCreateRequest(WireModel):
    name: PoolName
    label_key: LabelKey
    label_value: LabelValue
    cluster_id: UUID
    over_provisioning_ratio: Annotated[int, Field(ge=1, le=5)] | None = None
    placement_strategy: dict[str, Any] | None = None
    gpu_network_acceleration_label_key: str | None = None
    gpu_network_acceleration_detection: str | None = None
    gpu_resource_optimization: dict[str, Any] | None = None
    scheduling_configuration: dict[str, Any] | None = None
    network_topology_id: str | None = None


class NodePoolUpdateRequest(WireModel):
    """PUT and PATCH alike: the label given replaces the pool's (PUT with none keeps it)."""

    label_key: LabelKey | None = None
    label_value: LabelValue | None = None
    over_provisioning_ratio: Annotated[int, Field(ge=1, le=5)] | None = None
    placement_strategy: dict[str, Any] | None = None
    gpu_network_acceleration_label_key: str | None = None
    gpu_network_acceleration_detection: str | None = None
    gpu_resource_optimization: dict[str, Any] | None = None
    scheduling_configuration: dict[str, Any] | None = None
    network_topology_id: str | None = None
