"""`LocalRuntime`: runs each pod of an admitted workload as a process group on this machine.

State lives on disk (see state.py) before anything is started, so that after lockstep
restarts it re-adopts live pods by pid and start time, reads the exit status of pods that ended
while it was down, and kills any process of a pod it no longer knows.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lockstep.domain.cluster import Assignment, Node
from lockstep.domain.errors import LockstepError
from lockstep.domain.plan import ReplicaPlan, Role
from lockstep.domain.quantities import binary_quantity
from lockstep.domain.secrets import ProjectSecrets
from lockstep.domain.workload import PodPhase, PortBinding, Workload
from lockstep.frameworks import mpi
from lockstep.runtimes.base import OOM_KILLED, PodStartError, PodStatus
from lockstep.runtimes.local import machine, network, processes
from lockstep.runtimes.local.disk_watch import EVICTED, DiskWatchdog
from lockstep.runtimes.local.log_collector import DEFAULT_MAX_BYTES, LogCollector, make_pipe, parse
from lockstep.runtimes.local.pod_bounds import PodBounds
from lockstep.runtimes.local.pod_launch import (
    LOOPBACK,
    WORKLOAD_DIR,
    Launch,
    resolve_references,
)
from lockstep.runtimes.local.ports import WorkloadPorts, allocate
from lockstep.runtimes.local.probes import Prober
from lockstep.runtimes.local.processes import POD_MARKER
from lockstep.runtimes.local.sandbox import environment, host_paths
from lockstep.runtimes.local.sandbox.asked import shared_mount_paths
from lockstep.runtimes.local.sandbox.limits import Confined, Confinement
from lockstep.runtimes.local.sandbox.policy import (
    SECCOMP_FD,
    SandboxPolicy,
    fresh_root_layer,
    host_path_sources,
    make_mount_points,
    seccomp_descriptor,
)
from lockstep.runtimes.local.state import (
    HOSTS_FILE,
    MPI_DIRECTORY,
    PodFiles,
    PodState,
    read_json,
    write_json,
)
from lockstep.runtimes.local.volumes import VolumeError
from lockstep.runtimes.local.volumes.mounts import unmount_under
from lockstep.runtimes.local.volumes.prepare import ephemeral_claims, missing_claims, prepare
from lockstep.runtimes.local.volumes.setup import NOT_READY, setup_command
from lockstep.runtimes.local.watcher import ExitWatcher
from lockstep.runtimes.local.workload_launches import Launches
from lockstep.schemas.distributed import DistributedFramework, MpiLauncherCreationPolicy

_PORTS = "ports.json"

log = logging.getLogger(__name__)


def _moment(timestamp: float | None) -> datetime | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC)


class LocalRuntime:
    name = "local"

    def __init__(
        self,
        root: Path,
        *,
        on_change: Callable[[str], None],
        nodes: Sequence[Node] | None = None,
        environ: Mapping[str, str] | None = None,
        wall_clock: Callable[[], float] = time.time,
        log_max_bytes: int = DEFAULT_MAX_BYTES,
        cgroup_dir: Path | None = None,
        image_environments: Mapping[str, Path] | None = None,
        values: Callable[[str], ProjectSecrets] | None = None,
        sandboxes: SandboxPolicy | None = None,
        bounds: PodBounds | None = None,
    ) -> None:
        """`values` gives a project's secrets and config maps, read when a pod that refers to
        them starts. `sandboxes`: how pods are sandboxed (None: not at all). `bounds`: what a
        pod that asks for nothing may take (None: the defaults)."""
        self._root = root.resolve()
        self._root.mkdir(parents=True, exist_ok=True)
        self._nodes = list(nodes) if nodes else machine.nodes()
        self._now = wall_clock
        self._lock = threading.RLock()
        self._watcher = ExitWatcher(on_change)
        self._logs = LogCollector(max_bytes=log_max_bytes, clock=wall_clock)
        self._sandboxes = sandboxes
        bounds = bounds or PodBounds()
        self._launches = Launches(
            self._root,
            dict(os.environ if environ is None else environ),
            dict(image_environments or {}),
            sandboxes,
            bounds,
        )
        self._disk = DiskWatchdog(self._disk_exceeded, every=bounds.disk_check_seconds)
        self._values = values or (lambda _: ProjectSecrets())
        self._by_uid: dict[str, PodFiles] = {}
        self._launched: dict[Path, Launch] = {}
        self._prober = Prober(on_change)
        self._confinement = Confinement(
            cgroup_dir=cgroup_dir, on_memory_exceeded=self._memory_exceeded
        )
        self._readopt()

    # --- the Runtime interface ---------------------------------------------------------

    def render(self, workload: Workload, plan: ReplicaPlan) -> dict[str, Any]:
        return self._launches.render(workload, plan, self._read_ports(workload.id))

    def waiting_for(self, workload: Workload, plan: ReplicaPlan) -> str | None:
        if self._sandboxes is None or self._sandboxes.sandboxing is None:
            return None
        missing = missing_claims(plan, workload.project_id, self._sandboxes.claims_dir)
        if not missing:
            return None
        names = ", ".join(repr(name) for name in missing)
        return f"waiting for the claim {names} (existingPvc): it does not exist in the project"

    def start(
        self,
        workload: Workload,
        plan: ReplicaPlan,
        placement: Mapping[str, Assignment] | None = None,
    ) -> None:
        """Start the pods that are not started yet, each on its node with its GPUs: workers
        first, then the leader — an MPI launcher created with WaitForWorkersReady only once
        every worker runs."""
        with self._lock:
            ports = self._ensure_ports(workload.id, plan)
            if self._sandboxes is not None:
                write_hosts(self._root / workload.id / HOSTS_FILE, plan)
            if plan.framework is DistributedFramework.MPI:
                self._prepare_mpi(workload.id, plan)
            for replica in (
                (*plan.workers, plan.leader)
                if plan.leader.role is not Role.WORKER and not plan.is_single_pod
                else plan.replicas
            ):
                files = self._files(workload.id, replica.pod_name)
                hold = replica.is_leader and self._holds_leader(workload.id, plan)
                if files.state.exists():
                    self._resume_launch(workload.id, files, hold=hold)
                    continue
                files.directory.mkdir(parents=True, exist_ok=True)
                if placement is None:
                    assignment = Assignment(self._nodes[0].name)
                elif replica.pod_name in placement:
                    assignment = placement[replica.pod_name]
                elif plan.is_single_pod:
                    # A training's later completion: where the one `parallelism` before it
                    # ran, once that one has succeeded.
                    before = plan.replicas[replica.index - plan.parallelism]
                    if not self._succeeded(workload.id, before.pod_name):
                        continue
                    assignment = placement[plan.replicas[replica.index % plan.parallelism].pod_name]
                else:
                    continue  # an elastic workload's pod waiting for room
                state = PodState(
                    uid=str(uuid.uuid4()),
                    role=replica.role.value,
                    index=replica.index,
                    image=replica.spec.image or "",
                    created_at=self._now(),
                    node=assignment.node,
                    gpus=list(assignment.gpus),
                    gpu_share=str(assignment.share),
                )
                try:
                    launch = self._launches.launch(
                        workload, plan, replica.pod_name, ports, uid=state.uid, on=assignment
                    )
                except PodStartError as error:
                    files.write_state(state.evolve(error=str(error)))
                    continue
                write_json(files.launch, launch.to_json(), mode=0o600)
                files.write_state(state.evolve(waiting=hold))
                if not hold:
                    self._spawn(workload.id, files, state, launch)

    def _succeeded(self, workload_id: str, pod_name: str) -> bool:
        files = self._files(workload_id, pod_name)
        if not files.state.exists():
            return False
        status = self._status(files)
        return status is not None and status.phase is PodPhase.SUCCEEDED

    def _holds_leader(self, workload_id: str, plan: ReplicaPlan) -> bool:
        """Whether the leader must wait: an MPI launcher with WaitForWorkersReady while a
        worker is not running yet."""
        if (
            plan.mpi_launcher_creation_policy
            is not MpiLauncherCreationPolicy.WAIT_FOR_WORKERS_READY
        ):
            return False
        for worker in plan.workers:
            files = self._files(workload_id, worker.pod_name)
            if not files.state.exists() or not self._alive(files.read_state()):
                return True
        return False

    def _prepare_mpi(self, workload_id: str, plan: ReplicaPlan) -> None:
        """The hostfile and the remote-start agent the launcher's mpirun uses."""
        directory = self._root / workload_id / MPI_DIRECTORY
        if (directory / "rsh").exists():
            return
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "hostfile").write_text(mpi.hostfile(plan))
        command = f'"{sys.executable}" -m lockstep.runtimes.local.rsh "{self._root / workload_id}"'
        (directory / "rsh.tmp").write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        (directory / "rsh.tmp").chmod(0o755)
        (directory / "rsh.tmp").replace(directory / "rsh")

    def observe(self, workload_id: str) -> list[PodStatus]:
        with self._lock:
            directory = self._root / workload_id
            if not directory.is_dir():
                return []
            statuses = []
            for files in _pods_in(directory):
                status = self._status(files)
                if status is not None:
                    statuses.append(status)
            if all(status.phase is not PodPhase.RUNNING for status in statuses):
                # Nothing of the workload runs: its network goes (a pod started again makes
                # it anew), rather than a pasta idling on for each finished workload.
                network.release(directory)
            return statuses

    def restart(
        self, workload: Workload, plan: ReplicaPlan, only: Collection[str] | None = None
    ) -> None:
        with self._lock:
            for replica in plan.replicas:
                if only is not None and replica.pod_name not in only:
                    continue
                files = self._files(workload.id, replica.pod_name)
                state = files.read_state()
                if self._alive(state) or not files.launch.exists():
                    continue
                state = state.evolve(
                    attempt=state.attempt + 1,
                    pid=None,
                    ticks=None,
                    started_at=None,
                    stop_deadline=None,
                    finished_at=None,
                    swept=False,
                )
                files.write_state(state)
                self._spawn(workload.id, files, state, Launch.from_json(read_json(files.launch)))

    def log_tail(self, workload_id: str, pod_name: str, *, lines: int) -> list[str]:
        stored = tail_lines(self._files(workload_id, pod_name).log, lines)
        return [parse(line).text for line in stored]

    def stop(self, workload_id: str, *, grace_seconds: float) -> bool:
        with self._lock:
            directory = self._root / workload_id
            if not directory.is_dir():
                return True
            now = self._now()
            running = False
            for files in _pods_in(directory):
                try:
                    state = files.read_state()
                except FileNotFoundError:
                    continue  # being created
                if not self._alive(state):
                    self._sweep(files, state)
                    continue
                assert state.pid is not None
                if state.stop_deadline is None:
                    files.write_state(state.evolve(stop_deadline=now + grace_seconds))
                    processes.signal_group(state.pid, signal.SIGTERM)
                    running = True
                elif now >= state.stop_deadline:
                    processes.signal_group(state.pid, signal.SIGKILL)
                    processes.kill_marked(state.uid)
                    running = True
                else:
                    running = True
            return not running

    def delete(self, workload_id: str, *, keep_logs: bool = False) -> None:
        with self._lock:
            directory = self._root / workload_id
            if self._sandboxes is not None:
                shutil.rmtree(self._sandboxes.memory_root / workload_id, ignore_errors=True)
                if not keep_logs:
                    claims = ephemeral_claims(self._sandboxes.claims_dir, workload_id)
                    shutil.rmtree(claims, ignore_errors=True)
            self._logs.finish_under(directory)
            network.release(directory)
            for path in [p for p in self._launched if p.parent == directory]:
                del self._launched[path]
            if not directory.is_dir():
                return
            if not self._unmounted(directory):
                return  # removing it would delete what a server still mounted there holds
            if not keep_logs:
                shutil.rmtree(directory, ignore_errors=True)
                return
            for path in directory.iterdir():
                if path.is_dir() and (path / "log").exists():
                    _remove_all_but_logs(PodFiles(path))
                elif path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)

    def workload_ids(self) -> set[str]:
        with self._lock:
            return {p.name for p in self._root.iterdir() if p.is_dir()}

    def nodes(self) -> list[Node]:
        return self._nodes

    def close(self) -> None:
        self._watcher.close()
        self._prober.close()
        self._confinement.close()
        self._disk.close()
        self._logs.close()

    # --- pods ---------------------------------------------------------------------------

    def _files(self, workload_id: str, pod_name: str) -> PodFiles:
        return PodFiles(self._root / workload_id / pod_name)

    def _read_ports(self, workload_id: str) -> WorkloadPorts | None:
        path = self._root / workload_id / _PORTS
        return WorkloadPorts.from_json(read_json(path)) if path.exists() else None

    def _ensure_ports(self, workload_id: str, plan: ReplicaPlan) -> WorkloadPorts:
        ports = self._read_ports(workload_id)
        if ports is None:
            (self._root / workload_id).mkdir(parents=True, exist_ok=True)
            ports = allocate(plan)
            write_json(self._root / workload_id / _PORTS, ports.to_json())
        return ports

    def _spawn(self, workload_id: str, files: PodFiles, state: PodState, launch: Launch) -> None:
        """Start the pod's current attempt. A sandboxed pod's command gets its environment
        from its sandbox (bwrap reads it from a descriptor): lockstep's processes around the
        sandbox, which run on this machine, run with `host_environment` and in the pod's
        directory of lockstep's, never with what the spec or the pod chose."""
        files.work.mkdir(exist_ok=True)
        cwd = Path(launch.working_dir) if launch.working_dir else files.work
        if launch.sandbox is not None:
            cwd = files.directory  # the sandbox changes to the working directory itself
        if not cwd.is_dir():
            files.write_state(
                state.evolve(error=f"the working directory {cwd} does not exist on this machine")
            )
            return
        confined = Confined()

        def confine(pid: int) -> None:
            nonlocal confined
            confined = self._confinement.confine(state.uid, pid, launch.limits)

        inherited: list[processes.Inherited] = []
        try:
            argv, env = self._command(workload_id, files, state, launch, inherited=inherited)
        except (PodStartError, LockstepError, OSError, ValueError) as error:
            _close(inherited)
            files.write_state(state.evolve(error=str(error)))
            return
        try:
            if launch.create_home_dir:
                files.home.mkdir(exist_ok=True)
                if launch.sandbox is not None and launch.sandbox.identity is not None:
                    os.chown(files.home, launch.sandbox.identity.uid, launch.sandbox.identity.gid)
            make_pipe(files)
            self._logs.attach(files)
            pid = processes.spawn(
                argv,
                env=env,
                cwd=cwd,
                output=files.pipe,
                exit_file=files.exit_file(state.attempt),
                prepare=confine,
                inherit=inherited,
            )
        except OSError as error:
            self._confinement.release(state.uid, confined)
            files.write_state(state.evolve(error=f"could not start the pod: {error}"))
            return
        finally:
            _close(inherited)
        ticks = processes.start_ticks(pid)
        files.write_state(
            state.evolve(
                pid=pid,
                ticks=ticks,
                started_at=self._now(),
                cpus=None if confined.cpus is None else list(confined.cpus),
                cgroup=confined.cgroup,
                pids_group=confined.pids_group,
            )
        )
        self._by_uid[state.uid] = files
        self._watcher.watch(pid, workload_id)
        self._watch_disk(files, state, launch)
        if launch.readiness is not None:
            self._prober.watch(state.uid, workload_id, launch.readiness, started=time.monotonic())

    def _command(
        self,
        workload_id: str,
        files: PodFiles,
        state: PodState,
        launch: Launch,
        *,
        inherited: list[processes.Inherited],
    ) -> tuple[Sequence[str], dict[str, str]]:
        """What to spawn and its environment: the pod's own, or, for a sandboxed pod, lockstep's,
        with the pod's on `ENVIRONMENT_FD` (added to `inherited`, as is every descriptor the
        sandbox reads)."""
        pod_env = dict(launch.env)
        if launch.references:
            pod_env |= resolve_references(launch, self._values(launch.project_id))
        environment.checked(pod_env)
        if launch.sandbox is None:
            return launch.argv, pod_env
        env = environment.host_environment({POD_MARKER: state.uid})
        if launch.worker_agent:
            env |= {WORKLOAD_DIR: pod_env[WORKLOAD_DIR], "HOSTNAME": launch.pod_name}
        said = files.termination_message(state.attempt)
        argv = self._sandboxed(workload_id, launch, termination_message=said, inherited=inherited)
        inherited.append(
            processes.Inherited(environment.descriptor(pod_env), environment.ENVIRONMENT_FD)
        )
        return argv, env

    def _sandboxed(
        self,
        workload_id: str,
        launch: Launch,
        *,
        termination_message: Path,
        inherited: list[processes.Inherited],
    ) -> Sequence[str]:
        """The pod's command in its sandbox, its volumes made ready (the remote ones — git,
        s3, NFS — by a set-up process in the pod's own process group, so that a slow clone
        neither holds up lockstep nor outlives the pod). Every volume that cannot be made ready
        is named in one message: by a `VolumeError` here, or by the set-up process when the
        pod has remote volumes too. The descriptors the command needs (its seccomp filter) are
        added to `inherited`; its environment's is the caller's to add, as `ENVIRONMENT_FD`."""
        sandbox, policy = launch.sandbox, self._sandboxes
        if sandbox is None or policy is None or policy.sandboxing is None:
            raise PodStartError("the pod's sandbox is gone: lockstep now runs without one")
        if sandbox.network is not None:
            if policy.networking is None or not policy.networking.available:
                raise PodStartError("the pod's network is gone: lockstep now runs without one")
            ports = self._read_ports(workload_id)
            forwarded = [] if ports is None else [p.host for p in _bindings(ports)]
            network.ensure(policy.networking, self._root / workload_id, forwarded)
        places = policy.places(workload_id, launch.pod_name, launch.project_id, self._root)
        values = self._values(launch.project_id)
        problems = shared_mount_paths(launch.volumes)
        try:
            prepare(
                [volume for volume in launch.volumes if not volume.remote],
                places,
                values=values,
                owner=sandbox.identity,
            )
        except VolumeError as error:
            problems.append(str(error))
        remote = [volume for volume in launch.volumes if volume.remote]
        if problems and not remote:
            raise VolumeError(f"{NOT_READY}{'; '.join(problems)}")
        if not problems:
            make_mount_points(sandbox)
        if sandbox.root_layer is not None:
            fresh_root_layer(sandbox.root_layer)
        argv: Sequence[str] = launch.argv  # the worker agent sandboxes each command itself
        if launch.worker_agent and sandbox.network is not None and policy.networking is not None:
            # in the workload's network, where the launcher's remote starts reach its socket
            argv = [*network.enter(policy.networking, self._root / workload_id), *argv]
        if not launch.worker_agent:
            pinned = host_paths.pin(
                host_path_sources(launch),
                private=sandbox.private_sources,
                staging=PodFiles(places.pod_dir).host_paths,
            )
            inherited.extend(processes.Inherited(*pair) for pair in pinned.opened)
            if sandbox.seccomp:
                kept = sandbox.capabilities or ()
                inherited.append(processes.Inherited(seccomp_descriptor(kept), SECCOMP_FD))
            argv = policy.sandboxing.command(
                sandbox,
                launch.argv,
                seccomp_fd=SECCOMP_FD if sandbox.seccomp else None,
                env_fd=environment.ENVIRONMENT_FD,
                host_paths=pinned.host_paths,
            )
        if remote:
            argv = setup_command(
                places,
                remote,
                values,
                argv,
                owner=sandbox.identity,
                problems=problems,
                termination_message=termination_message,
                pass_fds=(*(kept.number for kept in inherited), environment.ENVIRONMENT_FD),
            )
        return argv

    def _launch_in(self, files: PodFiles) -> Launch:
        """The pod's launch as written before it started (it never changes), remembered."""
        launch = self._launched.get(files.directory)
        if launch is None:
            launch = self._launched[files.directory] = Launch.from_json(read_json(files.launch))
        return launch

    def _memory_exceeded(self, uid: str) -> None:
        """The memory watchdog's verdict: record it, then kill the pod as the kernel would."""
        self._kill_for(uid, "oom_killed")

    def _disk_exceeded(self, uid: str) -> None:
        """The disk watchdog's verdict: record it, then evict the pod as the kubelet would."""
        self._kill_for(uid, "evicted")

    def _kill_for(self, uid: str, verdict: str) -> None:
        """Record `verdict` (a flag of the pod's state) on the pod's live attempt, and kill it."""
        with self._lock:
            files = self._by_uid.get(uid)
            if files is None:
                return
            with contextlib.suppress(FileNotFoundError):
                state = files.read_state()
                if state.uid != uid or not self._alive(state) or getattr(state, verdict):
                    return
                files.write_state(state.evolve(**{verdict: True}))
                assert state.pid is not None
                processes.signal_group(state.pid, signal.SIGKILL)
                processes.kill_marked(uid)

    def _watch_disk(self, files: PodFiles, state: PodState, launch: Launch) -> None:
        """Have the disk watchdog measure what the pod's writable layers hold: its own
        directory, and its root's layer (which holds what the pod writes outside its volumes)."""
        if launch.limits.disk_bytes is None:
            return
        writable = [files.work]
        if launch.sandbox is not None and launch.sandbox.root_layer is not None:
            writable.append(Path(launch.sandbox.root_layer.directory))
        self._disk.watch(state.uid, writable, launch.limits.disk_bytes)

    def _resume_launch(self, workload_id: str, files: PodFiles, *, hold: bool) -> None:
        """A pod created earlier that is not running: start it if it was held back and need
        not be any more; adopt its process, or start it again, if a crash cut its launch short."""
        state = files.read_state()
        if state.pid is not None or state.error is not None:
            return
        if state.waiting:
            if not hold:
                state = state.evolve(waiting=False)
                files.write_state(state)
                self._spawn(workload_id, files, state, Launch.from_json(read_json(files.launch)))
            return
        pid = files.wrapper_pid(state.attempt)
        ticks = None if pid is None else processes.start_ticks(pid)
        if pid is not None and ticks is not None:
            files.write_state(state.evolve(pid=pid, ticks=ticks, started_at=self._now()))
            self._watcher.watch(pid, workload_id)
            return
        if files.exit_code(state.attempt) is None and files.launch.exists():
            processes.kill_marked(state.uid)
            self._spawn(workload_id, files, state, Launch.from_json(read_json(files.launch)))

    def _adopt(self, workload_id: str, files: PodFiles, state: PodState) -> None:
        """Take a live pod started by an earlier run of lockstep back under watch."""
        assert state.pid is not None
        launch = self._launch_in(files)
        self._confinement.adopt(state.uid, state.pid, launch.limits, _confined(state))
        self._by_uid[state.uid] = files
        self._watch_disk(files, state, launch)
        self._watcher.watch(state.pid, workload_id)
        if launch.readiness is not None:
            running_for = max(0.0, self._now() - (state.started_at or self._now()))
            started = time.monotonic() - running_for
            self._prober.watch(state.uid, workload_id, launch.readiness, started=started)

    def _alive(self, state: PodState) -> bool:
        return (
            state.pid is not None
            and state.ticks is not None
            and processes.is_alive(state.pid, state.ticks)
        )

    def _sweep(self, files: PodFiles, state: PodState) -> PodState:
        """Kill whatever is left of a finished attempt, once: the rest of its process group,
        and escapees carrying the pod's marker. Records when the attempt ended."""
        if state.swept:
            return state
        if state.pid is not None:
            processes.reap(state.pid)
            processes.signal_group(state.pid, signal.SIGKILL)
        processes.kill_marked(state.uid)
        self._unmounted(files.directory)
        self._logs.finish(files)
        confined = _confined(state)
        oom_killed = state.oom_killed or self._confinement.oom_killed(confined)
        self._confinement.release(state.uid, confined)
        self._disk.forget(state.uid)
        self._prober.forget(state.uid)
        self._by_uid.pop(state.uid, None)
        if self._sandboxes is not None:  # its secret files: not kept in memory past the pod
            pod_memory = self._sandboxes.memory_root / files.directory.parent.name
            shutil.rmtree(pod_memory / files.directory.name, ignore_errors=True)
        ended = _mtime(files.exit_file(state.attempt)) or self._now()
        state = state.evolve(swept=True, finished_at=ended, oom_killed=oom_killed)
        files.write_state(state)
        return state

    def _unmounted(self, directory: Path) -> bool:
        """Whether nothing is mounted under `directory` any more: the volumes a pod's set-up
        could not unmount itself (it was killed first) are detached."""
        problems = unmount_under(directory)
        for problem in problems:
            log.error("%s; %s is kept", problem, directory)
        return not problems

    def _status(self, files: PodFiles) -> PodStatus | None:
        try:
            state = files.read_state()
        except FileNotFoundError:
            return None
        common: dict[str, Any] = {
            "name": files.directory.name,
            "role": state.role,
            "index": state.index,
            "image": state.image,
            "node_name": state.node or self._nodes[0].name,
            "gpus": tuple(state.gpus or ()),
            "created_at": _moment(state.created_at),
            "started_at": _moment(state.started_at),
            "restarts": state.attempt,
        }
        if state.error is not None:
            return PodStatus(phase=PodPhase.FAILED, message=state.error, **common)
        if state.pid is None:
            waiting = "waiting for every worker to run" if state.waiting else "starting"
            return PodStatus(phase=PodPhase.PENDING, message=waiting, **common)
        common["ip"] = LOOPBACK
        launch = self._launch_in(files)
        common["ports"] = launch.ports
        common["unapplied"] = launch.unapplied
        if self._alive(state):
            ready = launch.readiness is None or self._prober.is_ready(state.uid)
            return PodStatus(phase=PodPhase.RUNNING, ready=ready, **common)
        state = self._sweep(files, state)
        code = files.exit_code(state.attempt)
        common |= {
            "finished_at": _moment(state.finished_at),
            "stopped": state.stop_deadline is not None,
        }
        killed = (
            (
                EVICTED,
                "Evicted: its root layer and own directory held more than its disk limit of "
                f"{describe(launch.limits.disk_bytes)} (LOCKSTEP_POD_DISK_LIMIT)",
            )
            if state.evicted
            else (
                OOM_KILLED,
                "OOMKilled: it used more than its memory limit of "
                f"{describe(launch.limits.memory_bytes)}",
            )
            if state.oom_killed
            else None
        )
        if killed is not None:  # by a watchdog of lockstep's, or the kernel
            reason, message = killed
            return PodStatus(
                phase=PodPhase.FAILED,
                exit_code=137 if code is None else code,
                reason=reason,
                message=message,
                **common,
            )
        if code is None:
            message = (
                "stopped by lockstep"
                if state.stop_deadline is not None
                else "the pod's process ended without recording an exit status"
            )
            return PodStatus(phase=PodPhase.FAILED, message=message, **common)
        said = _termination_message(files.termination_message(state.attempt))
        return PodStatus(
            phase=PodPhase.SUCCEEDED if code == 0 else PodPhase.FAILED,
            exit_code=code,
            message=processes.describe_exit(code) if said is None else said,
            explained=said is not None,
            **common,
        )

    # --- recovery -----------------------------------------------------------------------

    def _readopt(self) -> None:
        """Watch every live pod left by a previous run of lockstep, and collect the output of
        every pod not swept yet (one that ended meanwhile may have left lines in its pipe)."""
        for workload_dir in (p for p in self._root.iterdir() if p.is_dir()):
            for files in _pods_in(workload_dir):
                with contextlib.suppress(FileNotFoundError):
                    state = files.read_state()
                    if state.pid is not None and not state.swept:
                        self._logs.attach(files)
                    if self._alive(state):
                        self._adopt(workload_dir.name, files, state)


def _pods_in(workload_dir: Path) -> list[PodFiles]:
    """The pods of a workload's directory, by name (not its other directories, such as
    MPI's)."""
    return [
        PodFiles(path)
        for path in sorted(workload_dir.iterdir())
        if path.is_dir() and path.name != MPI_DIRECTORY
    ]


def _bindings(ports: WorkloadPorts) -> list[PortBinding]:
    return [binding for bindings in ports.containers.values() for binding in bindings]


def _close(inherited: Sequence[processes.Inherited]) -> None:
    for kept in inherited:
        with contextlib.suppress(OSError):
            os.close(kept.descriptor)


def describe(limit: int | None) -> str:
    return "(unknown)" if limit is None else binary_quantity(limit)


def _confined(state: PodState) -> Confined:
    return Confined(
        cpus=None if state.cpus is None else tuple(state.cpus),
        cgroup=state.cgroup,
        pids_group=state.pids_group,
    )


def write_hosts(path: Path, plan: ReplicaPlan) -> None:
    """The /etc/hosts of the workload's sandboxed pods: this machine's, and each pod's name on
    a loopback address of its own, as a headless Service names a job's pods. Each pod has its
    own host name (its name), which frameworks tell nodes apart by: torchrun's rendezvous
    names a node by its fully qualified name (the name its address resolves back to) and pid,
    and every pod has a pid namespace of its own. MPI's pods are not named there: mpirun would
    take a worker that resolves to this machine for itself, and start its ranks without the
    worker's agent."""
    if path.exists():
        return
    try:
        machine = Path("/etc/hosts").read_text()
    except OSError:
        machine = "127.0.0.1\tlocalhost\n"
    mpi_pods = plan.framework is DistributedFramework.MPI
    names = [] if mpi_pods else [replica.pod_name for replica in plan.replicas]
    lines = "".join(f"{pod_address(i)}\t{name}\n" for i, name in enumerate(names))
    temporary = path.with_suffix(".tmp")
    temporary.write_text(f"{machine.rstrip()}\n# the pods of this workload\n{lines}")
    temporary.replace(path)


def pod_address(index: int) -> str:
    """The loopback address the `index`-th pod of a workload is named at (127.1.0.1 on: every
    127.x address reaches this machine)."""
    return f"127.1.{index // 250}.{index % 250 + 1}"


def _remove_all_but_logs(files: PodFiles) -> None:
    """Forget a pod but keep what it printed: the state goes first, so that a crash midway
    leaves a pod that is not there rather than a broken one."""
    files.state.unlink(missing_ok=True)
    for path in files.directory.iterdir():
        if path in {files.log, files.rotated_log}:
            continue
        if path.is_dir() and not path.is_symlink():  # its root layer, its volumes' places
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return None


TERMINATION_MESSAGE_BYTES = 4096
"""As much of a termination message as is kept (Kubernetes keeps as much)."""


def _termination_message(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            return handle.read(TERMINATION_MESSAGE_BYTES).decode(errors="replace").strip() or None
    except FileNotFoundError:
        return None


def tail_lines(path: Path, count: int, *, block: int = 8192) -> list[str]:
    """The last `count` lines of a file, read from its end."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return []
    with handle:
        end = handle.seek(0, os.SEEK_END)
        data = b""
        position = end
        while position > 0 and data.count(b"\n") <= count:
            position = max(0, position - block)
            handle.seek(position)
            data = handle.read(end - position)
    return [line.decode(errors="replace") for line in data.splitlines()[-count:]]
