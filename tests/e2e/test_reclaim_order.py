"""Which workloads reclaim takes, end to end: the lowest priority first, and among equal
priority the newest (the last submitted), as KAI Scheduler evicts in the reverse of its queue
order. A real `lockstep serve` with one virtual node of 8 GPUs (no real GPU is used); each
workload is a training of one pod holding 1 GPU.

Project team-a deserves 4 of the 8 GPUs and fills all 8 while team-b is idle; two of its
oldest workloads were suspended and resumed (so they started last, but were not submitted
last) and its newest asks a higher priority. team-b then submits 2: team-b gets 2 and team-a
keeps 6, losing its newest workloads of the lowest priority.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import running
from tests.support.api import Api, poll
from tests.support.requests import python, single_pod
from tests.support.server import LiveServer

NODES = json.dumps([{"name": "gpu-0", "cpu_cores": 64, "memory": "256Gi", "gpus": 8}])


@pytest.fixture
def cluster_8(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    with running(LiveServer(tmp_path / "data", sqlite_url, settings={"NODES": NODES})) as server:
        yield server


def project(api: Api, name: str, deserved: float) -> str:
    pools = api.get("/api/v1/node-pools").json()["nodepools"]
    pool = next(p for p in pools if p["name"] == "default")
    body = {
        "name": name,
        "clusterId": api.cluster_id(),
        "resources": [
            {
                "nodePool": {"id": str(pool["id"]), "name": "default"},
                "gpu": {"deserved": deserved, "limit": -1, "overQuotaWeight": 1},
            }
        ],
    }
    response = api.post("/api/v1/org-unit/projects", json=body)
    assert response.status_code in (200, 201), response.text
    return str(response.json()["id"])


def submit(api: Api, project_id: str, name: str, **spec: Any) -> str:
    body = single_pod(
        api.cluster_id(),
        name=name,
        project_id=project_id,
        args=python("import time; time.sleep(600)"),
        compute={"gpuDevicesRequest": 1},
        **spec,
    )
    return str(api.create(body, kind="trainings")["workloadId"])


def settle(api: Api, ids: dict[str, str], wanted: dict[str, str]) -> None:
    def now() -> dict[str, str]:
        return {name: api.workload(i)["phase"] for name, i in ids.items()}

    poll(lambda: now() == wanted or None, timeout=90, what=lambda: f"{wanted}; saw {now()}")


def reclaimed(api: Api, workload_id: str) -> bool:
    events = api.get(f"/api/v1/workloads/{workload_id}/events").json()["events"]
    return any(e["reason"] == "Reclaimed" for e in events)


def test_reclaim_takes_the_lowest_priority_then_the_newest(cluster_8: LiveServer) -> None:
    api = cluster_8.api()
    team_a = project(api, "team-a", 4)
    team_b = project(api, "team-b", 4)
    ids = {f"a{i}": submit(api, team_a, f"a{i}") for i in range(7)}
    ids["a7"] = submit(api, team_a, "a7", priorityClass="interactive-preemptible")
    settle(api, ids, dict.fromkeys(ids, "Running"))
    # a0 and a1 stop and start again: now the last to have started, still the first submitted.
    for name in ("a0", "a1"):
        path = f"/api/v1/workloads/trainings/{ids[name]}"
        assert api.post(f"{path}/suspend").status_code == 202
        api.wait_for(ids[name], {"Stopped"})
        assert api.post(f"{path}/resume").status_code == 202
        api.wait_for(ids[name], {"Running"})

    ids |= {"b0": submit(api, team_b, "b0"), "b1": submit(api, team_b, "b1")}
    victims = {"a5", "a6"}
    settle(api, ids, {name: "Pending" if name in victims else "Running" for name in ids})
    assert {name for name, i in ids.items() if reclaimed(api, i)} == victims
