"""`GET /metrics`: who may read it (a system-wide role, by bearer token or by Basic with an
application's credentials), what it tells in the Prometheus text format — the API's and the
reconciler process's instruments summed, and the gauges read from the store: what each
workload holds, asks and uses of its GPUs, how long it waited and ran — and a real Prometheus
server scraping it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from lockstep.api.app import create_app
from lockstep.config import NodeSettings
from lockstep.domain.identity import Role
from tests.conftest import make_settings
from tests.support.access import app_with_role
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api, poll
from tests.support.gpus import UTILIZATION, FakeGpus
from tests.support.prometheus import query, scraping
from tests.support.requests import python, single_pod, sleeping
from tests.support.server import LiveServer, kill_pods

Samples = dict[str, list[tuple[dict[str, str], float]]]


def samples(text: str) -> Samples:
    """Every sample by its name (`…_total`, `…_bucket` as exposed), with its labels."""
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return found


def test_metrics_need_a_system_wide_caller(api: Api) -> None:
    anonymous = api.client.get("/metrics")
    assert anonymous.status_code == 401
    assert "credentials are required" in anonymous.json()["message"]
    researcher = app_with_role(api, "researcher", Role.L1_RESEARCHER, "1")
    refused = researcher.get("/metrics")
    assert refused.status_code == 403, refused.text
    assert "system-wide role" in refused.json()["message"]
    wrong = api.client.get("/metrics", auth=(ADMIN_ID, "not-the-secret"))
    assert wrong.status_code == 401
    bad = api.client.get("/metrics", headers={"Authorization": "Basic ***"})
    assert bad.status_code == 401 and "base64" in bad.json()["message"]
    by_token = api.get("/metrics")
    assert by_token.status_code == 200
    assert by_token.headers["content-type"].startswith("text/plain")
    by_basic = api.client.get("/metrics", auth=(ADMIN_ID, ADMIN_SECRET))
    assert by_basic.status_code == 200


def test_requests_are_counted_by_route_template_and_status(api: Api) -> None:
    for _ in range(3):
        assert api.get("/api/v1/workloads").status_code == 200
    unknown = "00000000-0000-0000-0000-000000000000"
    assert api.get(f"/api/v1/workloads/{unknown}").status_code == 404
    assert api.get("/no/such/path").status_code == 404
    found = samples(api.get("/metrics").text)
    counted = {
        (labels["method"], labels["route"], labels["status"]): value
        for labels, value in found["lockstep_http_requests_total"]
    }
    assert counted[("GET", "/api/v1/workloads", "200")] == 3
    assert counted[("GET", "/api/v1/workloads/{workloadId}", "404")] == 1
    assert counted[("GET", "unmatched", "404")] == 1
    assert not any(unknown in route for _, route, _ in counted)  # templates, never paths
    latency = {
        labels["route"]: value
        for labels, value in found["lockstep_http_request_duration_seconds_count"]
    }
    assert latency["/api/v1/workloads"] == 3
    assert found["lockstep_store_commit_duration_seconds_count"]


def test_the_reconciler_process_and_the_store_gauges_are_exposed(
    live_server: LiveServer,
) -> None:
    api = live_server.api()
    body = sleeping(api.cluster_id(), name="busy", workers=1, terminationGracePeriodSeconds=1)
    workload_id = api.create(body)["workloadId"]
    api.wait_for(workload_id, {"Running"}, timeout=60)
    api.create(single_pod(api.cluster_id(), name="quick", args=python("pass")), kind="trainings")

    def exposed() -> Samples | None:
        found = samples(api.get("/metrics").text)
        started = sum(v for _, v in found.get("lockstep_pods_started_total", []))
        return found if started >= 3 else None  # two pods of busy, one of quick

    found = poll(exposed, timeout=60, what="the pods started to be counted")
    # Written by the reconciler's own process, read through the shared directory.
    passes = sum(v for _, v in found["lockstep_reconcile_pass_duration_seconds_count"])
    cycles = sum(v for _, v in found["lockstep_scheduling_cycle_duration_seconds_count"])
    assert passes >= 1 and cycles >= 1
    running = {
        labels["workload_name"]: value for labels, value in found["lockstep_workload_running_pods"]
    }
    assert running["busy"] == 2
    held = {
        labels["workload_name"]: labels
        for labels, _ in found["runai_allocated_gpu_count_per_workload"]
    }
    assert held["busy"]["workload_type"] == "Distributed"
    assert held["busy"]["project"] == "default"
    queues = {labels["queue_name"] for labels, _ in found["kai_queue_info"]}
    assert "default" in queues
    nodes = {labels["node"] for labels, _ in found["lockstep_node_cpu_cores"]}
    assert nodes
    ran = by_workload(found, "runai_job_total_runtime")
    assert ran["busy"] >= 0 and by_workload(found, "runai_job_total_wait_time")["busy"] >= 0
    assert by_workload(found, "runai_requested_gpus_per_workload")["busy"] == 0
    assert "busy" not in by_workload(found, "runai_gpu_utilization_per_workload")  # no GPU

    def ran_longer() -> Samples | None:
        later = samples(api.get("/metrics").text)
        return (
            later if by_workload(later, "runai_job_total_runtime")["busy"] > ran["busy"] else None
        )

    poll(ran_longer, timeout=30, what="busy's runtime to grow")


def by_workload(found: Samples, name: str) -> dict[str, float]:
    """A per-workload gauge's value by workload name."""
    return {labels["workload_name"]: value for labels, value in found.get(name, [])}


@pytest.fixture
def gpu_api(tmp_path: Path, database_url: str) -> Iterator[Api]:
    """The server in process on two virtual nodes of 2 GPUs each, sampling every 0.2 s, its
    GPUs read by a fake reader (every device at `UTILIZATION` percent)."""
    nodes = [NodeSettings(name=f"gpu-{i}", cpu_cores=64, memory="256Gi", gpus=2) for i in (0, 1)]
    settings = make_settings(tmp_path / "data", database_url).model_copy(
        update={"metrics_interval_seconds": 0.2, "nodes": nodes}
    )
    try:
        with TestClient(create_app(settings, gpus=FakeGpus())) as client:
            yield Api.login(client)
    finally:
        kill_pods(settings.runtime_dir)


def test_each_workload_tells_what_it_asks_and_uses_and_how_long_it_waited_and_ran(
    gpu_api: Api,
) -> None:
    api = gpu_api

    def training(name: str, code: str, gpus: int | None = None) -> str:
        spec: dict[str, Any] = {} if gpus is None else {"compute": {"gpuDevicesRequest": gpus}}
        body = single_pod(
            api.cluster_id(), name=name, command=sys.executable, args=python(code), **spec
        )
        return str(api.create(body, kind="trainings")["workloadId"])

    sleep = "import time; time.sleep(600)"
    gpu = training("gpu", sleep, gpus=2)
    api.wait_for(gpu, {"Running"})
    api.wait_for(training("cpu", sleep), {"Running"})
    api.wait_for(training("done", "pass"), {"Completed"})
    api.wait_for(training("waiting", sleep, gpus=3), {"Pending"})  # no node has 3 GPUs

    def sampled_and_timed() -> Samples | None:
        found = samples(api.get("/metrics").text)
        ready = (
            "gpu" in by_workload(found, "runai_gpu_utilization_per_workload")
            and by_workload(found, "runai_job_total_runtime").get("gpu", 0) >= 1
            and by_workload(found, "runai_job_total_wait_time").get("waiting", 0) >= 1
        )
        return found if ready else None

    found = poll(sampled_and_timed, timeout=60, what="the GPUs sampled and a second passed")
    assert by_workload(found, "runai_gpu_utilization_per_workload") == {"gpu": UTILIZATION}
    assert by_workload(found, "runai_requested_gpus_per_workload") == {
        "gpu": 2,
        "cpu": 0,
        "waiting": 3,
    }
    assert by_workload(found, "runai_allocated_gpu_count_per_workload") == {"gpu": 2, "cpu": 0}
    waited = by_workload(found, "runai_job_total_wait_time")
    ran = by_workload(found, "runai_job_total_runtime")
    assert set(waited) == set(ran) == {"gpu", "cpu", "waiting"}  # a finished one has no series
    assert ran["waiting"] == 0
    assert api.workload(gpu)["totalRunningTimeSeconds"] >= ran["gpu"]  # as listed, later
    labels = next(
        labels
        for labels, _ in found["runai_job_total_wait_time"]
        if labels["workload_name"] == "waiting"
    )
    assert labels["workload_type"] == "Training"
    assert labels["project"] == "default"
    assert labels["department"]


@pytest.fixture
def prometheus(live_server: LiveServer, tmp_path: Path) -> Iterator[str]:
    """A real Prometheus server scraping the live server every second; its URL."""
    with scraping(live_server, tmp_path) as url:
        yield url


def test_a_prometheus_server_scrapes_lockstep(live_server: LiveServer, prometheus: str) -> None:
    api = live_server.api()
    api.get("/api/v1/workloads")
    up = poll(lambda: query(prometheus, 'up{job="lockstep"} == 1'), timeout=60, what="a scrape")
    assert up[0]["metric"]["job"] == "lockstep"
    listed = poll(
        lambda: query(
            prometheus, 'lockstep_http_requests_total{route="/api/v1/workloads",status="200"}'
        ),
        timeout=30,
        what="the request counted in Prometheus",
    )
    assert float(listed[0]["value"][1]) >= 1
    quota = poll(
        lambda: query(prometheus, 'kai_queue_info{queue_name="default"}'),
        timeout=30,
        what="the default queue in Prometheus",
    )
    assert quota[0]["metric"]["parent_queue"].startswith("department.")
