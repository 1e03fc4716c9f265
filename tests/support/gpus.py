"""A GPU reader of the tests' own, handed to `create_app(settings, gpus=…)` on virtual GPU
nodes: every device it is asked about reads busy at a set utilization."""

from __future__ import annotations

from collections.abc import Sequence

from lockstep.domain.gpus import GpuReading

UTILIZATION = 37.0
GPU_MEMORY = 3 * 2**30


class FakeGpus:
    """Every device busy at `utilization` percent with `GPU_MEMORY` bytes used."""

    def __init__(self) -> None:
        self.asked: list[int] = []
        self.utilization = UTILIZATION

    def read(self, indices: Sequence[int]) -> list[GpuReading]:
        self.asked.extend(indices)
        return [GpuReading(i, self.utilization, GPU_MEMORY) for i in indices]

    @property
    def unavailable(self) -> str | None:
        return None

    def close(self) -> None:
        pass
