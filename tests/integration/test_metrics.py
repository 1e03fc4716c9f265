"""The metrics endpoints on a real server with real pods: sampled CPU and memory, pod counts,
GPU figures from a GPU reader of the test's own on virtual GPU nodes, quotas from a project's
resources; bad parameters and other projects' workloads refused; every response checked
against the Run:ai document."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lockstep.api.app import create_app
from lockstep.config import NodeSettings, RuntimeKind, Settings
from lockstep.domain.clock import iso
from lockstep.domain.identity import Role
from tests.conftest import in_process, make_settings, running
from tests.support.access import app_with_role, new_project
from tests.support.api import Api, poll
from tests.support.contract import assert_conforms
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.gpus import GPU_MEMORY, UTILIZATION, FakeGpus
from tests.support.requests import single_pod, sleeping
from tests.support.server import LiveServer, kill_pods

MIB = 2**20


def metrics_settings(tmp_path: Path, database_url: str) -> Settings:
    settings = make_settings(tmp_path / "data", database_url)
    nodes = [NodeSettings(name=f"gpu-{i}", cpu_cores=64, memory="256Gi", gpus=2) for i in (0, 1)]
    return settings.model_copy(update={"metrics_interval_seconds": 0.2, "nodes": nodes})


@pytest.fixture
def gpus() -> FakeGpus:
    return FakeGpus()


@pytest.fixture
def api(tmp_path: Path, database_url: str, gpus: FakeGpus) -> Iterator[Api]:
    """The server in process, sampling every 0.2 s, its GPUs read by `gpus`."""
    settings = metrics_settings(tmp_path, database_url)
    try:
        with TestClient(create_app(settings, gpus=gpus)) as client:
            yield Api.login(client)
    finally:
        kill_pods(settings.runtime_dir)


def window(*, minutes: float = 10, samples: int = 1) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "start": iso(now - timedelta(minutes=minutes)),
        "end": iso(now + timedelta(seconds=1)),
        "numberOfSamples": samples,
    }


def values(body: dict[str, Any], kind: str) -> list[float]:
    (measurement,) = [m for m in body["measurements"] if m["type"] == kind]
    return [float(v["value"]) for v in measurement["values"]]


def measured(
    api: Api,
    path: str,
    template: str,
    kinds: str,
    check: Any,
    *,
    samples: int = 1,
    timeout: float = 60,
) -> dict[str, Any]:
    """Poll `path`'s metrics until `check(body)` holds, each answer checked against the
    document (`template`: its path there). `samples`: 1, the average over the last 10
    minutes; 0, each round as taken (counts of a round are exact, where an average over
    rounds that saw a pod start is not)."""
    seen: list[Any] = []

    def ready() -> dict[str, Any] | None:
        response = api.get(path, params={"metricType": kinds, **window(samples=samples)})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = assert_conforms(response, template)
        seen[:] = [body]
        return body if check(body) else None

    return poll(ready, timeout=timeout, what=lambda: f"metrics of {path}; last: {seen}")


WORKLOAD = "/api/v1/workloads/{workloadId}/metrics"
POD = "/api/v1/workloads/{workloadId}/pods/{podId}/metrics"


def python(code: str) -> str:
    return f"-c {json.dumps(code)}"


def training(api: Api, name: str, code: str, **spec: Any) -> str:
    body = single_pod(
        api.cluster_id(), name=name, command=sys.executable, args=python(code), **spec
    )
    workload_id = api.create(body, kind="trainings")["workloadId"]
    api.wait_for(workload_id, {"Running"})
    return str(workload_id)


def test_a_pod_burning_cpu_uses_more_than_half_a_core(api: Api) -> None:
    workload_id = training(api, "burn", "while True: pass")
    path = WORKLOAD.replace("{workloadId}", workload_id)
    body = measured(
        api,
        path,
        WORKLOAD,
        "CPU_USAGE_CORES,CPU_MEMORY_USAGE_BYTES",
        lambda b: any(v > 0.5 for v in values(b, "CPU_USAGE_CORES")),
    )
    assert values(body, "CPU_MEMORY_USAGE_BYTES")[0] > 0


def test_a_pod_holding_200_mib_uses_at_least_that(api: Api) -> None:
    code = f"import time; held = b'x' * {200 * MIB}; time.sleep(600)"
    workload_id = training(api, "memory", code)
    path = WORKLOAD.replace("{workloadId}", workload_id)
    measured(
        api,
        path,
        WORKLOAD,
        "CPU_MEMORY_USAGE_BYTES",
        lambda b: any(v >= 200 * MIB for v in values(b, "CPU_MEMORY_USAGE_BYTES")),
    )
    pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
    pod_path = POD.replace("{workloadId}", workload_id).replace("{podId}", pods[0]["id"])
    measured(
        api,
        pod_path,
        POD,
        "CPU_MEMORY_USAGE_BYTES",
        lambda b: any(v >= 200 * MIB for v in values(b, "CPU_MEMORY_USAGE_BYTES")),
    )


def test_pod_counts_and_requests_of_a_distributed_workload(api: Api) -> None:
    body = sleeping(api.cluster_id(), name="counted", workers=2)
    body["spec"]["compute"] = {"cpuCoreRequest": 0.5, "cpuMemoryRequest": "100M"}
    workload_id = api.create(body)["workloadId"]
    api.wait_for(workload_id, {"Running"})
    path = WORKLOAD.replace("{workloadId}", workload_id)
    found = measured(
        api,
        path,
        WORKLOAD,
        "POD_COUNT,RUNNING_POD_COUNT,CPU_REQUEST_CORES,CPU_MEMORY_REQUEST_BYTES",
        lambda b: 3.0 in values(b, "RUNNING_POD_COUNT"),
        samples=0,
    )
    assert 3.0 in values(found, "POD_COUNT")
    assert set(values(found, "CPU_REQUEST_CORES")) == {1.5}
    assert set(values(found, "CPU_MEMORY_REQUEST_BYTES")) == {300e6}


def test_gpu_figures_come_from_the_gpu_reader_for_the_devices_a_pod_holds(
    api: Api, gpus: FakeGpus
) -> None:
    workload_id = training(
        api, "gpu", "import time; time.sleep(600)", compute={"gpuDevicesRequest": 2}
    )
    path = WORKLOAD.replace("{workloadId}", workload_id)
    body = measured(
        api,
        path,
        WORKLOAD,
        "GPU_UTILIZATION,GPU_MEMORY_USAGE_BYTES,GPU_ALLOCATION",
        lambda b: values(b, "GPU_UTILIZATION") != [],
    )
    assert values(body, "GPU_UTILIZATION") == [UTILIZATION]
    assert values(body, "GPU_MEMORY_USAGE_BYTES") == [2 * GPU_MEMORY]
    assert values(body, "GPU_ALLOCATION") == [2.0]
    assert sorted(set(gpus.asked)) == [0, 1]

    pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
    pod_path = POD.replace("{workloadId}", workload_id).replace("{podId}", pods[0]["id"])
    response = api.get(pod_path, params={"metricType": "GPU_UTILIZATION_PER_GPU", **window()})
    per_gpu = assert_conforms(response, POD)["measurements"]
    assert sorted(m["labels"]["gpu"] for m in per_gpu) == ["0", "1"]
    assert all(float(m["values"][0]["value"]) == UTILIZATION for m in per_gpu)

    node = pods[0]["nodeName"]
    response = api.get(
        f"/api/v1/nodes/{node}/metrics", params={"metricType": "GPU_UTILIZATION", **window()}
    )
    assert values(assert_conforms(response, "/api/v1/nodes/{nodeId}/metrics"), "GPU_UTILIZATION")


def test_a_pod_without_gpus_has_no_gpu_figures(api: Api) -> None:
    workload_id = training(api, "cpu-only", "import time; time.sleep(600)")
    path = WORKLOAD.replace("{workloadId}", workload_id)
    body = measured(
        api, path, WORKLOAD, "GPU_UTILIZATION,POD_COUNT", lambda b: values(b, "POD_COUNT")
    )
    assert values(body, "GPU_UTILIZATION") == []


def test_a_projects_gpu_quota_comes_from_its_resources(api: Api) -> None:
    pools = api.get("/api/v1/node-pools").json()["nodepools"]
    pool = next(p for p in pools if p["name"] == "default")
    created = api.post(
        "/api/v1/org-unit/projects",
        json={
            "name": "quoted",
            "clusterId": api.cluster_id(),
            "resources": [
                {"nodePool": {"id": str(pool["id"]), "name": "default"}, "gpu": {"deserved": 3}}
            ],
        },
    )
    assert created.status_code in (200, 201), created.text
    project_id = str(created.json()["id"])
    body = sleeping(api.cluster_id(), name="held", project_id=project_id, workers=1)
    body["spec"]["compute"] = {"gpuDevicesRequest": 1}
    workload_id = api.create(body)["workloadId"]
    api.wait_for(workload_id, {"Running"})

    path = f"/api/v1/org-unit/projects/{project_id}/metrics"
    found = measured(
        api,
        path,
        "/api/v1/org-unit/projects/{projectId}/metrics",
        "GPU_QUOTA,GPU_ALLOCATION",
        lambda b: 2.0 in values(b, "GPU_ALLOCATION"),
        samples=0,
    )
    assert set(values(found, "GPU_QUOTA")) == {3.0}

    cluster = api.get(
        f"/api/v1/clusters/{api.cluster_id()}/metrics",
        params={"metricType": "TOTAL_GPU,ALLOCATED_GPU,UNALLOCATED_GPU", **window()},
    )
    grouped = assert_conforms(cluster, "/api/v1/clusters/{clusterUuid}/metrics")
    assert values(grouped, "TOTAL_GPU") == [4.0]

    telemetry = api.get(
        "/api/v1/org-unit/projects/telemetry",
        params={"telemetryType": "GPU_QUOTA", "groupBy": "ClusterId"},
    )
    told = assert_conforms(telemetry, "/api/v1/org-unit/projects/telemetry")
    assert told["type"] == "GPU_QUOTA"
    assert told["values"][0]["groups"] == [{"key": "ClusterId", "value": api.cluster_id()}]


@pytest.mark.parametrize(
    ("params", "field", "rule"),
    [
        ({}, "metricType", "is required"),
        ({"metricType": "CPU"}, "metricType", "'CPU' is not a metric type"),
        ({"metricType": "NIM_NUM_REQUESTS_RUNNING"}, "metricType", "not measured by lockstep"),
        ({"metricType": "POD_COUNT", "numberOfSamples": 1001}, "numberOfSamples", "1000"),
        ({"metricType": "POD_COUNT", "start": "soon"}, "start", "not an ISO-8601"),
    ],
)
def test_bad_parameters_are_refused_naming_the_parameter(
    api: Api, params: dict[str, Any], field: str, rule: str
) -> None:
    workload_id = api.create(sleeping(api.cluster_id(), name="asked"))["workloadId"]
    path = WORKLOAD.replace("{workloadId}", workload_id)
    response = api.get(path, params={**window(), **params})
    assert response.status_code == 400, response.text
    body = assert_conforms(response, WORKLOAD)
    assert field in body["message"] and rule in body["message"]


def test_metrics_of_a_workload_are_read_as_the_workload_is(api: Api) -> None:
    workload_id = api.create(sleeping(api.cluster_id(), name="private"))["workloadId"]
    elsewhere = new_project(api, "elsewhere")
    outsider = app_with_role(api, "outsider", Role.L1_RESEARCHER, elsewhere)
    path = WORKLOAD.replace("{workloadId}", workload_id)
    response = outsider.get(path, params={"metricType": "POD_COUNT", **window()})
    assert response.status_code == 404, response.text  # as an unknown id is
    assert response.json()["message"] == f"no workload has the id {workload_id!r}"
    assert_conforms(response, WORKLOAD)
    missing = api.get(
        WORKLOAD.replace("{workloadId}", "00000000-0000-0000-0000-000000000000"),
        params={"metricType": "POD_COUNT", **window()},
    )
    assert missing.status_code == 404


def test_every_metrics_endpoint_answers_as_the_document_says(api: Api) -> None:
    cluster = api.cluster_id()
    workload_id = training(api, "conform", "import time; time.sleep(600)")
    pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
    asked = {
        WORKLOAD: (
            {"workloadId": workload_id},
            "GPU_UTILIZATION,GPU_MEMORY_USAGE_BYTES,"
            "GPU_MEMORY_REQUEST_BYTES,CPU_USAGE_CORES,CPU_REQUEST_CORES,CPU_LIMIT_CORES,"
            "CPU_MEMORY_USAGE_BYTES,CPU_MEMORY_REQUEST_BYTES,CPU_MEMORY_LIMIT_BYTES,"
            "POD_COUNT,RUNNING_POD_COUNT,GPU_ALLOCATION",
        ),
        POD: (
            {"workloadId": workload_id, "podId": pods[0]["id"]},
            "GPU_UTILIZATION_PER_GPU,GPU_UTILIZATION,GPU_MEMORY_USAGE_BYTES_PER_GPU,"
            "GPU_MEMORY_USAGE_BYTES,CPU_USAGE_CORES,CPU_MEMORY_USAGE_BYTES",
        ),
        "/api/v1/org-unit/projects/{projectId}/metrics": (
            {"projectId": "1"},
            "GPU_QUOTA,CPU_QUOTA_MILLICORES,CPU_MEMORY_QUOTA_MB,GPU_ALLOCATION",
        ),
        "/api/v1/org-unit/departments/{departmentId}/metrics": (
            {"departmentId": "1"},
            "GPU_QUOTA,GPU_ALLOCATION",
        ),
        "/api/v1/clusters/{clusterUuid}/metrics": (
            {"clusterUuid": cluster},
            "TOTAL_GPU_NODES,TOTAL_GPU,GPU_QUOTA,ALLOCATED_GPU,UNALLOCATED_GPU,GPU_UTILIZATION",
        ),
        "/api/v1/clusters/{clusterUuid}/nodepools/{nodepoolName}/metrics": (
            {"clusterUuid": cluster, "nodepoolName": "default"},
            "TOTAL_GPU,ALLOCATED_GPU",
        ),
        "/api/v1/nodes/{nodeId}/metrics": (
            {"nodeId": "gpu-0"},
            "CPU_USAGE_CORES,CPU_MEMORY_USAGE_BYTES,GPU_UTILIZATION",
        ),
    }
    for template, (names, kinds) in asked.items():
        path = template
        for name, value in names.items():
            path = path.replace("{" + name + "}", value)
        for samples in (0, 5):
            response = api.get(path, params={"metricType": kinds, **window(samples=samples)})
            assert response.status_code == 200, f"{path}: {response.text}"
            body = assert_conforms(response, template)
            assert [m["type"] for m in body["measurements"] if m["type"]] != []
        bad = api.get(path, params={"metricType": kinds, "start": "x", "end": "y"})
        assert bad.status_code == 400
        assert_conforms(bad, template)

    for telemetry, params in (
        ("/api/v1/workloads/telemetry", {"telemetryType": "WORKLOADS_COUNT"}),
        (
            "/api/v1/workloads/telemetry",
            {"telemetryType": "GPU_ALLOCATION", "groupBy": "ProjectId,Phase"},
        ),
        ("/api/v1/org-unit/projects/telemetry", {"telemetryType": "GPU_ALLOCATION"}),
        ("/api/v1/org-unit/projects/telemetry", {"telemetryType": "CPU_ALLOCATION"}),
        ("/api/v1/workloads/telemetry", {"telemetryType": "WORKLOADS_COUNT", "groupBy": "Nope"}),
    ):
        response = api.get(telemetry, params=params)
        assert response.status_code in (200, 400), response.text
        assert_conforms(response, telemetry)

    counted = api.get(
        "/api/v1/workloads/telemetry",
        params={"telemetryType": "WORKLOADS_COUNT", "filterByPhases": "Running"},
    )
    assert assert_conforms(counted, "/api/v1/workloads/telemetry")["values"] == [{"value": "1"}]


def listed(api: Api, **params: Any) -> list[dict[str, Any]]:
    response = api.get("/api/v1/workloads", params=params)
    body = assert_conforms(response, "/api/v1/workloads")
    return list(body["workloads"])


def test_the_list_shows_time_pending_and_running_and_filters_and_sorts_by_it(api: Api) -> None:
    quick = api.create(single_pod(api.cluster_id(), name="quick"), kind="trainings")["workloadId"]
    api.wait_for(quick, {"Completed"})
    long = training(api, "long", "import time; time.sleep(600)")

    def ran_a_second() -> list[dict[str, Any]] | None:
        found = listed(api, filterBy="totalRunningTimeSeconds>=1")
        return found or None

    found = poll(ran_a_second, timeout=30, what="a workload to run for a second")
    assert [w["id"] for w in found] == [long]
    item = api.workload(long)
    assert item["totalRunningTimeSeconds"] >= 1
    assert item["totalPendingTimeSeconds"] >= 0
    assert item["idleGpus"] is None  # it holds no GPU
    ordered = listed(api, sortBy="totalRunningTimeSeconds", sortOrder="desc")
    assert [w["id"] for w in ordered] == [long, quick]
    assert all(isinstance(w["totalPendingTimeSeconds"], int) for w in ordered)


def test_a_workload_whose_gpus_do_nothing_has_them_idle(api: Api, gpus: FakeGpus) -> None:
    gpus.utilization = 0.0
    workload_id = training(
        api, "idle", "import time; time.sleep(600)", compute={"gpuDevicesRequest": 2}
    )
    poll(
        lambda: api.workload(workload_id)["idleGpus"] or None,
        timeout=30,
        what="the workload's GPUs to be sampled",
    )
    assert api.workload(workload_id)["idleGpus"] == 2
    assert [w["idleGpus"] for w in listed(api)] == [2]  # read afresh, the item remembered
    gpus.utilization = 90.0
    poll(
        lambda: [w["idleGpus"] for w in listed(api)] == [0] or None,
        timeout=30,
        what="the list to show the GPUs busy (the item as remembered, the samples new)",
    )
    refused = api.get("/api/v1/workloads", params={"filterBy": "idleGpus>=1"})
    assert refused.status_code == 400
    assert "idleGpus" in assert_conforms(refused, "/api/v1/workloads")["message"]


def test_on_kubernetes_measured_figures_need_a_prometheus(
    tmp_path: Path, database_url: str
) -> None:
    with FakeKubernetes() as cluster:
        settings = make_settings(tmp_path / "data", database_url).model_copy(
            update={
                "runtime": RuntimeKind.KUBERNETES,
                "kubeconfig": cluster.write_kubeconfig(tmp_path / "kubeconfig"),
            }
        )
        with in_process(settings) as client:
            api = Api.login(client)
            path = "/api/v1/org-unit/projects/1/metrics"
            template = "/api/v1/org-unit/projects/{projectId}/metrics"
            measured = api.get(path, params={"metricType": "GPU_ALLOCATION", **window()})
            assert measured.status_code == 503, measured.text
            assert "LOCKSTEP_PROMETHEUS_URL" in assert_conforms(measured, template)["message"]
            declared = api.get(path, params={"metricType": "GPU_QUOTA", **window()})
            assert declared.status_code == 200, declared.text
            assert_conforms(declared, template)
            gpus = api.get(
                f"/api/v1/clusters/{api.cluster_id()}/metrics",
                params={"metricType": "TOTAL_GPU", **window()},
            )
            assert gpus.status_code == 200, gpus.text
            assert_conforms(gpus, "/api/v1/clusters/{clusterUuid}/metrics")


def test_lockstep_serve_samples_in_the_reconcilers_process(tmp_path: Path, sqlite_url: str) -> None:
    server = LiveServer(tmp_path / "data", sqlite_url, settings={"METRICS_INTERVAL_SECONDS": "0.2"})
    with running(server):
        api = server.api()
        workload_id = api.create(sleeping(api.cluster_id(), name="served", workers=1))["workloadId"]
        api.wait_for(workload_id, {"Running"})
        measured(
            api,
            WORKLOAD.replace("{workloadId}", workload_id),
            WORKLOAD,
            "RUNNING_POD_COUNT,CPU_MEMORY_USAGE_BYTES",
            lambda b: (
                2.0 in values(b, "RUNNING_POD_COUNT")
                and any(v > 0 for v in values(b, "CPU_MEMORY_USAGE_BYTES"))
            ),
            samples=0,
        )
