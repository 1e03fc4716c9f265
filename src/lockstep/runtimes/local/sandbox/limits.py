"""Limits on a pod's processes: `cpuMemoryLimit`, `cpuCoreLimit`, and how many processes
and threads it may have at once (`pod_bounds`: no field of the spec).

Two ways, chosen once when the runtime starts:

- **cgroup v2**, where lockstep may create groups with the memory and cpu controllers: in a
  directory named by the configuration, or `<cgroup2 mount>/lockstep` when lockstep runs as root
  on a host that offers both controllers. Each pod gets a group with `memory.max` and `cpu.max`;
  the kernel kills a pod that exceeds its memory, and `memory.events` tells lockstep it did.
- **Elsewhere** (cgroup v1 hosts, unprivileged containers): a CPU limit pins the pod to
  ceil(limit) cores, the least used first; a watchdog samples the resident memory of the pod's
  processes (its session) five times a second and kills the pod, as the kernel would, once it
  exceeds its limit. Resident memory counts what a pod really uses; a limit on address space
  (RLIMIT_AS) would stop frameworks that reserve far more than they touch from even importing.

The pids limit is a cgroup's either way: `pids.max` in the pod's cgroup v2 group, or, on
cgroup v1 hosts, in a group of its own in the v1 `pids` hierarchy (as root). Where neither can
be had, pods run without one, and lockstep says so once at start-up.

Either way the pod's wrapper is confined before the command runs (see processes.spawn), so
every process it starts inherits the limits.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from lockstep.runtimes.local.pod_launch import Limits
from lockstep.runtimes.local.watchdog import Watchdog

log = logging.getLogger(__name__)

_PAGE = os.sysconf("SC_PAGE_SIZE")
_CPU_PERIOD = 100_000
WATCH_SECONDS = 0.2


@dataclass(frozen=True, slots=True)
class Confined:
    """How a pod was confined (kept in its state, to release it after a restart)."""

    cpus: tuple[int, ...] | None = None
    cgroup: str | None = None
    pids_group: str | None = None
    """The pod's group in cgroup v1's pids hierarchy (where there is no cgroup v2)."""


# --- cgroup v2 ------------------------------------------------------------------------------


def cgroup2_mount(mountinfo: str) -> Path | None:
    """Where the cgroup v2 hierarchy is mounted, from /proc/self/mountinfo."""
    for line in mountinfo.splitlines():
        before, _, after = line.partition(" - ")
        if after.split(" ", 1)[0] == "cgroup2":
            return Path(before.split()[4])
    return None


def cgroup1_mount(mountinfo: str, controller: str) -> Path | None:
    """Where cgroup v1's hierarchy of `controller` is mounted, from /proc/self/mountinfo."""
    for line in mountinfo.splitlines():
        before, _, after = line.partition(" - ")
        fields = after.split()
        if len(fields) >= 3 and fields[0] == "cgroup" and controller in fields[2].split(","):
            return Path(before.split()[4])
    return None


def _mountinfo() -> str | None:
    try:
        return Path("/proc/self/mountinfo").read_text()
    except OSError:
        return None


class Cgroups:
    """Pod groups under one delegated cgroup v2 directory with memory and cpu enabled."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def open(cls, directory: Path | None) -> Cgroups | None:
        """The groups under `directory` (or the default one for root), or None when lockstep
        may not use cgroups with both controllers there."""
        if directory is None:
            mountinfo = _mountinfo() if os.geteuid() == 0 else None
            mount = None if mountinfo is None else cgroup2_mount(mountinfo)
            if mount is None:
                return None
            directory = mount / "lockstep"
        try:
            controllers = (directory.parent / "cgroup.controllers").read_text().split()
            if not {"memory", "cpu"} <= set(controllers):
                return None
            directory.mkdir(exist_ok=True)
            wanted = "+memory +cpu +pids" if "pids" in controllers else "+memory +cpu"
            (directory / "cgroup.subtree_control").write_text(wanted)
        except OSError as error:
            log.info("pod limits without cgroups: %s", error)
            return None
        return cls(directory)

    def create(self, uid: str, limits: Limits, pid: int) -> str:
        group = self.directory / uid
        group.mkdir(exist_ok=True)
        if limits.memory_bytes is not None:
            (group / "memory.max").write_text(str(limits.memory_bytes))
            with contextlib.suppress(OSError):
                (group / "memory.swap.max").write_text("0")
        if limits.cpu_cores is not None:
            quota = max(1000, round(limits.cpu_cores * _CPU_PERIOD))
            (group / "cpu.max").write_text(f"{quota} {_CPU_PERIOD}")
        if limits.pids is not None and (group / "pids.max").exists():
            (group / "pids.max").write_text(str(limits.pids))
        (group / "cgroup.procs").write_text(str(pid))
        return str(group)

    @property
    def limits_pids(self) -> bool:
        return (self.directory / "cgroup.subtree_control").read_text().count("pids") > 0

    @staticmethod
    def oom_killed(group: str) -> bool:
        with contextlib.suppress(OSError):
            for line in (Path(group) / "memory.events").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value) > 0
        return False

    @staticmethod
    def remove(group: str) -> None:
        path = Path(group)
        with contextlib.suppress(OSError):
            (path / "cgroup.kill").write_text("1")
        with contextlib.suppress(OSError):
            path.rmdir()


class PidsGroups:
    """Pods' pids limits in cgroup v1's pids hierarchy, for hosts without cgroup v2."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def open(cls) -> PidsGroups | None:
        """The groups under `<pids hierarchy>/lockstep`, or None when lockstep may not make
        them (it does not run as root, or the host has no such hierarchy)."""
        mountinfo = _mountinfo() if os.geteuid() == 0 else None
        mount = None if mountinfo is None else cgroup1_mount(mountinfo, "pids")
        if mount is None:
            return None
        try:
            (mount / "lockstep").mkdir(exist_ok=True)
        except OSError as error:
            log.info("pod pids limits without cgroup v1: %s", error)
            return None
        return cls(mount / "lockstep")

    def create(self, uid: str, pids: int, pid: int) -> str:
        group = self.directory / uid
        group.mkdir(exist_ok=True)
        (group / "pids.max").write_text(str(pids))
        (group / "cgroup.procs").write_text(str(pid))
        return str(group)

    @staticmethod
    def remove(group: str) -> None:
        """Kill what is left in the group (v1 has no cgroup.kill), then remove it."""
        path = Path(group)
        with contextlib.suppress(OSError):
            for line in (path / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    os.kill(int(line), signal.SIGKILL)
        with contextlib.suppress(OSError):
            path.rmdir()


# --- without cgroups --------------------------------------------------------------------------


class CpuPinning:
    """Which cores each pod with a CPU limit is pinned to; the least used go first."""

    def __init__(self, cores: tuple[int, ...]) -> None:
        self._cores = cores
        self._pods: dict[str, tuple[int, ...]] = {}

    def assign(self, uid: str, count: int) -> tuple[int, ...]:
        use = dict.fromkeys(self._cores, 0)
        for cores in self._pods.values():
            for core in cores:
                use[core] = use.get(core, 0) + 1
        chosen = tuple(sorted(sorted(self._cores, key=lambda core: (use[core], core))[:count]))
        self._pods[uid] = chosen
        return chosen

    def restore(self, uid: str, cores: tuple[int, ...]) -> None:
        self._pods[uid] = cores

    def forget(self, uid: str) -> None:
        self._pods.pop(uid, None)


@dataclass(frozen=True, slots=True)
class ProcessSample:
    pid: int
    session: int
    resident_bytes: int


def sample_processes() -> Iterator[ProcessSample]:
    """Every process's session and resident memory, from /proc."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with Path(entry.path, "stat").open("rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        yield ProcessSample(int(entry.name), int(fields[3]), int(fields[21]) * _PAGE)


def proportional_bytes(pid: int) -> int:
    """A process's proportional share of the memory it maps (shared pages split among their
    users), which is what a memory cgroup would charge more closely than resident size."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return 0


@dataclass(slots=True)
class _Watched:
    session: int
    limit: int


class MemoryWatchdog(Watchdog[_Watched]):
    """Kills pods whose processes together hold more memory than their limit."""

    def __init__(self, on_exceeded: Callable[[str], None], *, every: float = WATCH_SECONDS):
        super().__init__(on_exceeded, every=every, name="lockstep-memory")

    def watch(self, uid: str, session: int, limit: int) -> None:
        self._watch(uid, _Watched(session, limit))

    def over(self, watched: dict[str, _Watched]) -> list[str]:
        return self.over_limit(watched)

    @staticmethod
    def over_limit(watched: dict[str, _Watched]) -> list[str]:
        by_session: dict[int, list[ProcessSample]] = {}
        for sample in sample_processes():
            by_session.setdefault(sample.session, []).append(sample)
        over = []
        for uid, pod in watched.items():
            processes = by_session.get(pod.session, [])
            if sum(p.resident_bytes for p in processes) <= pod.limit:
                continue  # resident size never understates a proportional share
            if sum(proportional_bytes(p.pid) for p in processes) > pod.limit:
                over.append(uid)
        return over


# --- the two together ---------------------------------------------------------------------------


class Confinement:
    """Confines pods by cgroups where it can, by pinning and the watchdog elsewhere."""

    def __init__(
        self,
        *,
        cgroup_dir: Path | None,
        on_memory_exceeded: Callable[[str], None],
        cores: tuple[int, ...] | None = None,
    ) -> None:
        self._cgroups = Cgroups.open(cgroup_dir)
        self._pids = None if self._cgroups is not None else PidsGroups.open()
        if (self._cgroups is None or not self._cgroups.limits_pids) and self._pids is None:
            log.warning("pods run without a pids limit: lockstep may not make cgroups here")
        self._pinning = CpuPinning(cores or tuple(sorted(os.sched_getaffinity(0))))
        self._watchdog: MemoryWatchdog | None = None
        self._on_memory_exceeded = on_memory_exceeded
        self._lock = threading.Lock()

    @property
    def uses_cgroups(self) -> bool:
        return self._cgroups is not None

    def confine(self, uid: str, pid: int, limits: Limits) -> Confined:
        """Put limits on a pod's wrapper before its command runs."""
        if limits.memory_bytes is None and limits.cpu_cores is None and limits.pids is None:
            return Confined()
        if self._cgroups is not None:
            return Confined(cgroup=self._cgroups.create(uid, limits, pid))
        pids_group = None
        if self._pids is not None and limits.pids is not None:
            pids_group = self._pids.create(uid, limits.pids, pid)
        cpus = None
        with self._lock:
            if limits.whole_cpus is not None:
                cpus = self._pinning.assign(uid, limits.whole_cpus)
                os.sched_setaffinity(pid, cpus)
        self._watch_memory(uid, pid, limits)
        return Confined(cpus=cpus, pids_group=pids_group)

    def adopt(self, uid: str, pid: int, limits: Limits, confined: Confined) -> None:
        """Take a live pod confined by an earlier run of lockstep back under watch."""
        if confined.cpus is not None:
            with self._lock:
                self._pinning.restore(uid, confined.cpus)
        if confined.cgroup is None:
            self._watch_memory(uid, pid, limits)

    def oom_killed(self, confined: Confined) -> bool:
        """Whether the kernel killed a process of the pod for memory (cgroups only; the
        watchdog's kills are recorded by whoever it tells)."""
        return confined.cgroup is not None and Cgroups.oom_killed(confined.cgroup)

    def release(self, uid: str, confined: Confined) -> None:
        """The pod's processes have ended: free its cores and its group."""
        with self._lock:
            self._pinning.forget(uid)
        if self._watchdog is not None:
            self._watchdog.forget(uid)
        if confined.cgroup is not None:
            Cgroups.remove(confined.cgroup)
        if confined.pids_group is not None:
            PidsGroups.remove(confined.pids_group)

    def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.close()

    def _watch_memory(self, uid: str, pid: int, limits: Limits) -> None:
        if limits.memory_bytes is None:
            return
        with self._lock:
            if self._watchdog is None:
                self._watchdog = MemoryWatchdog(self._on_memory_exceeded)
        self._watchdog.watch(uid, pid, limits.memory_bytes)
