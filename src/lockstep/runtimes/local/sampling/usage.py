"""What a pod uses of this machine right now: its CPU time and resident memory, from its
cgroup where it has one (`cpu.stat` usage_usec, `memory.current`), else summed over its
processes from /proc (each carries the pod's marker, see runtimes/local/processes.py).

The parsers are pure (their text in, a figure out); `read_usage` does the reading. The
sampler (sampler.py) calls it once per running pod each round.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from lockstep.runtimes.local.processes import POD_MARKER

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True, slots=True)
class Usage:
    """A pod's CPU time since it started (seconds) and its memory now (bytes)."""

    cpu_seconds: float
    memory_bytes: int


def cgroup_cpu_seconds(cpu_stat: str) -> float | None:
    """`usage_usec` of a cgroup's `cpu.stat`, in seconds."""
    for line in cpu_stat.splitlines():
        key, _, value = line.partition(" ")
        if key == "usage_usec" and value.strip().isdigit():
            return int(value) / 1_000_000
    return None


def cgroup_memory_bytes(memory_current: str) -> int | None:
    text = memory_current.strip()
    return int(text) if text.isdigit() else None


def proc_cpu_seconds(stat: str) -> float | None:
    """utime + stime of a /proc/<pid>/stat line, in seconds (the command may hold spaces and
    parentheses: the fields follow its last `)`)."""
    try:
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    except (ValueError, IndexError):
        return None


def proc_resident_bytes(statm: str) -> int | None:
    """The resident set of a /proc/<pid>/statm line, in bytes."""
    fields = statm.split()
    return int(fields[1]) * PAGE_BYTES if len(fields) > 1 and fields[1].isdigit() else None


def marker_of(environ: bytes) -> str | None:
    """The pod uid a process's /proc/<pid>/environ carries, if any."""
    prefix = POD_MARKER.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode(errors="replace")
    return None


def pods_processes(uids: Collection[str], *, proc: Path = Path("/proc")) -> dict[str, list[int]]:
    """The processes of each of these pods, found in one pass over /proc."""
    found: dict[str, list[int]] = {}
    if not uids:
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            uid = marker_of((entry / "environ").read_bytes())
            if uid is not None and uid in uids:
                found.setdefault(uid, []).append(int(entry.name))
    return found


def read_usage(
    cgroup: str | None, pids: Iterable[int], *, proc: Path = Path("/proc")
) -> Usage | None:
    """A pod's usage now, from its cgroup if it has one, else from its processes `pids`;
    None when neither can be read."""
    if cgroup is not None:
        found = _from_cgroup(Path(cgroup))
        if found is not None:
            return found
    return _from_processes(pids, proc)


def _from_cgroup(group: Path) -> Usage | None:
    try:
        cpu = cgroup_cpu_seconds((group / "cpu.stat").read_text())
        memory = cgroup_memory_bytes((group / "memory.current").read_text())
    except OSError:
        return None
    return None if cpu is None or memory is None else Usage(cpu, memory)


def _from_processes(pids: Iterable[int], proc: Path) -> Usage | None:
    cpu, memory, seen = 0.0, 0, False
    for pid in pids:
        with contextlib.suppress(OSError):
            seconds = proc_cpu_seconds((proc / str(pid) / "stat").read_text())
            resident = proc_resident_bytes((proc / str(pid) / "statm").read_text())
            if seconds is not None and resident is not None:
                cpu, memory, seen = cpu + seconds, memory + resident, True
    return Usage(cpu, memory) if seen else None
