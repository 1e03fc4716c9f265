"""The sampler: every interval, what each pod of the local runtime uses, recorded in one batch.

It runs on a thread of its own in the reconciler's process (runtimes/local/controllers.py
starts it) and reads only the runtime's directory (runtimes/local/state.py), the pods' cgroups
or /proc, and the GPU reader: it takes no lock the runtime holds, so launches never wait for
it. Each round it takes, per pod that has not ended: POD_COUNT (1), RUNNING_POD_COUNT (1 while
its process lives), GPU_ALLOCATION (its placement's GPUs); and per pod that runs:
CPU_USAGE_CORES (CPU time since the previous round over the time between them; since its start
on the first round), CPU_MEMORY_USAGE_BYTES, and per GPU device it holds, where the reader can
read it, GPU_UTILIZATION_PER_GPU and GPU_MEMORY_USAGE_BYTES_PER_GPU. `record` gets the round's
samples (the store writes them in one transaction and does its bounded retention work).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from lockstep.domain.clock import Clock
from lockstep.domain.gpus import GpuReader, GpuReading
from lockstep.domain.metrics import Sample, Sampled
from lockstep.runtimes.local import processes
from lockstep.runtimes.local.sampling.usage import pods_processes, read_usage
from lockstep.runtimes.local.state import MPI_DIRECTORY, PodFiles, PodState

log = logging.getLogger(__name__)

Record = Callable[[datetime, list[Sample]], None]


@dataclass(frozen=True, slots=True)
class _LivePod:
    workload_id: str
    name: str
    state: PodState
    running: bool


@dataclass(frozen=True, slots=True)
class _CpuReading:
    at: float
    """Monotonic seconds."""
    cpu_seconds: float


class Sampler:
    def __init__(
        self,
        root: Path,
        *,
        record: Record,
        interval_seconds: float,
        gpus: GpuReader,
        default_node: str,
        clock: Clock,
        monotonic: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        """`root`: the local runtime's directory; `default_node`: the node of a pod the
        scheduler placed nowhere in particular (this machine's)."""
        self._root = root
        self._record = record
        self._interval = interval_seconds
        self._gpus = gpus
        self._default_node = default_node
        self._clock = clock
        self._monotonic = monotonic
        self._wall = wall_clock
        self._previous: dict[str, _CpuReading] = {}
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._gpus.unavailable is not None:
            log.info("no GPU metrics: %s", self._gpus.unavailable)
        self._thread = threading.Thread(target=self._run, name="lockstep-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self._gpus.close()

    def _run(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                self.sample_once()
            except Exception:  # a round that fails is logged; the next one tries again
                log.exception("a metrics sampling round failed")

    def sample_once(self) -> list[Sample]:
        """Take one round of samples and record them; returns them."""
        at = self._clock()
        samples = self.take(at)
        self._record(at, samples)
        return samples

    def take(self, at: datetime) -> list[Sample]:
        """One round's samples, dated `at`."""
        pods = list(self._live_pods())
        running = [p for p in pods if p.running]
        unconfined = {p.state.uid for p in running if p.state.cgroup is None}
        pids = pods_processes(unconfined)
        devices = sorted({i for p in running for i in p.state.gpus or ()})
        readings = {r.index: r for r in self._gpus.read(devices)} if devices else {}
        samples: list[Sample] = []
        for pod in pods:
            samples.extend(self._of_pod(pod, at, pids.get(pod.state.uid, ()), readings))
        running_uids = {p.state.uid for p in running}
        self._previous = {uid: r for uid, r in self._previous.items() if uid in running_uids}
        return samples

    def _of_pod(
        self,
        pod: _LivePod,
        at: datetime,
        pids: Sequence[int],
        readings: Mapping[int, GpuReading],
    ) -> list[Sample]:
        node = pod.state.node or self._default_node
        samples: list[Sample] = []

        def sample(metric: Sampled, value: float, gpu: str = "") -> None:
            samples.append(Sample(at, pod.workload_id, pod.name, node, metric, value, gpu))

        gpus = pod.state.gpus or []
        sample(Sampled.POD_COUNT, 1)
        sample(Sampled.RUNNING_POD_COUNT, 1 if pod.running else 0)
        sample(Sampled.GPU_ALLOCATION, len(gpus) * float(pod.state.gpu_share or 1))
        if not pod.running:
            return samples
        usage = read_usage(pod.state.cgroup, pids)
        if usage is not None:
            cores = self._cores(pod.state, usage.cpu_seconds)
            if cores is not None:
                sample(Sampled.CPU_USAGE_CORES, cores)
            sample(Sampled.CPU_MEMORY_USAGE_BYTES, usage.memory_bytes)
        for index in gpus:
            reading = readings.get(index)
            if reading is not None:
                sample(Sampled.GPU_UTILIZATION_PER_GPU, reading.utilization_percent, str(index))
                sample(
                    Sampled.GPU_MEMORY_USAGE_BYTES_PER_GPU, reading.memory_used_bytes, str(index)
                )
        return samples

    def _cores(self, state: PodState, cpu_seconds: float) -> float | None:
        """Cores used since the previous reading of this pod, or since it started."""
        now = self._monotonic()
        before = self._previous.get(state.uid)
        self._previous[state.uid] = _CpuReading(now, cpu_seconds)
        if before is not None and now > before.at:
            return max(0.0, (cpu_seconds - before.cpu_seconds) / (now - before.at))
        if state.started_at is None:
            return None
        elapsed = self._wall() - state.started_at
        return max(0.0, cpu_seconds / elapsed) if elapsed > 0 else None

    def _live_pods(self) -> Iterator[_LivePod]:
        """Every pod of the runtime's directory that has not ended."""
        with contextlib.suppress(FileNotFoundError):
            for workload_dir in self._root.iterdir():
                if not workload_dir.is_dir():
                    continue
                for pod_dir in workload_dir.iterdir():
                    if not pod_dir.is_dir() or pod_dir.name == MPI_DIRECTORY:
                        continue
                    try:
                        state = PodFiles(pod_dir).read_state()
                    except (OSError, ValueError, TypeError):
                        continue  # not a pod's directory, or one being written
                    if state.swept or state.error is not None:
                        continue
                    alive = (
                        state.pid is not None
                        and state.ticks is not None
                        and processes.is_alive(state.pid, state.ticks)
                    )
                    if state.pid is not None and not alive:
                        continue  # ended, not swept yet
                    yield _LivePod(workload_dir.name, pod_dir.name, state, alive)
