"""The samples in the store, on each backend, with the clock the test gives: a sampling round
written in one batch, full resolution for a day then 5-minute averages for 30 days, rolled up
a bounded slice per round; and the sampler's round over a real process that carries a pod's
marker, as the local runtime leaves it on disk."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import inspect

from lockstep.domain.gpus import GpuReading
from lockstep.domain.metrics import Sample, Sampled, Window, averages
from lockstep.runtimes.local import processes
from lockstep.runtimes.local.processes import POD_MARKER
from lockstep.runtimes.local.sample_store import recorder
from lockstep.runtimes.local.sampling.sampler import Sampler
from lockstep.runtimes.local.sampling.usage import proc_cpu_seconds
from lockstep.runtimes.local.state import PodFiles, PodState
from lockstep.store.database import _MIGRATIONS, Database
from lockstep.store.metrics import SampleScope
from tests.support.api import poll

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
EVERY = timedelta(seconds=15)


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    store = Database(database_url)
    store.migrate()
    yield store
    store.dispose()


def taken(start: datetime, count: int, *, value: float = 1.0, pod: str = "w-0") -> list[Sample]:
    return [
        Sample(start + EVERY * i, "w", pod, "node", Sampled.CPU_USAGE_CORES, value + i % 2)
        for i in range(count)
    ]


def stored(database: Database, start: datetime, end: datetime) -> list[Sample]:
    with database.read() as unit:
        return unit.metrics.samples(
            SampleScope(workload_id="w"), {Sampled.CPU_USAGE_CORES}, start=start, end=end
        )


def test_samples_past_a_day_become_five_minute_averages_and_past_30_days_go(
    database: Database,
) -> None:
    two_days_ago = NOW - timedelta(days=2)
    old = taken(two_days_ago, 40)  # 10 minutes: two whole 5-minute buckets
    fresh = taken(NOW - timedelta(minutes=1), 4)
    expired = taken(NOW - timedelta(days=31), 20)
    record = recorder(database)
    record(NOW - timedelta(days=31), expired)  # rolled up while they were a day old...
    record(NOW - timedelta(days=29), [])  # ...by a round of that time
    record(two_days_ago, old)
    window = Window(two_days_ago, two_days_ago + timedelta(minutes=10), 1)
    before = averages(stored(database, window.start, window.end), window)

    record(NOW, fresh)

    rolled = stored(database, window.start, window.end)
    assert len(rolled) == 2
    assert sum(s.weight for s in rolled) == 40
    assert {s.at for s in rolled} == {
        two_days_ago + timedelta(minutes=2.5),
        two_days_ago + timedelta(minutes=7.5),
    }
    assert averages(rolled, window) == before
    assert stored(database, NOW - timedelta(days=32), NOW - timedelta(days=30)) == []
    assert stored(database, NOW - timedelta(minutes=2), NOW) == fresh


def test_each_round_rolls_up_a_bounded_slice(database: Database) -> None:
    start = NOW - timedelta(days=3)
    with database.write() as unit:
        unit.metrics.insert(taken(start, 100))
    changed = []
    for _ in range(4):
        with database.write() as unit:
            changed.append(unit.metrics.maintain(NOW, limit=30))
    assert changed == [30, 30, 30, 10]
    rolled = stored(database, start, NOW)
    assert sum(s.weight for s in rolled) == 100
    assert all(s.weight > 1 for s in rolled[:-1])


class OneGpu:
    def read(self, indices: Sequence[int]) -> list[GpuReading]:
        return [GpuReading(i, 80.0, 2**30) for i in indices]

    @property
    def unavailable(self) -> str | None:
        return None

    def close(self) -> None:
        pass


@pytest.fixture
def burning(tmp_path: Path) -> Iterator[tuple[Path, str, subprocess.Popen[bytes]]]:
    """A runtime directory with one running pod (a real process burning CPU, carrying the
    pod's marker, no cgroup) and one pending pod."""
    root = tmp_path / "runtime"
    uid = str(uuid.uuid4())
    process = subprocess.Popen(
        [sys.executable, "-c", "while True: pass"], env={**os.environ, POD_MARKER: uid}
    )
    try:
        ticks = poll(
            lambda: processes.start_ticks(process.pid), timeout=10, what="the process to start"
        )
        running = PodFiles(root / "w" / "w-worker-0")
        running.directory.mkdir(parents=True)
        running.write_state(
            PodState(
                uid=uid,
                role="worker",
                index=0,
                image="python",
                created_at=0,
                pid=process.pid,
                ticks=ticks,
                started_at=None,
                node="gpu-0",
                gpus=[1],
                gpu_share="0.5",
            )
        )
        pending = PodFiles(root / "w" / "w-worker-1")
        pending.directory.mkdir(parents=True)
        pending.write_state(
            PodState(uid=str(uuid.uuid4()), role="worker", index=1, image="python", created_at=0)
        )
        yield root, uid, process
    finally:
        process.kill()
        process.wait()


def test_a_round_samples_every_pod_that_has_not_ended(
    burning: tuple[Path, str, subprocess.Popen[bytes]],
) -> None:
    root, _, process = burning
    recorded: list[list[Sample]] = []
    monotonic = iter([100.0, 110.0])
    sampler = Sampler(
        root,
        record=lambda _, samples: recorded.append(samples),
        interval_seconds=15,
        gpus=OneGpu(),
        default_node="local",
        clock=lambda: NOW,
        monotonic=lambda: next(monotonic),
    )
    first = {(s.pod, s.metric, s.gpu): s for s in sampler.sample_once()}
    assert ("w-worker-0", Sampled.CPU_USAGE_CORES, "") not in first, "no start time: no rate"
    assert first["w-worker-0", Sampled.POD_COUNT, ""].value == 1
    assert first["w-worker-0", Sampled.RUNNING_POD_COUNT, ""].value == 1
    assert first["w-worker-0", Sampled.GPU_ALLOCATION, ""].value == 0.5
    assert first["w-worker-0", Sampled.GPU_UTILIZATION_PER_GPU, "1"].value == 80.0
    assert first["w-worker-0", Sampled.CPU_MEMORY_USAGE_BYTES, ""].value > 0
    assert first["w-worker-0", Sampled.CPU_MEMORY_USAGE_BYTES, ""].node == "gpu-0"
    assert first["w-worker-1", Sampled.POD_COUNT, ""].value == 1
    assert first["w-worker-1", Sampled.RUNNING_POD_COUNT, ""].value == 0
    assert first["w-worker-1", Sampled.POD_COUNT, ""].node == "local"
    assert not any(pod == "w-worker-1" and m is Sampled.CPU_USAGE_CORES for pod, m, _ in first)

    stat = Path(f"/proc/{process.pid}/stat")
    used = proc_cpu_seconds(stat.read_text()) or 0.0
    poll(
        lambda: True if (proc_cpu_seconds(stat.read_text()) or 0.0) >= used + 0.1 else None,
        timeout=30,
        what="the process to use a tenth of a second of CPU",
    )
    second = {(s.pod, s.metric): s for s in sampler.sample_once()}
    cores = second["w-worker-0", Sampled.CPU_USAGE_CORES].value
    assert cores >= 0.1 / 10  # its CPU time over the 10 s the test's clock says passed
    assert recorded and all(s.at == NOW for s in recorded[-1])


def test_a_pod_whose_process_ended_is_not_sampled(
    burning: tuple[Path, str, subprocess.Popen[bytes]],
) -> None:
    root, _, process = burning
    process.kill()
    process.wait()
    sampler = Sampler(
        root,
        record=lambda _, __: None,
        interval_seconds=15,
        gpus=OneGpu(),
        default_node="local",
        clock=lambda: NOW,
    )
    assert {s.pod for s in sampler.sample_once()} == {"w-worker-1"}


def test_the_migration_goes_down_to_0008_and_up_again(database: Database) -> None:
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    with database.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0008")
        assert "metric_samples" not in inspect(connection).get_table_names()
    database.migrate()
    record = recorder(database)
    record(NOW, taken(NOW, 2))
    assert len(stored(database, NOW, NOW + timedelta(minutes=1))) == 2
