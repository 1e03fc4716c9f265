"""The GPU reader against `nvidia-smi` on a machine with NVIDIA GPUs; elsewhere, that the
reader says why it reads nothing (and reads nothing)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from lockstep.runtimes.local.gpus import NvmlReader

MIB = 2**20
MEMORY_TOLERANCE = 256 * MIB
"""What another process may allocate on a device between the two readings."""


def smi_devices() -> list[tuple[int, int, float]] | None:
    """(index, memory used in bytes, utilization %) of each device, by `nvidia-smi`; None
    where it cannot tell."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    done = subprocess.run(
        [smi, "--query-gpu=index,memory.used,utilization.gpu", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        return None
    rows = [line.split(",") for line in done.stdout.strip().splitlines() if line.strip()]
    return [(int(i), int(used) * MIB, float(rate)) for i, used, rate in rows]


def test_nvml_reads_what_nvidia_smi_shows() -> None:
    devices = smi_devices()
    if devices is None:
        pytest.skip("no NVIDIA GPU here: nvidia-smi is missing or sees no device")
    reader = NvmlReader.open()
    try:
        assert reader.unavailable is None
        readings = {r.index: r for r in reader.read([index for index, _, _ in devices])}
        assert sorted(readings) == [index for index, _, _ in devices]
        for index, used, _ in devices:
            assert abs(readings[index].memory_used_bytes - used) <= MEMORY_TOLERANCE
            assert 0 <= readings[index].utilization_percent <= 100
    finally:
        reader.close()


def test_without_nvml_the_reader_says_why_and_reads_nothing() -> None:
    if smi_devices():
        pytest.skip("this machine has NVIDIA GPUs: NVML is available")
    reader = NvmlReader.open()
    assert reader.unavailable
    assert reader.read([0, 1]) == []
    reader.close()
