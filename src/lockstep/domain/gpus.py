"""GPU readings: what one GPU device is doing (its utilization and the memory used on it), and
the reader that answers with them. A machine without GPUs yields no readings at all: they are
absent from the answers, never zero. Readers live with the local runtime (runtimes/local/gpus.py);
tests hand the server one of their own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class GpuReading:
    index: int
    utilization_percent: float
    memory_used_bytes: int


class GpuReader(Protocol):
    def read(self, indices: Sequence[int]) -> list[GpuReading]:
        """The devices among `indices` that can be read (by CUDA index)."""
        ...

    @property
    def unavailable(self) -> str | None:
        """Why no device can be read; None where they can."""
        ...

    def close(self) -> None: ...
