"""Elastic PyTorch through the API: every pod runs a bare `torchrun`, which reads the elastic
wiring from PET_* variables (c10d rendezvous on worker-0, PET_NNODES "min:max") and starts a
gloo all_reduce (examples/pytorch/elastic.py) in the group the rendezvous formed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.conftest import running
from tests.support.api import poll
from tests.support.pods import pod_log, settled_pods
from tests.support.requests import EXAMPLES, distributed
from tests.support.server import LiveServer

pytest.importorskip("torch", reason="the PyTorch end-to-end tests need torch installed")

TORCHRUN = Path(sys.executable).parent / "torchrun"


@pytest.mark.skipif(not TORCHRUN.exists(), reason=f"no torchrun next to {sys.executable}")
def test_torchrun_rendezvous_across_master_and_two_workers_completes(
    live_server: LiveServer,
) -> None:
    """numWorkers 2 with minReplicas 2 / maxReplicas 3: the master and both workers run
    torchrun with PET_NNODES "2:3", so the rendezvous closes as soon as its third node joins
    and every rank sees a world of 3. The master completing completes the workload, and only
    after torchrun's exit barrier, so every pod has printed by then."""
    api = live_server.api()
    body = distributed(
        api.cluster_id(),
        name="elastic",
        workers=2,
        command=str(TORCHRUN),
        args=str(EXAMPLES / "pytorch" / "elastic.py"),
        minReplicas=2,
        maxReplicas=3,
        environmentVariables=[{"name": "PET_NPROC_PER_NODE", "value": "1"}],
    )
    created = api.create(body)
    workload_id = created["workloadId"]
    done = api.wait_for(workload_id, {"Completed", "Failed"}, timeout=180)
    assert done["phase"] == "Completed", done

    pods = settled_pods(api, workload_id)
    names = ["elastic-master-0", "elastic-worker-0", "elastic-worker-1"]
    assert sorted(str(p["name"]) for p in pods) == names
    assert {p["name"]: p["k8sPhase"] for p in pods} == dict.fromkeys(names, "Succeeded")

    ranks: dict[str, int] = {}
    for pod in names:
        log = pod_log(api, workload_id, pod)
        line = re.search(rf"^rank (\d+) of 3 on {pod}: sum 6, expected 6$", log, re.MULTILINE)
        assert line is not None, log
        ranks[pod] = int(line.group(1))
        # one process per pod (PET_NPROC_PER_NODE=1), in torchrun's first and only group
        assert re.search(r"^local rank 0 of 1, node \d, restart 0$", log, re.MULTILINE), log
    # The rendezvous assigns ranks in the order nodes joined, not by pod index: each rank
    # of the world appears exactly once.
    assert sorted(ranks.values()) == [0, 1, 2], ranks


@pytest.mark.skipif(not TORCHRUN.exists(), reason=f"no torchrun next to {sys.executable}")
def test_with_room_for_its_minimum_only_the_elastic_job_trains_with_fewer_nodes(
    tmp_path: Path, sqlite_url: str
) -> None:
    """The server's one node has 2 CPU cores and each pod asks for 1: the master and worker-0
    (minReplicas 2) start, worker-1 waits for room, and torchrun's rendezvous closes with the
    two nodes that came (after a last call of 1 s instead of 30), so the world is 2."""
    nodes = '[{"name": "small", "cpu_cores": 2}]'
    with running(LiveServer(tmp_path / "data", sqlite_url, settings={"NODES": nodes})) as server:
        api = server.api()
        body = distributed(
            api.cluster_id(),
            name="short",
            workers=2,
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
            return phases if phases.get("short-worker-1") == "Pending" else None

        poll(waiting, timeout=60, what="worker-1 listed as waiting for room")
        done = api.wait_for(workload_id, {"Completed", "Failed"}, timeout=180)
        assert done["phase"] == "Completed", done
        ranks = set()
        for pod in ("short-master-0", "short-worker-0"):
            log = pod_log(api, workload_id, pod)
            line = re.search(rf"^rank (\d+) of 2 on {pod}: sum 3, expected 3$", log, re.MULTILINE)
            assert line is not None, log
            ranks.add(int(line.group(1)))
        assert ranks == {0, 1}
