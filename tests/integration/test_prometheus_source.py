"""Measured metrics on the Kubernetes runtime, asked of a real Prometheus server that scrapes a
fixture exporter (tests/support/cluster_exporter.py) every second: the figures of a workload,
a pod, a project, a node and the cluster are the fixture's (a CPU counter's rate, gauges
averaged, MiB in bytes, pods counted, GPUs held by running pods), per-GPU series labelled per
device, other namespaces' and other owners' pods left out; a Prometheus that is down, slow,
refusing or not a Prometheus is `MetricsUnavailable` naming its URL; no name can change a
query; and the metrics endpoints of a server on the Kubernetes runtime (a workload's, its
project's and department's) answer from that Prometheus."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from lockstep.config import RuntimeKind
from lockstep.domain.clock import iso, parse_moment
from lockstep.domain.errors import MetricsUnavailable
from lockstep.domain.metrics import Measurement, Window
from lockstep.services.metrics.prometheus_source import PrometheusMetrics
from lockstep.services.metrics.promql import PodSelection
from lockstep.services.metrics.sources import SeriesQuery
from lockstep.store.metrics import SampleScope
from tests.conftest import in_process, make_settings
from tests.support.api import Api, poll
from tests.support.cluster_exporter import ClusterExporter, Container, FixturePod, Gpu
from tests.support.contract import assert_conforms
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.prometheus import query, scraping_targets
from tests.support.requests import distributed
from tests.support.server import free_port

GIB = 2**30
MIB = 2**20
TRAIN = "0b6c1a4e-0000-4000-8000-000000000001"
EVAL = "0b6c1a4e-0000-4000-8000-000000000002"
OTHER = "0b6c1a4e-0000-4000-8000-000000000003"
TEAM_A, TEAM_B = "runai-team-a", "runai-team-b"
MIN_RANGE = timedelta(seconds=3)
SCRAPES_BEFORE_ASKING = 9
"""Seconds of data every window asked here lies within (6 s before now)."""

PODS = [
    FixturePod(
        TEAM_A,
        "train-master-0",
        node="node-a",
        workload_id=TRAIN,
        project_id="7",
        containers=[
            Container("pytorch", 1.25, GIB + GIB // 2),
            Container("sidecar", 0.25, GIB // 2),
        ],
        gpus=[Gpu("0", 37, 1024), Gpu("1", 41, 2048)],
        gpu_request=2,
    ),
    FixturePod(
        TEAM_A,
        "train-worker-0",
        node="node-b",
        workload_id=TRAIN,
        project_id="7",
        containers=[Container("pytorch", 0.5, GIB)],
        gpus=[Gpu("0", 60, 512)],
        gpu_request=1,
    ),
    FixturePod(
        TEAM_A, "train-worker-1", workload_id=TRAIN, project_id="7", phase="Pending", gpu_request=1
    ),
    FixturePod(
        TEAM_A,
        "eval-0",
        node="node-a",
        workload_id=EVAL,
        project_id="7",
        containers=[Container("main", 0.25, 256 * MIB)],
        gpus=[Gpu("2", 10, 4096)],
        gpu_request=1,
    ),
    # The same pod name in another project's namespace: another workload's pod.
    FixturePod(
        TEAM_B,
        "train-master-0",
        node="node-a",
        workload_id=OTHER,
        project_id="8",
        containers=[Container("pytorch", 4.0, 8 * GIB)],
        gpus=[Gpu("3", 90, 8192)],
        gpu_request=4,
    ),
    # Not lockstep's.
    FixturePod(
        "kube-system",
        "coredns-5d78c9869d-x2x7q",
        node="node-a",
        containers=[Container("c", 0.1, MIB)],
    ),
]


class Cluster:
    def __init__(self, exporter: ClusterExporter, prometheus: str) -> None:
        self.exporter = exporter
        self.prometheus = prometheus


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """The fixture exporter and a Prometheus scraping it, with some seconds of its series."""
    directory = tmp_path_factory.mktemp("prometheus")
    with (
        ClusterExporter(PODS) as exporter,
        scraping_targets(directory, [f"127.0.0.1:{exporter.port}"]) as url,
    ):
        scraped(url, "kube_pod_info", len(PODS))
        yield Cluster(exporter, url)


def scraped(url: str, series: str, count: int) -> None:
    """Wait until Prometheus has `SCRAPES_BEFORE_ASKING` scrapes of `count` series."""
    expression = f"count(count_over_time({series}[30s]) >= {SCRAPES_BEFORE_ASKING}) >= {count}"
    poll(
        lambda: query(url, expression),
        timeout=60,
        every=0.5,
        what=f"{SCRAPES_BEFORE_ASKING} scrapes of {count} {series} series",
    )


def selecting(scope: SampleScope) -> PodSelection:
    """The pods a scope means, as the store would tell them for the fixture's projects."""
    namespaces = {"7": TEAM_A, "8": TEAM_B}
    return PodSelection(
        workload_id=scope.workload_id,
        pod=scope.pod,
        project_ids=scope.project_ids,
        namespaces=None
        if scope.project_ids is None
        else [namespaces.get(p, f"runai-project-{p}") for p in scope.project_ids],
        nodes=scope.nodes,
    )


@pytest.fixture
def source(cluster: Cluster) -> Iterator[PrometheusMetrics]:
    with httpx.Client() as client:
        yield PrometheusMetrics(
            cluster.prometheus, client=client, selector=selecting, timeout=5, min_range=MIN_RANGE
        )


def recent(points: int = 2) -> Window:
    end = datetime.now(UTC)
    return Window(end - timedelta(seconds=6), end, points)


def figures(measurements: list[Measurement]) -> dict[str, list[float]]:
    """Each measurement's values by its type (and its GPU, `TYPE/gpu`)."""
    found: dict[str, list[float]] = {}
    for m in measurements:
        key = m.type if not m.labels else f"{m.type}/{m.labels['gpu']}"
        found[key] = [round(p.value, 9) for p in m.points]
    return found


def test_a_workloads_figures_are_its_pods(source: PrometheusMetrics) -> None:
    window = recent()
    types = [
        "CPU_USAGE_CORES",
        "CPU_MEMORY_USAGE_BYTES",
        "GPU_UTILIZATION",
        "GPU_MEMORY_USAGE_BYTES",
        "POD_COUNT",
        "RUNNING_POD_COUNT",
        "GPU_ALLOCATION",
    ]
    found = source.series(SeriesQuery(SampleScope(workload_id=TRAIN), types, window))
    assert [m.type for m in found] == types
    assert all(m.labels is None for m in found)
    for m in found:
        assert [p.at for p in m.points] == window.timestamps(), m.type
    assert figures(found) == {
        "CPU_USAGE_CORES": [2.0, 2.0],  # 1.25 + 0.25 + 0.5, not the pod cgroups nor pause
        "CPU_MEMORY_USAGE_BYTES": [3 * GIB] * 2,
        "GPU_UTILIZATION": [46.0] * 2,  # (37 + 41 + 60) / 3
        "GPU_MEMORY_USAGE_BYTES": [(1024 + 2048 + 512) * MIB] * 2,
        "POD_COUNT": [3.0] * 2,  # the pending pod too
        "RUNNING_POD_COUNT": [2.0] * 2,
        "GPU_ALLOCATION": [3.0] * 2,  # the pending pod's GPU is not held
    }


def test_a_pods_figures_and_its_devices_are_its_own(source: PrometheusMetrics) -> None:
    """`train-master-0` of the workload, not the pod of that name in the other namespace."""
    types = [
        "GPU_UTILIZATION_PER_GPU",
        "GPU_UTILIZATION",
        "GPU_MEMORY_USAGE_BYTES_PER_GPU",
        "GPU_MEMORY_USAGE_BYTES",
        "CPU_USAGE_CORES",
        "CPU_MEMORY_USAGE_BYTES",
    ]
    scope = SampleScope(workload_id=TRAIN, pod="train-master-0")
    found = source.series(SeriesQuery(scope, types, recent()))
    assert [(m.type, m.labels) for m in found] == [
        ("GPU_UTILIZATION_PER_GPU", {"gpu": "0"}),
        ("GPU_UTILIZATION_PER_GPU", {"gpu": "1"}),
        ("GPU_UTILIZATION", None),
        ("GPU_MEMORY_USAGE_BYTES_PER_GPU", {"gpu": "0"}),
        ("GPU_MEMORY_USAGE_BYTES_PER_GPU", {"gpu": "1"}),
        ("GPU_MEMORY_USAGE_BYTES", None),
        ("CPU_USAGE_CORES", None),
        ("CPU_MEMORY_USAGE_BYTES", None),
    ]
    assert figures(found) == {
        "GPU_UTILIZATION_PER_GPU/0": [37.0, 37.0],
        "GPU_UTILIZATION_PER_GPU/1": [41.0, 41.0],
        "GPU_UTILIZATION": [39.0, 39.0],
        "GPU_MEMORY_USAGE_BYTES_PER_GPU/0": [1073741824.0] * 2,  # 1024 MiB
        "GPU_MEMORY_USAGE_BYTES_PER_GPU/1": [2147483648.0] * 2,
        "GPU_MEMORY_USAGE_BYTES": [3221225472.0] * 2,
        "CPU_USAGE_CORES": [1.5, 1.5],
        "CPU_MEMORY_USAGE_BYTES": [2.0 * GIB] * 2,
    }


def test_a_projects_gpus_are_those_its_running_pods_hold(source: PrometheusMetrics) -> None:
    window = recent()
    team_a = source.series(SeriesQuery(SampleScope(project_ids=["7"]), ["GPU_ALLOCATION"], window))
    assert figures(team_a) == {"GPU_ALLOCATION": [4.0, 4.0]}  # 2 + 1 (+ 1 pending) + 1
    team_b = source.series(SeriesQuery(SampleScope(project_ids=["8"]), ["GPU_ALLOCATION"], window))
    assert figures(team_b) == {"GPU_ALLOCATION": [4.0, 4.0]}
    both = source.series(
        SeriesQuery(SampleScope(project_ids=["7", "8"]), ["GPU_ALLOCATION"], window)
    )
    assert figures(both) == {"GPU_ALLOCATION": [8.0, 8.0]}
    unknown = source.series(SeriesQuery(SampleScope(project_ids=["9"]), ["GPU_ALLOCATION"], window))
    assert figures(unknown) == {"GPU_ALLOCATION": []}


def test_a_nodes_figures_are_locksteps_pods_on_it(source: PrometheusMetrics) -> None:
    types = ["CPU_USAGE_CORES", "GPU_UTILIZATION_PER_GPU", "GPU_UTILIZATION"]
    found = source.series(SeriesQuery(SampleScope(nodes=["node-a"]), types, recent()))
    assert figures(found) == {
        "CPU_USAGE_CORES": [5.75, 5.75],  # 1.5 + 0.25 + 4, not coredns's
        "GPU_UTILIZATION_PER_GPU/0": [37.0, 37.0],
        "GPU_UTILIZATION_PER_GPU/1": [41.0, 41.0],
        "GPU_UTILIZATION_PER_GPU/2": [10.0, 10.0],
        "GPU_UTILIZATION_PER_GPU/3": [90.0, 90.0],
        "GPU_UTILIZATION": [44.5, 44.5],
    }
    nowhere = source.series(SeriesQuery(SampleScope(nodes=[]), types, recent()))
    assert figures(nowhere) == {
        "CPU_USAGE_CORES": [],
        "GPU_UTILIZATION_PER_GPU": [],
        "GPU_UTILIZATION": [],
    }


def test_a_clusters_gpus_are_those_of_locksteps_pods_on_its_nodes(
    source: PrometheusMetrics,
) -> None:
    scope = SampleScope(cluster_id="c", nodes=["node-a", "node-b"])
    found = source.series(SeriesQuery(scope, ["ALLOCATED_GPU", "GPU_UTILIZATION"], recent(3)))
    assert figures(found) == {
        "ALLOCATED_GPU": [8.0] * 3,  # 2 + 1 + 1 + 4
        "GPU_UTILIZATION": [47.6] * 3,  # (37 + 41 + 60 + 10 + 90) / 5
    }


def test_a_name_cannot_change_the_query(source: PrometheusMetrics) -> None:
    """Values are quoted: a workload id or pod name made to close the string and add a
    selector of its own selects nothing."""
    window = recent()
    for scope in (
        SampleScope(workload_id=f'{TRAIN}"}} or vector(1) or up{{a="'),
        SampleScope(workload_id=TRAIN, pod='train-master-0"} or vector(1) or up{a="'),
        SampleScope(nodes=['node-a"} or vector(1) or up{a="']),
        SampleScope(nodes=["node-.*"]),
    ):
        found = source.series(SeriesQuery(scope, ["CPU_USAGE_CORES", "POD_COUNT"], window))
        assert figures(found) == {"CPU_USAGE_CORES": [], "POD_COUNT": []}, scope


def test_a_single_point_covers_the_whole_window(source: PrometheusMetrics) -> None:
    found = source.series(
        SeriesQuery(SampleScope(workload_id=EVAL), ["CPU_USAGE_CORES"], recent(1))
    )
    assert figures(found) == {"CPU_USAGE_CORES": [0.25]}


def unreachable(url: str, *, timeout: float = 5) -> PrometheusMetrics:
    return PrometheusMetrics(
        url, client=httpx.Client(), selector=selecting, timeout=timeout, min_range=MIN_RANGE
    )


def ask(source: PrometheusMetrics) -> None:
    source.series(SeriesQuery(SampleScope(workload_id=TRAIN), ["CPU_USAGE_CORES"], recent()))


def test_a_prometheus_that_is_down_is_unavailable_naming_its_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(MetricsUnavailable, match=f"Prometheus at {url} cannot be reached"):
        ask(unreachable(url))


def test_a_prometheus_that_does_not_answer_in_time_is_unavailable() -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(
            MetricsUnavailable, match=f"{url} did not answer CPU_USAGE_CORES within 0.5 s"
        ):
            ask(unreachable(url, timeout=0.5))


def test_a_refusal_or_an_answer_of_something_else_is_unavailable(cluster: Cluster) -> None:
    url = cluster.exporter.url
    with pytest.raises(MetricsUnavailable, match=rf"{url} refused the query .*execution.*fixture"):
        ask(unreachable(url))
    with pytest.raises(MetricsUnavailable, match=f"{url}/elsewhere answered .* HTTP 404"):
        ask(unreachable(f"{url}/elsewhere"))
    secret = unreachable(f"http://user:hunter2@127.0.0.1:{free_port()}")
    with pytest.raises(MetricsUnavailable) as raised:
        ask(secret)
    assert "hunter2" not in raised.value.message


def test_an_answer_too_large_is_unavailable(cluster: Cluster) -> None:
    with httpx.Client() as client:
        small = PrometheusMetrics(
            cluster.prometheus, client=client, selector=selecting, min_range=MIN_RANGE, max_bytes=64
        )
        with pytest.raises(MetricsUnavailable, match="answered more than 64 bytes"):
            ask(small)


def test_a_servers_metrics_on_kubernetes_come_from_its_prometheus(
    cluster: Cluster, tmp_path: Path, sqlite_url: str
) -> None:
    with FakeKubernetes() as kube:
        settings = make_settings(tmp_path / "data", sqlite_url).model_copy(
            update={
                "runtime": RuntimeKind.KUBERNETES,
                "kubeconfig": kube.write_kubeconfig(tmp_path / "kubeconfig"),
                "prometheus_url": cluster.prometheus,
                "prometheus_min_range_seconds": MIN_RANGE.total_seconds(),
            }
        )
        with in_process(settings) as client:
            api = Api.login(client)
            workload_id = api.create(distributed(api.cluster_id(), name="metered", workers=1))[
                "workloadId"
            ]
            item = api.workload(workload_id)
            project_id, department_id = item["projectId"], item["departmentId"]
            cluster.exporter.add(
                *(
                    FixturePod(
                        "runai-default",
                        f"metered-{role}-0",
                        node="node-c",
                        workload_id=workload_id,
                        project_id=project_id,
                        containers=[Container("pytorch", 0.75, GIB)],
                    )
                    for role in ("master", "worker")
                ),
                FixturePod(
                    "runai-default",
                    "metered-worker-1",
                    node="node-c",
                    workload_id=workload_id,
                    project_id=project_id,
                    containers=[Container("pytorch", 0, 0)],
                    gpu_request=2,
                ),
                # Its pods' names in another namespace, another workload's.
                FixturePod(
                    TEAM_B,
                    "metered-master-0",
                    node="node-c",
                    workload_id=workload_id[::-1],
                    project_id="8",
                    containers=[Container("pytorch", 8, 8 * GIB)],
                ),
            )
            scraped(cluster.prometheus, 'kube_pod_info{node="node-c"}', 4)
            window = recent()
            params = {
                "metricType": "CPU_USAGE_CORES,CPU_MEMORY_USAGE_BYTES,POD_COUNT,RUNNING_POD_COUNT",
                "start": iso(window.start),
                "end": iso(window.end),
                "numberOfSamples": 2,
            }
            response = api.get(f"/api/v1/workloads/{workload_id}/metrics", params=params)
            assert response.status_code == 200, response.text
            answer = assert_conforms(response, "/api/v1/workloads/{workloadId}/metrics")
            values = {m["type"]: [v["value"] for v in m["values"]] for m in answer["measurements"]}
            assert values == {
                "CPU_USAGE_CORES": ["1.5", "1.5"],
                "CPU_MEMORY_USAGE_BYTES": [str(2 * GIB)] * 2,
                "POD_COUNT": ["3", "3"],
                "RUNNING_POD_COUNT": ["3", "3"],
            }
            for path, template in (
                (f"/api/v1/org-unit/projects/{project_id}/metrics", "projects/{projectId}"),
                (
                    f"/api/v1/org-unit/departments/{department_id}/metrics",
                    "departments/{departmentId}",
                ),
            ):
                held = api.get(path, params={**params, "metricType": "GPU_ALLOCATION"})
                assert held.status_code == 200, held.text
                body = assert_conforms(held, f"/api/v1/org-unit/{template}/metrics")
                assert [v["value"] for v in body["measurements"][0]["values"]] == ["2", "2"]
            asked = Window(parse_moment(iso(window.start)), parse_moment(iso(window.end)), 2)
            for measurement in answer["measurements"]:
                stamps = [v["timestamp"] for v in measurement["values"]]
                assert stamps == [iso(at) for at in asked.timestamps()]
