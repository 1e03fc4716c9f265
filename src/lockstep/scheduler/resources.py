"""Resource amounts (CPU cores, memory bytes, GPUs) and what a pod or a whole gang requests."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.quantities import parse_quantity
from lockstep.schemas.compute import GpuRequestType
from lockstep.schemas.distributed import PodSpec

ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class Resources:
    cpu: Decimal = ZERO
    memory: Decimal = ZERO
    gpus: Decimal = ZERO

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.memory + other.memory, self.gpus + other.gpus)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory, self.gpus - other.gpus)

    def fits_in(self, available: Resources) -> bool:
        return (
            self.cpu <= available.cpu
            and self.memory <= available.memory
            and self.gpus <= available.gpus
        )

    def shortfall(self, available: Resources) -> list[str]:
        """What is missing, in words, e.g. `4 GPUs requested, 0 available`."""
        missing = []
        for label, wanted, have in (
            ("CPU cores", self.cpu, available.cpu),
            ("bytes of memory", self.memory, available.memory),
            ("GPUs", self.gpus, available.gpus),
        ):
            if wanted > have:
                missing.append(
                    f"{_number(wanted)} {label} requested, {_number(max(have, ZERO))} available"
                )
        return missing


def _number(value: Decimal) -> str:
    return f"{value.normalize():f}"


def pod_request(spec: PodSpec) -> Resources:
    """What one pod asks the scheduler for."""
    compute = spec.compute
    if compute is None:
        return Resources()
    devices = Decimal(compute.gpu_devices_request or 0)
    kind = compute.gpu_request_type
    if kind is GpuRequestType.PORTION or (kind is None and compute.gpu_portion_request is not None):
        gpus = Decimal(str(compute.gpu_portion_request or 0)) * max(devices, Decimal(1))
    elif kind is GpuRequestType.MEMORY or (kind is None and compute.gpu_memory_request is not None):
        gpus = max(devices, Decimal(1))
    else:
        gpus = devices
    memory = parse_quantity(compute.cpu_memory_request) if compute.cpu_memory_request else ZERO
    return Resources(Decimal(str(compute.cpu_core_request or 0)), memory, gpus)


def gang_request(plan: ReplicaPlan) -> Resources:
    """What every pod of the plan asks for together (a gang starts whole or not at all)."""
    total = Resources()
    for replica in plan.replicas:
        total += pod_request(replica.spec)
    return total
