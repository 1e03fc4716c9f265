"""A real XGBoost run through the API: a master (which also runs the tracker) and two workers
train one model together through XGBoost's collective, each on its own shard."""

from __future__ import annotations

import re

import pytest

from tests.support.pods import pod_log, settled_pods
from tests.support.requests import EXAMPLES, distributed
from tests.support.server import LiveServer

pytest.importorskip("xgboost", reason="the XGBoost end-to-end tests need xgboost-cpu installed")

RESULT = re.compile(
    r"rank (?P<rank>\d+) of 3 on (?P<pod>\S+): collective rank (?P<collective>\d+) of 3, "
    r"model (?P<model>[0-9a-f]{16}) same on all 3 ranks, accuracy (?P<accuracy>[0-9.]+)"
)


def test_master_and_two_workers_train_the_same_model(live_server: LiveServer) -> None:
    api = live_server.api()
    body = distributed(
        api.cluster_id(),
        name="boost",
        framework="XGBoost",
        workers=2,
        args=str(EXAMPLES / "xgboost" / "train.py"),
    )
    created = api.create(body)
    workload_id = created["workloadId"]
    done = api.wait_for(workload_id, {"Completed", "Failed"}, timeout=180)
    assert done["phase"] == "Completed", done

    pods = settled_pods(api, workload_id)
    names = ["boost-master-0", "boost-worker-0", "boost-worker-1"]
    assert sorted(str(p["name"]) for p in pods) == names
    assert {p["k8sPhase"] for p in pods} == {"Succeeded"}
    models = set()
    for rank, pod in enumerate(names):
        log = pod_log(api, workload_id, pod)
        found = RESULT.search(log)
        assert found is not None, log
        assert (found["rank"], found["pod"], found["collective"]) == (str(rank), pod, str(rank))
        assert float(found["accuracy"]) >= 0.9, log
        models.add(found["model"])
    assert len(models) == 1, models
