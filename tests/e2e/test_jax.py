"""A real JAX run through the API: three workers (worker-0 coordinating) join one
`jax.distributed` job on CPU and run a cross-process sum and all-gather."""

from __future__ import annotations

import pytest

from tests.support.pods import pod_log, settled_pods
from tests.support.requests import EXAMPLES, distributed
from tests.support.server import LiveServer

pytest.importorskip("jax", reason="the JAX end-to-end tests need jax[cpu] installed")


def test_allreduce_across_three_workers_completes(live_server: LiveServer) -> None:
    api = live_server.api()
    body = distributed(
        api.cluster_id(),
        name="jaxsum",
        framework="JAX",
        workers=2,
        args=str(EXAMPLES / "jax" / "allreduce.py"),
    )
    created = api.create(body)
    workload_id = created["workloadId"]
    done = api.wait_for(workload_id, {"Completed", "Failed"}, timeout=180)
    assert done["phase"] == "Completed", done

    pods = settled_pods(api, workload_id)
    names = [f"jaxsum-worker-{i}" for i in range(3)]
    assert sorted(str(p["name"]) for p in pods) == names
    assert {p["k8sPhase"] for p in pods} == {"Succeeded"}
    for process, pod in enumerate(names):
        log = pod_log(api, workload_id, pod)
        expected = f"process {process} of 3 on {pod}: sum 6, expected 6; allgather [0, 1, 2]"
        assert expected in log, log
