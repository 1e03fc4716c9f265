"""What a pod that asks for nothing may take of this machine: its processes (a pids limit),
its memory (a limit where its spec sets none), the size of its private `/tmp` (a memory file
system, which no process's memory counts), and the disk its writable layers hold. Each an
administrator's setting with a safe default (docs/local-runtime.md, "Limits"), so that one
pod's fork loop, allocation, full `/tmp` or full root cannot take the host from the other pods
and lockstep.

Used by `Launches` (every pod's limits) and the sandbox policy (its `/tmp`), from the
settings (`bounds_of`).
"""

from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from lockstep.config import Settings
from lockstep.domain.quantities import share_or_quantity
from lockstep.runtimes.local import machine
from lockstep.runtimes.local.disk_watch import CHECK_SECONDS
from lockstep.runtimes.local.pod_launch import Limits

DEFAULT_PIDS = 2048
"""Processes and threads of one pod at once: a large data loader has a few hundred."""
DEFAULT_MEMORY = "50%"
"""A pod without a memory limit of its own gets half of this machine's memory."""
DEFAULT_TMP = "512Mi"
"""The size of a pod's private /tmp (a pod writes more in a volume of its own)."""
DEFAULT_DISK = "10%"
"""What a pod's writable layers may hold: a tenth of the data directory's file system."""


@dataclass(frozen=True, slots=True)
class PodBounds:
    pids: int | None = DEFAULT_PIDS
    """None: no limit."""
    memory_bytes: int | None = None
    """The memory limit of a pod whose spec sets none (None: no limit)."""
    tmp_bytes: int | None = None
    """The size of a pod's private /tmp (None: the kernel's default, half of memory)."""
    disk_bytes: int | None = None
    """What a pod's root layer and own directory may hold on disk (None: no limit)."""
    disk_check_seconds: float = CHECK_SECONDS
    """How often what they hold is measured."""

    def applied(self, limits: Limits) -> Limits:
        """`limits` with a default for what its spec leaves open."""
        return dataclasses.replace(
            limits,
            pids=self.pids,
            disk_bytes=self.disk_bytes,
            memory_bytes=self.memory_bytes if limits.memory_bytes is None else limits.memory_bytes,
        )


def bounds_of(settings: Settings) -> PodBounds:
    """The bounds the settings give (already checked when they were read: see config.py)."""
    memory = machine.memory_bytes()
    disk = Decimal(shutil.disk_usage(_existing(settings.runtime_dir)).total)
    return PodBounds(
        pids=settings.pod_pids_limit or None,
        memory_bytes=share_or_quantity(settings.pod_memory_limit, whole=memory),
        tmp_bytes=share_or_quantity(settings.pod_tmp_size, whole=memory),
        disk_bytes=share_or_quantity(settings.pod_disk_limit, whole=disk),
        disk_check_seconds=settings.pod_disk_check_seconds,
    )


def _existing(path: Path) -> Path:
    """`path`, or the nearest directory above it that exists (the file system it will be on)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path
