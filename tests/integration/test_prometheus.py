"""`GET /metrics`: who may read it (a system-wide role, by bearer token or by Basic with an
application's credentials), what it tells in the Prometheus text format — the API's and the
reconciler process's instruments summed, and the gauges read from the store — and a real
Prometheus server scraping it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from lockstep.domain.identity import Role
from tests.support.access import app_with_role
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api, poll
from tests.support.requests import python, single_pod, sleeping
from tests.support.server import LiveServer, free_port

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


PROMETHEUS_CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: lockstep
    metrics_path: /metrics
    basic_auth:
      username: {username}
      password_file: {password_file}
    static_configs:
      - targets: ["127.0.0.1:{port}"]
"""


@pytest.fixture
def prometheus(live_server: LiveServer, tmp_path: Path) -> Iterator[str]:
    """A real Prometheus server scraping the live server every second; its URL."""
    password = tmp_path / "password"
    password.write_text(ADMIN_SECRET)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        PROMETHEUS_CONFIG.format(username=ADMIN_ID, password_file=password, port=live_server.port)
    )
    port = free_port()
    with (tmp_path / "prometheus.log").open("wb") as log:
        process = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _query(url: str, expression: str) -> list[dict[str, object]] | None:
    try:
        response = httpx.get(f"{url}/api/v1/query", params={"query": expression}, timeout=5)
    except httpx.TransportError:
        return None  # not listening yet
    if response.status_code != 200:
        return None
    result: list[dict[str, object]] = response.json()["data"]["result"]
    return result or None


def test_a_prometheus_server_scrapes_lockstep(live_server: LiveServer, prometheus: str) -> None:
    api = live_server.api()
    api.get("/api/v1/workloads")
    up = poll(lambda: _query(prometheus, 'up{job="lockstep"} == 1'), timeout=60, what="a scrape")
    assert up[0]["metric"]["job"] == "lockstep"  # type: ignore[index]
    listed = poll(
        lambda: _query(
            prometheus, 'lockstep_http_requests_total{route="/api/v1/workloads",status="200"}'
        ),
        timeout=30,
        what="the request counted in Prometheus",
    )
    assert float(listed[0]["value"][1]) >= 1  # type: ignore[index]
    quota = poll(
        lambda: _query(prometheus, 'kai_queue_info{queue_name="default"}'),
        timeout=30,
        what="the default queue in Prometheus",
    )
    assert quota[0]["metric"]["parent_queue"].startswith("department.")  # type: ignore[index]
