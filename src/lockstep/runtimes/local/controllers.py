"""Where the local runtime's reconciler and the runtime itself run: in this process, on a
thread, or in a child process of their own (`lockstep serve`) — see `Placement`
(reconciler/control.py).

In a child process they get a core of their own instead of contending with the API for the
interpreter lock. The process that started the child tells it which workloads changed through
a pipe; the child exits when the pipe closes, and is restarted if it dies. Pods outlive both: a
restarted reconciler re-adopts them.

When several API processes serve one PostgreSQL store (LOCKSTEP_API_PROCESSES, cli/serve.py),
the server's parent process starts the child, and the API processes tell it of changes through
a named pipe in the data dir instead (`SiblingController`, fifo.py); the child then reconciles
while it holds the store's leadership lock, which is how the API processes know that it runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from lockstep.auth.sealing import Sealer
from lockstep.config import Settings
from lockstep.domain.clock import Clock
from lockstep.domain.gpus import GpuReader
from lockstep.domain.secrets import ProjectSecrets
from lockstep.observability.instruments import Instruments, forget_process
from lockstep.reconciler.control import Controller, Placement
from lockstep.reconciler.fifo import FifoWriter, read_lines
from lockstep.reconciler.leader import LeaderController
from lockstep.reconciler.queue import WorkQueue
from lockstep.runtimes.base import Runtime
from lockstep.runtimes.local import machine
from lockstep.runtimes.local.pod_bounds import bounds_of
from lockstep.runtimes.local.reconciler import LocalReconciler, LocalReconcilerSettings
from lockstep.runtimes.local.runtime import LocalRuntime
from lockstep.runtimes.local.sample_store import sampler
from lockstep.runtimes.local.sandbox.policy import SandboxPolicy, policy_of
from lockstep.scheduler.quota.fair_share import TimeAware
from lockstep.store.database import Database
from lockstep.store.leadership import AdvisoryLock, someone_leads

log = logging.getLogger(__name__)

NOTIFY_FD = "LOCKSTEP_NOTIFY_FD"
SETTINGS = "LOCKSTEP_RECONCILER_SETTINGS"
"""The API's settings as JSON, so the child runs with exactly them (flags included)."""
RESTART_DELAY_SECONDS = 1.0
NOTIFICATION_PIPE = "reconciler-notifications"
"""Under the data dir: the named pipe of a server with several API processes (fifo.py)."""
LIVENESS_CHECK_SECONDS = 1.0
"""How often a reconciler process shared by several API processes checks that it reconciles."""


class ThreadController:
    """The reconciler on a thread of this process, driving `runtime` (the local one unless
    another is given)."""

    def __init__(
        self,
        database: Database,
        settings: Settings,
        *,
        clock: Clock,
        runtime: Runtime | None = None,
        instruments: Instruments | None = None,
        gpus: GpuReader | None = None,
        queue: WorkQueue | None = None,
    ) -> None:
        """`gpus`: what the local runtime's sampler reads GPUs with (NVML by default);
        `queue`: the workloads to reconcile, a new one unless given."""
        self.queue = queue or WorkQueue()
        self.sampler = (
            None if runtime is not None else sampler(database, settings, clock=clock, gpus=gpus)
        )
        self.runtime = runtime or LocalRuntime(
            settings.runtime_dir,
            on_change=self.queue.add,
            sandboxes=_sandboxes(settings),
            bounds=bounds_of(settings),
            log_max_bytes=settings.pod_log_max_bytes,
            cgroup_dir=settings.cgroup_dir,
            image_environments=settings.image_environments,
            nodes=machine.nodes(settings.nodes),
            values=lambda project_id: _project_secrets(database, project_id),
        )
        self.reconciler = LocalReconciler(
            database,
            self.runtime,
            clock=clock,
            queue=self.queue,
            settings=LocalReconcilerSettings(
                resync_seconds=settings.resync_seconds,
                restart_backoff_seconds=settings.restart_backoff_seconds,
                time_aware=TimeAware(settings.fair_share_k_value)
                if settings.time_aware_fair_share
                else None,
                usage_half_life_seconds=settings.fair_share_half_life_seconds,
                max_pods_per_project=settings.max_pods_per_project or None,
            ),
            instruments=instruments,
        )

    def start(self) -> None:
        self.reconciler.start()
        if self.sampler is not None:
            self.sampler.start()

    def notify(self, workload_id: str) -> None:
        self.queue.add(workload_id)

    def reconciler_runs(self) -> bool:
        return self.reconciler.running

    def stop(self) -> None:
        if self.sampler is not None:
            self.sampler.stop()
        self.reconciler.stop()
        self.runtime.close()


class ProcessController:
    """The reconciler and the local runtime in a supervised child process."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._process: subprocess.Popen[bytes] | None = None
        self._pipe: int | None = None
        self._lock = threading.Lock()
        self._stopping = False
        self._supervisor: threading.Thread | None = None

    def start(self) -> None:
        self._spawn()
        self._supervisor = threading.Thread(
            target=self._supervise, name="lockstep-reconciler-supervisor", daemon=True
        )
        self._supervisor.start()

    def _spawn(self) -> None:
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("LOCKSTEP_BOOTSTRAP_")
        }
        env |= {
            SETTINGS: self._settings.model_dump_json(
                exclude={"bootstrap_client_id", "bootstrap_client_secret"}
            ),
            NOTIFY_FD: str(read_end),
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "lockstep.runtimes.local.controllers"],
            env=env,
            pass_fds=[read_end],
            stdin=subprocess.DEVNULL,
        )
        os.close(read_end)
        with self._lock:
            self._process, self._pipe = process, write_end

    def _supervise(self) -> None:
        while True:
            process = self._process
            assert process is not None
            code = process.wait()
            forget_process(process.pid)
            if self._stopping:
                return
            log.error("the reconciler process exited with %s; restarting it", code)
            with self._lock:
                if self._pipe is not None:
                    os.close(self._pipe)
                    self._pipe = None
            time.sleep(RESTART_DELAY_SECONDS)
            if self._stopping:
                return
            self._spawn()

    def notify(self, workload_id: str) -> None:
        with self._lock:
            if self._pipe is None:
                return  # restarting: the new process reconciles everything live
            try:
                os.write(self._pipe, workload_id.encode() + b"\n")
            except BlockingIOError:
                log.warning("the reconciler is behind; %s waits for its next resync", workload_id)
            except BrokenPipeError:
                pass  # it is being restarted

    def reconciler_runs(self) -> bool:
        process = self._process
        return process is not None and process.poll() is None and not self._stopping

    def stop(self) -> None:
        self._stopping = True
        with self._lock:
            if self._pipe is not None:
                os.close(self._pipe)
                self._pipe = None
        process = self._process
        if process is None:
            return
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class SiblingController:
    """One of several API processes: the reconciler runs in a sibling process (see
    `Placement.SIBLING`), told of each change through the server's named pipe; it runs while
    some process holds the store's leadership lock."""

    def __init__(self, database: Database, settings: Settings) -> None:
        self._database = database
        self._pipe = FifoWriter(notification_pipe(settings))

    def start(self) -> None:
        pass

    def notify(self, workload_id: str) -> None:
        self._pipe.write(workload_id)

    def reconciler_runs(self) -> bool:
        return someone_leads(self._database)

    def stop(self) -> None:
        self._pipe.close()


def controller_for(
    placement: Placement,
    database: Database,
    settings: Settings,
    *,
    clock: Clock,
    runtime: Runtime | None = None,
    instruments: Instruments | None = None,
    gpus: GpuReader | None = None,
) -> Controller:
    """The controller of the API's reconciler where `placement` puts it (`runtime`,
    `instruments` and `gpus` are those of a reconciler on a thread of this process)."""
    if placement is Placement.CHILD:
        return ProcessController(settings)
    if placement is Placement.SIBLING:
        return SiblingController(database, settings)
    return ThreadController(
        database, settings, clock=clock, runtime=runtime, instruments=instruments, gpus=gpus
    )


def notification_pipe(settings: Settings) -> Path:
    """Where the API processes of a server with several tell its reconciler of changes."""
    return settings.data_dir / NOTIFICATION_PIPE


def _sandboxes(settings: Settings) -> SandboxPolicy:
    """The local runtime's sandbox policy, said in the log at start-up when pods will have none."""
    policy = policy_of(settings)
    if policy.sandboxing is None:
        log.warning("the sandbox is off: pods run unisolated, each told what is not applied")
    elif not policy.sandboxing.available:
        log.warning(
            "no sandbox for pods: %s; pods that need one (storage, identity, privileges) are "
            "refused, LOCKSTEP_SANDBOX=off runs them unisolated",
            policy.sandboxing.problem,
        )
    if policy.networking is not None and not policy.networking.available:
        log.warning(
            "pods share this machine's network, its loopback included: %s; "
            "LOCKSTEP_POD_NETWORK=host says that this is meant",
            policy.networking.problem,
        )
    return policy


def _project_secrets(database: Database, project_id: str) -> ProjectSecrets:
    with database.read() as unit:
        return unit.secrets.for_project(project_id)


def _serve_notifications(descriptor: int, notify: Callable[[str], None]) -> None:
    """Hand each workload id from the parent's pipe to `notify`; return when the parent is
    gone (the pipe closed)."""
    with os.fdopen(descriptor, "rb") as pipe:
        for line in pipe:
            workload_id = line.strip().decode()
            if workload_id:
                notify(workload_id)


def _reconcile_alone(database: Database, settings: Settings, instruments: Instruments) -> None:
    """The child of one API process: it reconciles until the API closes the pipe."""
    from lockstep.domain.clock import utc_now

    controller = ThreadController(database, settings, clock=utc_now, instruments=instruments)

    def serve_the_api() -> None:
        _serve_notifications(int(os.environ[NOTIFY_FD]), controller.queue.add)
        controller.queue.close()

    threading.Thread(target=serve_the_api, name="lockstep-notifications", daemon=True).start()
    if controller.sampler is not None:
        controller.sampler.start()
    controller.reconciler.run()
    if controller.sampler is not None:
        controller.sampler.stop()
    controller.runtime.close()


def _reconcile_for_siblings(
    database: Database, settings: Settings, instruments: Instruments
) -> int:
    """The child of a server with several API processes: it reconciles while it holds the
    store's leadership, told of changes through the named pipe (and the pipe it inherited),
    until its parent closes the pipe it inherited. Returns its exit status: 1 when its
    reconciler stopped on its own (its parent starts another)."""
    from lockstep.domain.clock import utc_now

    acting: list[ThreadController] = []

    def act(queue: WorkQueue) -> ThreadController:
        acting[:] = [
            ThreadController(
                database, settings, clock=utc_now, instruments=instruments, queue=queue
            )
        ]
        return acting[0]

    leader = LeaderController(AdvisoryLock(database), act)
    threading.Thread(
        target=read_lines,
        args=(notification_pipe(settings), leader.notify),
        name="lockstep-notifications",
        daemon=True,
    ).start()
    parent_gone = threading.Event()

    def wait_for_the_parent() -> None:
        _serve_notifications(int(os.environ[NOTIFY_FD]), leader.notify)
        parent_gone.set()

    threading.Thread(target=wait_for_the_parent, name="lockstep-parent", daemon=True).start()
    leader.start()
    status = 0
    while not parent_gone.wait(LIVENESS_CHECK_SECONDS):
        if leader.leading.is_set() and acting and not acting[0].reconciler_runs():
            log.error("the reconciler stopped on its own; its process exits to be restarted")
            status = 1
            break
    leader.stop()
    return status


def main() -> None:
    """The child process: the reconciler and the local runtime until its parent goes away."""
    from lockstep.logs import configure_logging
    from lockstep.tuning import tune_garbage_collection

    settings = Settings.model_validate_json(os.environ[SETTINGS])
    configure_logging(settings)
    database = Database(
        settings.resolved_database_url, sealer=Sealer.from_file(settings.sealing_key_path)
    )
    instruments = Instruments()  # shared with the API through the directory it inherited
    database.on_commit = instruments.observe_commit
    tune_garbage_collection()
    status = 0
    if settings.api_processes > 1:
        status = _reconcile_for_siblings(database, settings, instruments)
    else:
        _reconcile_alone(database, settings, instruments)
    with contextlib.suppress(Exception):
        database.dispose()
    sys.exit(status)


if __name__ == "__main__":
    main()
