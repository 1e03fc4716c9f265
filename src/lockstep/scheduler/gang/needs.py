"""What a pod asks of a node (CPU cores, memory, GPUs, which nodes it accepts), and those asks
in words for the messages users read."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from lockstep.domain.cluster import Assignment
from lockstep.domain.quantities import binary_quantity
from lockstep.scheduler.gang.selectors import Selector

ZERO = Decimal(0)
ONE = Decimal(1)


@dataclass(frozen=True, slots=True)
class GpuNeed:
    """What a pod asks of GPUs: `devices` devices, each whole, or a `portion` of each, or
    `memory` bytes of each."""

    devices: int = 0
    portion: Decimal = ONE
    memory: Decimal | None = None

    @property
    def whole(self) -> bool:
        return self.memory is None and self.portion >= ONE

    def share_of(self, gpu_memory: Decimal | None) -> Decimal | None:
        """The share of one device it takes (None: its memory is not known)."""
        if self.memory is None:
            return min(self.portion, ONE)
        if not gpu_memory:
            return None
        return min(self.memory / gpu_memory, ONE)

    def in_words(self) -> str:
        if self.memory is not None:
            each = bytes_in_words(self.memory)
            return f"{each} of GPU memory" + (
                f" on each of {self.devices} GPUs" if self.devices > 1 else ""
            )
        if self.whole:
            return count_in_words(Decimal(self.devices), "GPU")
        share = number_in_words(self.portion)
        return f"{share} of a GPU" + (
            f" on each of {self.devices} GPUs" if self.devices > 1 else ""
        )


@dataclass(frozen=True, slots=True)
class PodNeed:
    """What one pod needs of a node, and which nodes it accepts."""

    pod: str
    cpu: Decimal = ZERO
    memory: Decimal = ZERO
    gpu: GpuNeed = field(default_factory=GpuNeed)
    selector: Selector = field(default_factory=Selector)


GangPlacement = dict[str, Assignment]
"""Pod name → assignment, for every pod of a gang."""


def size_of(need: PodNeed) -> tuple[Decimal, Decimal, Decimal]:
    """How large a pod is, to place the largest first: its GPUs, then CPU, then memory."""
    gpus = Decimal(need.gpu.devices) * (need.gpu.portion if need.gpu.memory is None else ONE)
    return gpus, need.cpu, need.memory


def pod_in_words(need: PodNeed) -> str:
    """What one pod asks, in words: `2 GPUs, 4 CPU cores`."""
    parts = []
    if need.gpu.devices:
        parts.append(need.gpu.in_words())
    if need.cpu:
        parts.append(count_in_words(need.cpu, "CPU core"))
    if need.memory:
        parts.append(f"{bytes_in_words(need.memory)} of memory")
    return ", ".join(parts) or "room"


def bytes_in_words(amount: Decimal) -> str:
    return binary_quantity(int(max(amount, ZERO)))


def count_in_words(amount: Decimal, noun: str) -> str:
    return f"{number_in_words(amount)} {noun}{'' if amount == ONE else 's'}"


def number_in_words(value: Decimal) -> str:
    return f"{value.normalize():f}"
