"""A pod spec's `compute` in Kubernetes terms: requests and limits of CPU and memory, whole
GPUs as `nvidia.com/gpu`, GPU fractions as KAI Scheduler's GPU-sharing annotations, extended
resources, and the memory-backed /dev/shm of `largeShmRequest`.

Called by `pods` for the main container and the pod's annotations and volumes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from lockstep.domain.quantities import parse_quantity
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.settings import SchedulerKind
from lockstep.schemas.compute import Compute, GpuRequestType

GPU_RESOURCE = "nvidia.com/gpu"
GPU_FRACTION = "gpu-fraction"
"""KAI: the share of one device's memory each of the pod's devices gives it."""
GPU_FRACTION_DEVICES = "gpu-fraction-num-devices"
"""KAI: how many devices a fraction applies to (one when absent)."""
GPU_MEMORY = "gpu-memory"
"""KAI: the memory of one device the pod gets, in MiB."""
SHM_VOLUME = "dshm"
SHM_PATH = "/dev/shm"  # noqa: S108 (the container's shared memory, not a temporary file)
_MIB = Decimal(2**20)


@dataclass(frozen=True, slots=True)
class PodCompute:
    """What `compute` puts on the container, the pod's annotations and its volumes."""

    resources: dict[str, dict[str, str]] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    volumes: tuple[dict[str, Any], ...] = ()
    mounts: tuple[dict[str, Any], ...] = ()


def cpu_quantity(cores: float) -> str:
    """Cores as a quantity: `2`, `500m` (a fraction of a millicore is rounded up, as the
    API server would)."""
    millis = Decimal(str(cores)) * 1000
    if millis % 1000 == 0:
        return str(int(millis / 1000))
    return f"{math.ceil(millis)}m"


def gpu_memory_mib(quantity: str) -> int:
    """A GPU memory quantity in whole MiB, rounded up (KAI's `gpu-memory` unit)."""
    return math.ceil(parse_quantity(quantity) / _MIB)


def fraction_text(portion: float) -> str:
    """A portion as the annotation value: `0.5`, `1`."""
    return format(Decimal(str(portion)).normalize(), "f")


def gpu_mode(compute: Compute) -> GpuRequestType | None:
    """Whether the pod asks for a fraction of its devices (by portion or by memory), or,
    None, for whole devices."""
    if compute.gpu_request_type is not None:
        return compute.gpu_request_type
    if compute.gpu_portion_request is not None:
        return GpuRequestType.PORTION
    if compute.gpu_memory_request is not None:
        return GpuRequestType.MEMORY
    return None


def _gpu(compute: Compute, scheduler: SchedulerKind) -> tuple[dict[str, str], dict[str, str]]:
    """(limits, annotations) of the GPU request."""
    devices = compute.gpu_devices_request
    mode = gpu_mode(compute)
    if mode is None:
        return ({GPU_RESOURCE: str(devices)} if devices else {}), {}
    if scheduler is not SchedulerKind.KAI:
        raise PodStartError(
            f"a fractional GPU request (gpuRequestType {mode}) needs KAI Scheduler's GPU "
            f"sharing; this cluster's scheduler is {scheduler}: ask for whole devices"
        )
    annotations: dict[str, str] = {}
    if mode is GpuRequestType.PORTION:
        annotations[GPU_FRACTION] = fraction_text(compute.gpu_portion_request or 0)
        if devices is not None and devices > 1:
            annotations[GPU_FRACTION_DEVICES] = str(devices)
    else:
        annotations[GPU_MEMORY] = str(gpu_memory_mib(compute.gpu_memory_request or "0"))
    return {}, annotations


def pod_compute(compute: Compute | None, scheduler: SchedulerKind) -> PodCompute:
    """The Kubernetes form of one pod's `compute`."""
    if compute is None:
        return PodCompute()
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    if compute.cpu_core_request is not None:
        requests["cpu"] = cpu_quantity(compute.cpu_core_request)
    if compute.cpu_core_limit is not None:
        limits["cpu"] = cpu_quantity(compute.cpu_core_limit)
    if compute.cpu_memory_request is not None:
        requests["memory"] = compute.cpu_memory_request
    if compute.cpu_memory_limit is not None:
        limits["memory"] = compute.cpu_memory_limit
    gpu_limits, annotations = _gpu(compute, scheduler)
    limits |= gpu_limits
    for extended in compute.extended_resources or ():
        if extended.exclude or not extended.resource or extended.quantity is None:
            continue
        limits[extended.resource] = extended.quantity
    resources = {key: value for key, value in (("requests", requests), ("limits", limits)) if value}
    if not compute.large_shm_request:
        return PodCompute(resources=resources, annotations=annotations)
    return PodCompute(
        resources=resources,
        annotations=annotations,
        volumes=({"name": SHM_VOLUME, "emptyDir": {"medium": "Memory"}},),
        mounts=({"name": SHM_VOLUME, "mountPath": SHM_PATH},),
    )
