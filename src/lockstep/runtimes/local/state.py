"""The local runtime's own durable state: one directory per workload and per pod.

    <root>/<workload id>/ports.json          the port of each pod, fixed before any start
    <root>/<workload id>/hosts               the /etc/hosts of its sandboxed pods
    <root>/<workload id>/mpi/hostfile        MPI: every worker and its slots
    <root>/<workload id>/mpi/rsh             MPI: the agent mpirun starts remote commands with
    <root>/<workload id>/<pod>/launch.json   argv, environment, working directory (mode 0600)
    <root>/<workload id>/<pod>/state.json    attempt, pid, start ticks, stop request, error
    <root>/<workload id>/<pod>/exit-<n>      exit status of attempt n, written by the wrapper
    <root>/<workload id>/<pod>/exit-<n>.pid  the wrapper's pid, written first thing
    <root>/<workload id>/<pod>/out.fifo      the pipe the pod's stdout and stderr go into
    <root>/<workload id>/<pod>/log           what the pod printed, each line time-stamped
    <root>/<workload id>/<pod>/log.1         the older lines, once `log` reached its cap
    <root>/<workload id>/<pod>/rootfs/       the copy-on-write layer of the pod's own root
    <root>/<workload id>/<pod>/volumes/      the volumes lockstep makes for the pod
    <root>/<workload id>/<pod>/home/         its home directory (createHomeDir)
    <root>/<workload id>/<pod>/hostpaths/    where its private hostPaths are bound first
    <root>/<workload id>/<pod>/work/         the pod's own directory (see below)

The trust boundary runs through this tree. Everything in it is lockstep's and out of every
pod's reach — no part of it is bound into a sandbox writable, and the data directory above it
is veiled in every pod — except `work/`, the pod's own directory (its working directory when
its spec names none), and the pod's volumes and home, each bound into that pod alone where its
spec says. Inside them the pod writes what it likes, which lockstep takes as data at most (an
s3 volume synchronised back), never following a link; the directories themselves are
lockstep's: a pod sees them only as mount points, which it cannot replace. What lockstep needs
to start, restart, supervise and observe a pod is in the files beside them, written by lockstep
alone, so it can trust them when it reads them back.

Every file but the logs is replaced atomically, so a crash at any point leaves a readable state.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import orjson

MPI_DIRECTORY = "mpi"
"""Beside its pods' directories, a workload's directory holds this one: MPI's hostfile and
remote-start agent."""
HOSTS_FILE = "hosts"
"""In a workload's directory: the /etc/hosts of its sandboxed pods, naming each of its pods."""
WORK_DIRECTORY = "work"
"""In a pod's directory: the pod's own, the only one a pod may write (see above)."""


def write_json(path: Path, data: Any, *, mode: int = 0o644) -> None:
    """Replace `path` atomically with `data` as JSON, durably."""
    temporary = path.with_name(path.name + ".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(orjson.dumps(data))
        handle.flush()
        os.fsync(handle.fileno())
    temporary.replace(path)


def read_json(path: Path) -> Any:
    return orjson.loads(path.read_bytes())


@dataclass(frozen=True, slots=True)
class PodState:
    """What the runtime knows about a pod's current attempt."""

    uid: str
    role: str
    index: int
    image: str
    created_at: float
    attempt: int = 0
    pid: int | None = None
    ticks: int | None = None
    started_at: float | None = None
    stop_deadline: float | None = None
    error: str | None = None
    finished_at: float | None = None
    """When the attempt was first seen to have ended."""
    waiting: bool = False
    """Created but held back until its gang is ready (an MPI launcher that waits for its
    workers)."""
    swept: bool = False
    """Whatever was left of the attempt's processes has been killed (done once: afterwards
    the group id may belong to someone else)."""
    cpus: list[int] | None = None
    """The cores the attempt is pinned to (a CPU limit without cgroups)."""
    cgroup: str | None = None
    """The attempt's cgroup (limits with cgroups)."""
    pids_group: str | None = None
    """The attempt's group in cgroup v1's pids hierarchy (its pids limit without cgroup v2)."""
    oom_killed: bool = False
    """The attempt was killed for exceeding its memory limit."""
    evicted: bool = False
    """The attempt was killed for holding more on disk than its limit."""
    node: str | None = None
    """The node the scheduler placed the pod on."""
    gpus: list[int] | None = None
    """The GPU devices it was given (their CUDA indices)."""
    gpu_share: str | None = None
    """The share of each of them it holds (`1` for whole devices)."""

    def evolve(self, **changes: Any) -> PodState:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class PodFiles:
    directory: Path

    @property
    def launch(self) -> Path:
        return self.directory / "launch.json"

    @property
    def state(self) -> Path:
        return self.directory / "state.json"

    @property
    def pipe(self) -> Path:
        return self.directory / "out.fifo"

    @property
    def log(self) -> Path:
        return self.directory / "log"

    @property
    def rotated_log(self) -> Path:
        return self.directory / "log.1"

    def exit_file(self, attempt: int) -> Path:
        return self.directory / f"exit-{attempt}"

    @property
    def work(self) -> Path:
        """The pod's own directory, bound read-write into its sandbox: nothing in it is
        trusted, nor read by lockstep."""
        return self.directory / WORK_DIRECTORY

    @property
    def host_paths(self) -> Path:
        """Where the pod's private hostPaths are bound first (sandbox/host_paths.py)."""
        return self.directory / "hostpaths"

    @property
    def home(self) -> Path:
        """The pod's home directory, when its spec asks for one (createHomeDir): lockstep's
        directory, bound into the pod's sandbox (where the pod cannot swap it for a link)."""
        return self.directory / "home"

    def termination_message(self, attempt: int) -> Path:
        """Why the attempt ended, in the words of whoever ended it (the volumes' set-up)."""
        return self.directory / f"termination-{attempt}"

    def pid_file(self, attempt: int) -> Path:
        return self.directory / f"exit-{attempt}.pid"

    def read_state(self) -> PodState:
        return PodState(**read_json(self.state))

    def write_state(self, state: PodState) -> None:
        write_json(self.state, asdict(state))

    def exit_code(self, attempt: int) -> int | None:
        try:
            return int(self.exit_file(attempt).read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def wrapper_pid(self, attempt: int) -> int | None:
        try:
            return int(self.pid_file(attempt).read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
