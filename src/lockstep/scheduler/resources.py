"""What each pod of a gang asks the scheduler for: CPU cores, memory, GPUs and where it may go."""

from __future__ import annotations

from decimal import Decimal

from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.quantities import parse_quantity
from lockstep.scheduler.placement import ONE, ZERO, GpuNeed, PodNeed
from lockstep.scheduler.selectors import selector_of
from lockstep.schemas.compute import GpuRequestType
from lockstep.schemas.distributed import PodSpec
from lockstep.schemas.pod import PodAffinity


def pod_need(pod: str, spec: PodSpec) -> PodNeed:
    """What one pod asks for. Limits are not requests: the scheduler reserves requests."""
    compute = spec.compute
    selector = selector_of(spec)
    if compute is None:
        return PodNeed(pod, selector=selector)
    memory = parse_quantity(compute.cpu_memory_request) if compute.cpu_memory_request else ZERO
    return PodNeed(
        pod,
        cpu=Decimal(str(compute.cpu_core_request or 0)),
        memory=memory,
        gpu=_gpu_need(spec),
        selector=selector,
    )


def _gpu_need(spec: PodSpec) -> GpuNeed:
    compute = spec.compute
    assert compute is not None
    devices = compute.gpu_devices_request or 0
    kind = compute.gpu_request_type
    if kind is GpuRequestType.PORTION or (kind is None and compute.gpu_portion_request is not None):
        portion = Decimal(str(compute.gpu_portion_request or 0))
        if portion == ZERO:
            return GpuNeed()
        return GpuNeed(devices=max(devices, 1), portion=min(portion, ONE))
    if kind is GpuRequestType.MEMORY or (kind is None and compute.gpu_memory_request is not None):
        if compute.gpu_memory_request is None:
            return GpuNeed()
        return GpuNeed(devices=max(devices, 1), memory=parse_quantity(compute.gpu_memory_request))
    return GpuNeed(devices=devices)


def gang_needs(plan: ReplicaPlan) -> list[PodNeed]:
    """Every pod of the plan (a gang starts whole or not at all)."""
    return [pod_need(replica.pod_name, replica.spec) for replica in plan.replicas]


def gang_affinity(plan: ReplicaPlan) -> PodAffinity | None:
    """The pod affinity that keeps the gang together: the first a replica's spec sets."""
    for replica in plan.replicas:
        if replica.spec.pod_affinity is not None and replica.spec.pod_affinity.key:
            return replica.spec.pod_affinity
    return None
