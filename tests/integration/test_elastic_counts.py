"""An elastic PyTorch workload is its worker pods only (no master): the API's `requestedPods`
and `runningPods`, and `lockstep training list` built on them, report those pods — two of two
for `numWorkers 2, minReplicas 2, maxReplicas 2` — not a master that never runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api, poll
from tests.support.requests import distributed
from tests.support.server import LiveServer

SLEEP = "-c 'import time; time.sleep(600)'"


def _lockstep(config: Path, *args: str) -> str:
    """`lockstep ARGS…` as a user runs it, with its own config file; its standard output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKSTEP_")}
    done = subprocess.run(
        [sys.executable, "-m", "lockstep", *args],
        env=env | {"LOCKSTEP_CONFIG": str(config), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    return done.stdout


def _running(api: Api, workload_id: str, pods: int) -> dict[str, Any] | None:
    """The workload once it runs with `pods` pods running (None before)."""
    item = api.workload(workload_id)
    return item if item["phase"] == "Running" and item["runningPods"] == pods else None


def test_elastic_workload_requests_and_runs_its_workers_only(
    live_server: LiveServer, tmp_path: Path
) -> None:
    api = live_server.api()
    body = distributed(
        api.cluster_id(),
        name="pair",
        workers=2,
        args=SLEEP,
        minReplicas=2,
        maxReplicas=2,
    )
    workload_id = api.create(body)["workloadId"]
    item = poll(
        lambda: _running(api, workload_id, 2),
        timeout=90,
        what=lambda: f"pair running its 2 pods: {api.workload(workload_id)}",
    )
    assert item["requestedPods"]["number"] == 2
    assert (item["requestedPods"]["min"], item["requestedPods"]["max"]) == (2, 2)
    pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
    assert sorted(p["name"] for p in pods) == ["pair-worker-0", "pair-worker-1"]
    (listed,) = [w for w in api.get("/api/v1/workloads").json()["workloads"] if w["name"] == "pair"]
    assert (listed["runningPods"], listed["requestedPods"]["number"]) == (2, 2)

    # A fixed gang still counts its master: 1 master + 2 workers.
    fixed = api.create(distributed(api.cluster_id(), name="fixed", workers=2, args=SLEEP))
    assert api.workload(fixed["workloadId"])["requestedPods"]["number"] == 3

    config = tmp_path / "config.json"
    login = ("login", "--url", live_server.url, "--client-id", ADMIN_ID)
    _lockstep(config, *login, "--client-secret", ADMIN_SECRET)
    rows = {
        line.split()[0]: line.split() for line in _lockstep(config, "training", "list").splitlines()
    }
    assert rows["pair"][-2] == "2/2", rows  # RUNNING, before AGE
    assert rows["fixed"][-2].endswith("/3"), rows
    listed_json = json.loads(_lockstep(config, "training", "list", "--json"))
    (pair,) = [w for w in listed_json if w["name"] == "pair"]
    assert pair["requestedPods"]["number"] == 2

    for workload in (workload_id, fixed["workloadId"]):
        assert api.delete(f"/api/v1/workloads/distributed/{workload}").status_code == 202
    for workload in (workload_id, fixed["workloadId"]):
        api.wait_gone(workload, timeout=90)
