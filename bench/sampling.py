"""The metrics sampler's cost per pod: N real processes (idle, each carrying its pod's marker,
as the local runtime leaves them on disk), sampled round after round; reported: the time of
one round (reading every pod's state, its CPU time and memory, and building the samples) and
of writing its samples to SQLite in one transaction, per pod.

    .venv/bin/python -m bench.sampling [--pods 50] [--rounds 40]

The pods have no cgroup here, so their figures come from /proc (one pass over /proc per
round finds every pod's processes); with cgroups each pod costs two small file reads instead.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from lockstep.runtimes.local import processes
from lockstep.runtimes.local.gpus import NoGpus
from lockstep.runtimes.local.processes import POD_MARKER
from lockstep.runtimes.local.sample_store import recorder
from lockstep.runtimes.local.sampling.sampler import Sampler
from lockstep.runtimes.local.state import PodFiles, PodState
from lockstep.store.database import Database, sqlite_url


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=40)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "runtime"
        children = [_pod(root, index) for index in range(options.pods)]
        database = Database(sqlite_url(Path(scratch) / "store.db"))
        database.migrate()
        record = recorder(database)
        sampler = Sampler(
            root,
            record=lambda _, __: None,
            interval_seconds=15,
            gpus=NoGpus("benchmark"),
            default_node="local",
            clock=lambda: datetime.now(UTC),
        )
        try:
            rounds, writes = [], []
            for _ in range(options.rounds):
                at = datetime.now(UTC)
                began = time.perf_counter()
                samples = sampler.take(at)
                taken = time.perf_counter()
                record(at, samples)
                rounds.append(taken - began)
                writes.append(time.perf_counter() - taken)
        finally:
            for child in children:
                child.kill()
                child.wait()
            database.dispose()
    per_pod = {
        "pods": options.pods,
        "round_ms_per_pod": round(statistics.median(rounds) * 1000 / options.pods, 3),
        "write_ms_per_pod": round(statistics.median(writes) * 1000 / options.pods, 3),
    }
    print(json.dumps(per_pod))


def _pod(root: Path, index: int) -> subprocess.Popen[bytes]:
    uid = str(uuid.uuid4())
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3600)"], env={**os.environ, POD_MARKER: uid}
    )
    ticks = None
    while ticks is None:
        ticks = processes.start_ticks(child.pid)
    files = PodFiles(root / "bench" / f"bench-worker-{index}")
    files.directory.mkdir(parents=True)
    files.write_state(
        PodState(
            uid=uid,
            role="worker",
            index=index,
            image="python",
            created_at=time.time(),
            pid=child.pid,
            ticks=ticks,
            started_at=time.time(),
        )
    )
    return child


if __name__ == "__main__":
    main()
