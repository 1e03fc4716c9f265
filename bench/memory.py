"""Resident memory of a lockstep server holding 100,000 stored workloads.

The store is filled directly (the way a long-lived installation accumulates history: mostly
finished workloads, some failed, some deleted, some still queued), then `lockstep serve`
starts on it and serves lists, counts, reads and new submissions. Reported: the resident and
peak memory of the API process and of the reconciler process, and their sum.

    .venv/bin/python -m bench.memory [--workloads 100000]

Target: ≤ 300 MB with 100,000 stored workloads (SQLite).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import insert

from bench.harness import ADMIN_ID, ADMIN_SECRET, server
from lockstep.assembly import bootstrap, open_core
from lockstep.config import Settings
from lockstep.store.tables import phase_changes, workloads

BATCH = 5_000
STATES = [("Completed", 0.7), ("Failed", 0.1), ("Pending", 0.1), ("Deleted", 0.1)]
LIFE = ("Creating", "Pending", "Initializing", "Running")
FAILED_MESSAGE = "pod run-x-worker-3 exited with code 1"


def _spec(index: int) -> dict[str, Any]:
    return {
        "spec": {
            "image": "registry.example.com/team/trainer:2026.11",
            "distributedFramework": random.choice(["PyTorch", "MPI", "TF", "XGBoost", "JAX"]),
            "numWorkers": random.randint(1, 16),
            "command": "python3",
            "args": f"train.py --run {index} --epochs 90 --lr 0.1",
            "environmentVariables": [{"name": "WANDB_PROJECT", "value": "vision"}],
            "compute": {"cpuCoreRequest": 4, "cpuMemoryRequest": "16G", "gpuDevicesRequest": 1},
            "labels": [{"name": "team", "value": "vision"}],
        }
    }


def fill(data_dir: Path, count: int) -> None:
    settings = Settings(
        data_dir=data_dir, bootstrap_client_id=ADMIN_ID, bootstrap_client_secret=ADMIN_SECRET
    )
    core = open_core(settings)
    created = bootstrap(core)
    assert created is not None
    start = datetime.now(UTC) - timedelta(days=365)
    names, weights = zip(*STATES, strict=True)
    engine = core.database.engine
    for first in range(0, count, BATCH):
        rows, history = [], []
        for index in range(first, min(first + BATCH, count)):
            state = random.choices(names, weights)[0]
            created_at = start + timedelta(seconds=index * 300)
            workload_id = str(uuid.uuid4())
            phase = "Completed" if state == "Deleted" else state
            ended = phase in {"Completed", "Failed"}
            finished = created_at + timedelta(hours=3) if ended else None
            rows.append(
                {
                    "id": workload_id,
                    "name": f"run-{index}",
                    "requested_name": f"run-{index}",
                    "project_id": int(created.project_id),
                    "department_id": int(created.department_id),
                    "cluster_id": created.cluster_id,
                    "created_by": "researcher",
                    "created_at": created_at,
                    "updated_at": finished or created_at,
                    "deleted_at": created_at + timedelta(days=1) if state == "Deleted" else None,
                    "completed_at": finished,
                    "desired_phase": "Deleted" if state == "Deleted" else "Running",
                    "actual_phase": phase,
                    "phase_message": FAILED_MESSAGE if phase == "Failed" else "",
                    "phase_updated_at": finished or created_at,
                    "framework": "PyTorch",
                    "category": "Train",
                    "priority_class": "train",
                    "priority": 50,
                    "allocated_gpus": 0.0,
                    "request": orjson.dumps(_spec(index)).decode(),
                    "running_pods": 0,
                    "parked": phase == "Pending",
                }
            )
            steps = ("Creating", "Pending") if phase == "Pending" else (*LIFE, phase)
            history += [
                {
                    "workload_id": workload_id,
                    "created_at": created_at + timedelta(seconds=step),
                    "phase": name,
                    "message": "",
                }
                for step, name in enumerate(steps)
            ]
        with engine.begin() as connection:
            connection.execute(insert(workloads), rows)
            connection.execute(insert(phase_changes), history)
    core.close()


def _rss(pid: int) -> tuple[int, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workloads", type=int, default=100_000)
    options = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="lockstep-memory-"))
    began = time.monotonic()
    fill(data_dir, options.workloads)
    print(f"filled {options.workloads} workloads in {time.monotonic() - began:.0f} s")
    with server(None, data_dir=data_dir) as running:
        for offset in range(0, 2_000, 100):
            page = f"limit=100&offset={offset}&sortBy=createdAt&sortOrder=desc"
            running.call("GET", f"/api/v1/workloads?{page}")
        running.call("GET", "/api/v1/workloads?deleted=true&limit=500")
        running.call("GET", "/api/v1/workloads/count")
        running.call("GET", "/api/v1/workloads/count?filterBy=phase==Completed")
        for index in range(100):
            body = {"name": f"new-{index}", "projectId": "1", "clusterId": running.cluster_id}
            running.call("POST", "/api/v1/workloads/distributed", {**body, **_spec(index)})
        settled = time.monotonic() + 600
        while running.call("GET", "/api/v1/workloads/count?filterBy=phase==Creating")["count"]:
            if time.monotonic() > settled:
                raise RuntimeError("the reconciler did not place the new workloads")
            time.sleep(0.2)
        api = _rss(running.process.pid)
        pid = running.process.pid
        tasks = Path(f"/proc/{pid}/task").glob("*/children")
        children = [int(child) for task in tasks for child in task.read_text().split()]
        reconciler = _rss(children[0]) if children else (0, 0)
    record = {
        "workloads": options.workloads,
        "api_rss_mib": api[0] / 1024,
        "api_peak_mib": api[1] / 1024,
        "reconciler_rss_mib": reconciler[0] / 1024,
        "reconciler_peak_mib": reconciler[1] / 1024,
        "total_rss_mib": (api[0] + reconciler[0]) / 1024,
        "total_peak_mib": (api[1] + reconciler[1]) / 1024,
    }
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
