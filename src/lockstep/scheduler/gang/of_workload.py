"""What each pod of a gang asks the scheduler for: CPU cores, memory, GPUs and where it may go;
and a stored workload as the scheduler sees it — its shape (the leader and its workers as two
groups), never a per-pod object."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.quantities import parse_quantity
from lockstep.domain.workload import Workload
from lockstep.scheduler.gang.needs import ONE, ZERO, GpuNeed, PodNeed
from lockstep.scheduler.gang.selectors import selector_of
from lockstep.scheduler.gang.shape import GangShape, NumberedNames, PodGroup
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
    """The workload's gang, derived from its layout (domain/plan.lay_out_gang) in the time its
    specs take to read, whatever its number of workers: one group of pods per run of pods that
    share a spec, named as its plan names them, in the same order. A training's gang is the
    `parallelism` pods admitted together."""
    request = workload.request
    layout = request.layout
    worker, leader = request.spec, request.leader_spec
    together = layout.together
    groups: list[PodGroup] = []
    for group in layout.groups:
        count = min(group.count, together - sum(g.count for g in groups))
        spec = leader if group.runs_leader_spec else worker
        prefix = group.prefix(workload.name)
        names = NumberedNames(prefix, group.first, count)
        groups.append(PodGroup(pod_need(f"{prefix}{group.first}", spec), names))
    specs = (leader, worker) if layout.groups[0].runs_leader_spec else (worker,)
    affinity = next((s.pod_affinity for s in specs if s.pod_affinity and s.pod_affinity.key), None)
    required = None if layout.bounds is None else max(1, min(layout.bounds[0], layout.pods))
    return Gang(GangShape(tuple(groups)), required, affinity)
