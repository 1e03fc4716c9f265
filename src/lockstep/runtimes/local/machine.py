"""What this machine offers: CPU cores, memory and NVIDIA GPUs."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from decimal import Decimal
from pathlib import Path

from lockstep.runtimes.base import Capacity


def gpu_count() -> int:
    """The number of NVIDIA GPUs `nvidia-smi -L` lists (0 without the tool or a driver)."""
    tool = shutil.which("nvidia-smi")
    if tool is None:
        return 0
    try:
        listing = subprocess.run(
            [tool, "-L"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in listing.stdout.splitlines() if line.startswith("GPU "))


def memory_bytes() -> Decimal:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return Decimal(int(line.split()[1]) * 1024)
    return Decimal(0)


def detect() -> Capacity:
    return Capacity(
        cpu_cores=Decimal(os.cpu_count() or 1),
        memory_bytes=memory_bytes(),
        gpus=gpu_count(),
        node_name=socket.gethostname(),
    )
