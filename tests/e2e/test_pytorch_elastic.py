"""Elastic PyTorch through the API: the workload is its worker pods only (minReplicas and
maxReplicas count them), every pod runs a bare `torchrun`, which reads the elastic wiring from
PET_* variables (c10d rendezvous on worker-0, PET_NNODES "min:max") and starts a gloo
all_reduce (examples/pytorch/elastic.py) in the group the rendezvous formed."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import running
from tests.support.api import Api, poll
from tests.support.pods import pod_log, settled_pods
from tests.support.requests import EXAMPLES, distributed
from tests.support.server import LiveServer

pytest.importorskip("torch", reason="the PyTorch end-to-end tests need torch installed")

TORCHRUN = Path(sys.executable).parent / "torchrun"


def ranks_of(api: Api, workload_id: str, pods: list[str], world: int) -> list[int]:
    """Each pod's rank in a world of `world`, from its log, checking its all_reduce."""
    total = world * (world + 1) // 2
    ranks = []
    for pod in pods:
        log = pod_log(api, workload_id, pod)
        line = re.search(
            rf"^rank (\d+) of {world} on {pod}: sum {total}, expected {total}$", log, re.MULTILINE
        )
        assert line is not None, log
        ranks.append(int(line.group(1)))
        # one process per pod (PET_NPROC_PER_NODE=1), in torchrun's first and only group
        assert re.search(r"^local rank 0 of 1, node \d, restart 0$", log, re.MULTILINE), log
    return ranks


@pytest.mark.skipif(not TORCHRUN.exists(), reason=f"no torchrun next to {sys.executable}")
def test_num_workers_equal_to_min_and_max_replicas_trains_on_that_many_nodes(
    live_server: LiveServer,
) -> None:
    """What clients send for a two-node job: numWorkers, minReplicas and maxReplicas all 2.
    The workload is two worker pods, each a torchrun node, so the rendezvous of 2:2 closes
    with both and every rank sees a world of 2."""
    api = live_server.api()
    body = distributed(
        api.cluster_id(),
        name="pair",
        workers=2,
        command=str(TORCHRUN),
        args=str(EXAMPLES / "pytorch" / "elastic.py"),
        minReplicas=2,
        maxReplicas=2,
        environmentVariables=[{"name": "PET_NPROC_PER_NODE", "value": "1"}],
    )
    body["masterSpecSameAsWorker"] = True
    workload_id = api.create(body)["workloadId"]
    done = api.wait_for(workload_id, {"Completed", "Failed"}, timeout=180)
    assert done["phase"] == "Completed", done

    pods = settled_pods(api, workload_id)
    names = ["pair-worker-0", "pair-worker-1"]
    assert {p["name"]: p["k8sPhase"] for p in pods} == dict.fromkeys(names, "Succeeded")
    # The rendezvous assigns ranks in the order nodes joined, not by pod index: each rank
    # of the world appears exactly once.
    assert sorted(ranks_of(api, workload_id, names, world=2)) == [0, 1]


@pytest.mark.skipif(not TORCHRUN.exists(), reason=f"no torchrun next to {sys.executable}")
def test_torchrun_rendezvous_across_three_workers_completes(live_server: LiveServer) -> None:
    """numWorkers 3 with minReplicas 2 / maxReplicas 3: the three workers run torchrun with
    PET_NNODES "2:3", so the rendezvous closes as soon as its third node joins and every rank
    sees a world of 3. A worker completing completes the workload, and only after torchrun's
    exit barrier, so every pod has printed by then."""
    api = live_server.api()
    body = distributed(
        api.cluster_id(),
        name="elastic",
        workers=3,
        command=str(TORCHRUN),
        args=str(EXAMPLES / "pytorch" / "elastic.py"),
        minReplicas=2,
        maxReplicas=3,
        environmentVariables=[{"name": "PET_NPROC_PER_NODE", "value": "1"}],
    )
    workload_id = api.create(body)["workloadId"]
    done = api.wait_for(workload_id, {"Completed", "Failed"}, timeout=180)
    assert done["phase"] == "Completed", done

    pods = settled_pods(api, workload_id)
    names = ["elastic-worker-0", "elastic-worker-1", "elastic-worker-2"]
    assert sorted(str(p["name"]) for p in pods) == names
    assert sorted(ranks_of(api, workload_id, names, world=3)) == [0, 1, 2]


def test_bounds_that_cannot_hold_the_workers_are_refused(live_server: LiveServer) -> None:
    """numWorkers outside [minReplicas, maxReplicas], or a master of its own: 400 naming the
    field and the rule, and nothing stored."""
    api = live_server.api()
    before = api.get("/api/v1/workloads/count").json()["count"]
    cases: list[tuple[dict[str, Any], dict[str, Any], str, str]] = [
        (
            {"minReplicas": 1, "maxReplicas": 1},
            {},
            "spec.numWorkers",
            "less than or equal to maxReplicas",
        ),
        (
            {"minReplicas": 3, "maxReplicas": 4},
            {},
            "spec.numWorkers",
            "greater than or equal to minReplicas",
        ),
        (
            {"minReplicas": 2, "maxReplicas": 2},
            {"masterSpecSameAsWorker": False, "masterSpec": {"image": "python:3.12"}},
            "masterSpec",
            "no master pod",
        ),
    ]
    for elastic, top, field, rule in cases:
        body = {**distributed(api.cluster_id(), name="refused", workers=2, **elastic), **top}
        response = api.post("/api/v1/workloads/distributed", json=body)
        assert response.status_code == 400, response.text
        error = response.json()
        assert error["code"] == 400
        assert error["message"].startswith(f"{field}: "), error
        assert rule in error["message"], error
    assert api.get("/api/v1/workloads/count").json()["count"] == before


@pytest.mark.skipif(not TORCHRUN.exists(), reason=f"no torchrun next to {sys.executable}")
def test_with_room_for_its_minimum_only_the_elastic_job_trains_with_fewer_nodes(
    tmp_path: Path, sqlite_url: str
) -> None:
    """The server's one node has 2 CPU cores and each pod asks for 1: worker-0 and worker-1
    (minReplicas 2) start, worker-2 waits for room, and torchrun's rendezvous closes with the
    two nodes that came (after a last call of 1 s instead of 30), so the world is 2."""
    nodes = '[{"name": "small", "cpu_cores": 2}]'
    with running(LiveServer(tmp_path / "data", sqlite_url, settings={"NODES": nodes})) as server:
        api = server.api()
        body = distributed(
            api.cluster_id(),
            name="short",
            workers=3,
            command=str(TORCHRUN),
            args=str(EXAMPLES / "pytorch" / "elastic.py"),
            minReplicas=2,
            maxReplicas=3,
            compute={"cpuCoreRequest": 1},
            environmentVariables=[
                {"name": "PET_NPROC_PER_NODE", "value": "1"},
                {"name": "PET_RDZV_CONF", "value": "last_call_timeout=1"},
            ],
        )
        workload_id = api.create(body)["workloadId"]

        def waiting() -> dict[str, str] | None:
            pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
            phases = {p["name"]: p["k8sPhase"] for p in pods}
            return phases if phases.get("short-worker-2") == "Pending" else None

        poll(waiting, timeout=60, what="worker-2 listed as waiting for room")
        done = api.wait_for(workload_id, {"Completed", "Failed"}, timeout=180)
        assert done["phase"] == "Completed", done
        names = ["short-worker-0", "short-worker-1"]
        assert sorted(ranks_of(api, workload_id, names, world=2)) == [0, 1]
