"""A project that sets only a GPU quota, through the API of an in-process server with a virtual
node of 8 GPUs (its pods real processes): its CPU and memory quotas are not enforced, so its
non-preemptible workloads (priority class `build`, workspaces) run within its GPUs whatever
CPU they ask, and the one beyond them waits naming the GPU quota; the quota figures it shows —
the scheduling queue, metrics, telemetry, the Prometheus exposition — are finite numbers
(-1 where unlimited)."""

from __future__ import annotations

import math
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lockstep.config import NodeSettings, Settings
from lockstep.domain.clock import iso
from tests.conftest import make_settings
from tests.support.api import Api, poll
from tests.support.requests import single_pod, sleeping

PROJECTS = "/api/v1/org-unit/projects"
DEPARTMENTS = "/api/v1/org-unit/departments"
SLEEP = "-c 'import time; time.sleep(600)'"
A_HUNDREDTH = {"cpuCoreRequest": 0.01}


@pytest.fixture
def settings(tmp_path: Path, sqlite_url: str) -> Settings:
    configured = make_settings(tmp_path / "data", sqlite_url)
    node = NodeSettings(name="gpu-0", cpu_cores=64, memory="256Gi", gpus=8)
    return configured.model_copy(update={"nodes": [node]})


def gpu_only(gpus: float) -> list[dict[str, Any]]:
    return [{"gpu": {"deserved": gpus, "limit": -1, "overQuotaWeight": 1}}]


def department(api: Api, name: str, gpus: float) -> str:
    body = {"name": name, "clusterId": api.cluster_id(), "resources": gpu_only(gpus)}
    response = api.post(DEPARTMENTS, json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def project(api: Api, name: str, gpus: float, parent: str) -> str:
    body = {
        "name": name,
        "clusterId": api.cluster_id(),
        "parentId": parent,
        "resources": gpu_only(gpus),
    }
    response = api.post(PROJECTS, json=body)
    assert response.status_code == 201, response.text
    assert "cpu" not in response.json()["resources"][0]
    return str(response.json()["id"])


def build(api: Api, project_id: str, name: str) -> str:
    """A distributed workload of priority class `build` (not preemptible): a 0-GPU master and
    one 1-GPU worker, each asking 0.01 cores."""
    body = sleeping(
        api.cluster_id(),
        name=name,
        project_id=project_id,
        workers=1,
        compute={"gpuDevicesRequest": 1, **A_HUNDREDTH},
        priorityClass="build",
    )
    body["masterSpecSameAsWorker"] = False
    body["masterSpec"] = {
        "image": "python:3.11",
        "command": sys.executable,
        "args": SLEEP,
        "compute": A_HUNDREDTH,
    }
    return str(api.create(body)["workloadId"])


def phases(api: Api, ids: dict[str, str]) -> dict[str, str]:
    return {name: api.workload(workload_id)["phase"] for name, workload_id in ids.items()}


def test_a_gpu_only_project_runs_its_non_preemptible_workloads_within_its_gpus(api: Api) -> None:
    research = department(api, "research", 8)
    team = project(api, "team-f", 2, research)
    ids = {name: build(api, team, name) for name in ("b0", "b1", "b2")}

    def settled() -> dict[str, Any] | None:
        now = phases(api, ids)
        if sorted(now.values()) != ["Pending", "Running", "Running"]:
            return None
        (waiting,) = [name for name, phase in now.items() if phase == "Pending"]
        item = api.workload(ids[waiting])
        return item if item.get("phaseReason") == "NonPreemptibleOverQuota" else None

    waiting = poll(
        settled, timeout=60, what=lambda: f"2 running, 1 waiting; saw {phases(api, ids)}"
    )
    assert waiting["phaseMessage"].startswith("project team-f has 2 deserved GPU in pool default")
    assert waiting["phaseMessage"].endswith("this one asks 1 GPU"), waiting["phaseMessage"]
    (told,) = waiting["pendingSchedulingMessages"]
    assert (told["phaseReason"], told["orgType"]) == ("NonPreemptibleOverQuota", "project")

    # A workspace (not preemptible either) of another GPU-only project runs.
    desk_project = project(api, "desk", 1, research)
    body = single_pod(
        api.cluster_id(),
        name="desk",
        project_id=desk_project,
        args=SLEEP,
        compute={"gpuDevicesRequest": 1, "cpuCoreRequest": 0.5},
        terminationGracePeriodSeconds=1,
    )
    desk = str(api.create(body, kind="workspaces")["workloadId"])
    running = api.wait_for(desk, {"Running"})
    assert running["preemptible"] is False

    # The scheduling queue shows team-f's shares: CPU unlimited (-1), the rest as found.
    def shares() -> dict[str, Any] | None:
        response = api.get("/api/v1/scheduling/queue", params={"projectId": team})
        assert response.status_code == 200, response.text
        (only,) = response.json()["projects"]
        pools = only["nodePools"]
        return pools[0] if pools and pools[0]["cpu"]["allocated"] == 40 else None

    pool = poll(shares, timeout=30, what="team-f's shares with two running")
    assert pool["cpu"]["deserved"] == -1 and pool["memory"]["deserved"] == -1
    assert (pool["gpu"]["deserved"], pool["gpu"]["allocated"]) == (2, 2)
    assert pool["cpu"]["fairShare"] == pool["cpu"]["requested"] == 60


def finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def test_the_quota_figures_of_a_gpu_only_project_are_finite(api: Api) -> None:
    research = department(api, "research", 8)
    team = project(api, "team-f", 2, research)
    workload_id = build(api, team, "b0")
    api.wait_for(workload_id, {"Running"})

    now = datetime.now(UTC)
    window = {"start": iso(now - timedelta(minutes=10)), "end": iso(now + timedelta(seconds=1))}
    kinds = "GPU_QUOTA,CPU_QUOTA_MILLICORES,CPU_MEMORY_QUOTA_MB"
    for path in (f"{PROJECTS}/{team}/metrics", f"{DEPARTMENTS}/{research}/metrics"):
        response = api.get(path, params={"metricType": kinds, **window})
        assert response.status_code == 200, response.text
        figures = {
            m["type"]: {float(v["value"]) for v in m["values"]}
            for m in response.json()["measurements"]
        }
        # Not enforced: no guaranteed CPU or memory to count.
        assert figures == {
            "GPU_QUOTA": {2.0 if path.startswith(PROJECTS) else 8.0},
            "CPU_QUOTA_MILLICORES": {0.0},
            "CPU_MEMORY_QUOTA_MB": {0.0},
        }, (path, figures)
    for kind in ("GPU_QUOTA", "CPU_QUOTA", "MEMORY_QUOTA"):
        response = api.get(f"{PROJECTS}/telemetry", params={"telemetryType": kind})
        assert response.status_code == 200, response.text
        values = [float(v["value"]) for v in response.json()["values"]]
        assert values and all(math.isfinite(v) for v in values), (kind, values)

    status = api.get(f"{PROJECTS}/{team}").json()["status"]
    assert all(finite(v) for v in status["quotaStatus"]["allocated"].values()), status

    def exposition() -> str | None:
        text = api.get("/metrics").text
        return text if 'kai_queue_deserved_gpus{queue_name="team-f"} 2.0' in text else None

    text = poll(exposition, timeout=30, what="team-f's queue in the exposition")
    samples = [line for line in text.splitlines() if line and not line.startswith("#")]
    infinite = [line for line in samples if not math.isfinite(float(line.rsplit(" ", 1)[-1]))]
    assert infinite == []
