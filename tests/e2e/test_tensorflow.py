"""Real TF runs through the API, a chief and two workers each time: a cluster check that needs
no TensorFlow (each task listens on its own TF_CONFIG address and reaches every other task over
TCP), and a few MultiWorkerMirroredStrategy training steps whose weights must agree."""

from __future__ import annotations

import importlib.util
import re

import pytest

from tests.support.pods import pod_log, settled_pods
from tests.support.requests import EXAMPLES, distributed
from tests.support.server import LiveServer

TASKS = {"chief-0": "chief 0", "worker-0": "worker 0", "worker-1": "worker 1"}
"""The pods of a chief and two workers, by name suffix, and the task each one is."""


def run_to_completion(live_server: LiveServer, *, name: str, example: str) -> str:
    """Submit `example` as a TF workload of a chief and two workers; its id once it completed
    and every pod succeeded."""
    api = live_server.api()
    body = distributed(
        api.cluster_id(),
        name=name,
        framework="TF",
        workers=2,
        args=str(EXAMPLES / "tensorflow" / example),
    )
    workload_id = str(api.create(body)["workloadId"])
    done = api.wait_for(workload_id, {"Completed", "Failed"}, timeout=180)
    assert done["phase"] == "Completed", done
    pods = settled_pods(api, workload_id)
    assert sorted(str(p["name"]) for p in pods) == [f"{name}-{suffix}" for suffix in TASKS]
    assert {p["k8sPhase"] for p in pods} == {"Succeeded"}
    return workload_id


def test_chief_and_two_workers_reach_each_other(live_server: LiveServer) -> None:
    workload_id = run_to_completion(live_server, name="tfcluster", example="check_cluster.py")
    for suffix, task in TASKS.items():
        pod = f"tfcluster-{suffix}"
        log = pod_log(live_server.api(), workload_id, pod)
        expected = f"{task} of 3 tasks on {pod}: reached 2 of 2, heard from 2 of 2"
        assert log.strip().endswith(expected), log


@pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None,
    reason="the MultiWorkerMirroredStrategy test needs tensorflow-cpu installed",
)
def test_multi_worker_mirrored_strategy_trains_the_same_weights(live_server: LiveServer) -> None:
    workload_id = run_to_completion(live_server, name="tfmirror", example="multiworker.py")
    losses = set()
    for suffix, task in TASKS.items():
        pod = f"tfmirror-{suffix}"
        log = pod_log(live_server.api(), workload_id, pod)
        expected = f"{task} of 3 tasks on {pod}: positions [0, 1, 2], weights agree across tasks"
        assert expected in log, log
        found = re.search(r"loss (\S+) -> (\S+)$", log, re.MULTILINE)
        assert found is not None, log
        first, last = float(found[1]), float(found[2])
        assert last < first, log
        losses.add((first, last))
    assert len(losses) == 1, losses
