"""Compute requests of a pod: CPU, memory, whole or fractional GPUs, extended resources."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from lockstep.schemas.base import NonEmpty, Quantity, WireModel


class GpuRequestType(StrEnum):
    PORTION = "portion"
    MEMORY = "memory"


class ExtendedResource(WireModel):
    resource: NonEmpty | None = None
    quantity: Quantity | None = None
    exclude: bool | None = None


class Compute(WireModel):
    cpu_core_limit: float | None = Field(default=None, ge=0)
    cpu_core_request: float | None = Field(default=None, ge=0)
    cpu_memory_limit: Quantity | None = None
    cpu_memory_request: Quantity | None = None
    extended_resources: list[ExtendedResource] | None = None
    gpu_devices_request: int | None = Field(default=None, ge=0, le=2**31 - 1)
    gpu_memory_limit: Quantity | None = None
    gpu_memory_request: Quantity | None = None
    gpu_portion_limit: float | None = Field(default=None, ge=0)
    gpu_portion_request: float | None = Field(default=None, ge=0)
    gpu_request_type: GpuRequestType | None = None
    large_shm_request: bool | None = None
