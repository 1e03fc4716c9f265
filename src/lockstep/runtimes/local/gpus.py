"""What each GPU device of this machine is doing: its utilization and the memory used on it.

`GpuReader` (domain/gpus.py) is what the sampler asks; `NvmlReader` answers through NVIDIA's NVML
(`nvidia-ml-py`, imported only when a reader is opened), `NoGpus` where there is none and
says why. A machine without GPUs yields no GPU figures at all: they are absent from the
answers, never zero.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from types import ModuleType

from lockstep.domain.gpus import GpuReader, GpuReading

log = logging.getLogger(__name__)


class NoGpus:
    """No GPU figures, and why."""

    def __init__(self, why: str) -> None:
        self._why = why

    def read(self, indices: Sequence[int]) -> list[GpuReading]:
        return []

    @property
    def unavailable(self) -> str | None:
        return self._why

    def close(self) -> None:
        pass


class NvmlReader:
    """The devices of this machine through NVML."""

    def __init__(self, nvml: ModuleType) -> None:
        self._nvml = nvml

    @classmethod
    def open(cls) -> GpuReader:
        """NVML's reader, or `NoGpus` saying why NVML cannot be used here."""
        try:
            import pynvml
        except ImportError:
            return NoGpus("nvidia-ml-py is not installed")
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as error:
            return NoGpus(f"NVML cannot be initialised: {error}")
        return cls(pynvml)

    def read(self, indices: Sequence[int]) -> list[GpuReading]:
        readings = []
        for index in indices:
            try:
                handle = self._nvml.nvmlDeviceGetHandleByIndex(index)
                rates = self._nvml.nvmlDeviceGetUtilizationRates(handle)
                memory = self._nvml.nvmlDeviceGetMemoryInfo(handle)
            except self._nvml.NVMLError as error:
                log.debug("GPU %d cannot be read: %s", index, error)
                continue
            readings.append(GpuReading(index, float(rates.gpu), int(memory.used)))
        return readings

    @property
    def unavailable(self) -> str | None:
        return None

    def close(self) -> None:
        with contextlib.suppress(self._nvml.NVMLError):
            self._nvml.nvmlShutdown()
