"""What each pod of a gang asks the scheduler for: CPU cores, memory, GPUs and where it may go;
and a stored workload as the scheduler sees it — its shape (the leader and its workers as two
groups), never a per-pod object."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.plan import (
    LEADER_ROLE,
    SINGLE_POD_ROLE,
    ReplicaPlan,
    Role,
    elastic_bounds,
    leader_spec,
    pod_name,
    single_pod_counts,
)
from lockstep.domain.quantities import parse_quantity
from lockstep.domain.workload import Workload
from lockstep.scheduler.gang.needs import ONE, ZERO, GpuNeed, PodNeed
from lockstep.scheduler.gang.selectors import selector_of
from lockstep.scheduler.gang.shape import GangShape, NumberedNames, PodGroup
from lockstep.schemas.compute import GpuRequestType
from lockstep.schemas.distributed import DistributedFramework, MasterSpec, PodSpec, WorkerSpec
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
    """Every pod admitted together (a gang starts whole or not at all): all of the plan's, or
    a training's first `parallelism` (its later pods run where those ran)."""
    return [pod_need(r.pod_name, r.spec) for r in plan.replicas[: plan.gang_size]]


def gang_affinity(plan: ReplicaPlan) -> PodAffinity | None:
    """The pod affinity that keeps the gang together: the first a replica's spec sets."""
    for replica in plan.replicas:
        if replica.spec.pod_affinity is not None and replica.spec.pod_affinity.key:
            return replica.spec.pod_affinity
    return None


@dataclass(frozen=True, slots=True)
class Gang:
    """A workload as the scheduler sees it."""

    shape: GangShape
    required: int | None
    """An elastic gang: how many of its pods (the leader first) must start together."""
    affinity: PodAffinity | None


def gang_of(workload: Workload) -> Gang:
    """The workload's gang, read from its stored request in the time its spec takes to read,
    whatever its number of workers; its pods are named as its plan (domain/plan.py) names
    them, in the same order."""
    if workload.kind is not WorkloadKind.DISTRIBUTED:
        return _single_pod_gang(workload)
    spec = WorkerSpec.model_validate(workload.request.get("spec") or {}, strict=False)
    workers = spec.num_workers or 1
    bounds = elastic_bounds(spec)
    if bounds is not None:
        # As the plan decides it: an elastic PyTorch gang is its worker pods only, worker-0
        # leading, and starts with minReplicas of them.
        prefix = f"{workload.name}-{Role.WORKER.value}-"
        elastic = PodGroup(pod_need(f"{prefix}0", spec), NumberedNames(prefix, 0, workers))
        affinity = spec.pod_affinity if spec.pod_affinity and spec.pod_affinity.key else None
        return Gang(GangShape((elastic,)), max(1, min(bounds[0], workers)), affinity)
    master = workload.request.get("masterSpec")
    leader = leader_spec(
        spec,
        master_spec_same_as_worker=workload.request.get("masterSpecSameAsWorker"),
        master_spec=None if master is None else MasterSpec.model_validate(master, strict=False),
    )
    framework = spec.distributed_framework or DistributedFramework.PYTORCH
    role = LEADER_ROLE[framework]
    first_worker = 1 if role is Role.WORKER else 0
    leader_name = pod_name(workload.name, role, 0)
    shape = GangShape(
        (
            PodGroup(pod_need(leader_name, leader), (leader_name,)),
            PodGroup(
                pod_need(pod_name(workload.name, Role.WORKER, first_worker), spec),
                NumberedNames(f"{workload.name}-{Role.WORKER.value}-", first_worker, workers),
            ),
        )
    )
    affinities = (s.pod_affinity for s in (leader, spec) if s.pod_affinity is not None)
    affinity = next((a for a in affinities if a.key), None)
    return Gang(shape, None, affinity)


def _single_pod_gang(workload: Workload) -> Gang:
    """A training's `parallelism` pods, admitted together; a workspace's one pod."""
    spec = workload.spec()
    _, parallelism = single_pod_counts(spec)
    first = pod_name(workload.name, SINGLE_POD_ROLE[workload.kind], 0)
    names = NumberedNames(f"{workload.name}-", 0, parallelism)
    affinity = spec.pod_affinity if spec.pod_affinity and spec.pod_affinity.key else None
    return Gang(GangShape((PodGroup(pod_need(first, spec), names),)), None, affinity)
