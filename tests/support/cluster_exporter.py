"""A fixture exporter for tests: one HTTP server on a free loopback port whose `/metrics`
serves, in the Prometheus text format, what a cluster's exporters would say of a few pods
with known figures — cAdvisor's `container_cpu_usage_seconds_total` and
`container_memory_working_set_bytes` (per container, plus the pod's own cgroup and its pause
container, which must not be counted), kube-state-metrics' `kube_pod_info`,
`kube_pod_labels` (lockstep's labels allowlisted), `kube_pod_status_phase` and
`kube_pod_container_resource_requests`, and the DCGM exporter's `DCGM_FI_DEV_GPU_UTIL` and
`DCGM_FI_DEV_FB_USED` (MiB).

A CPU counter grows by exactly its cores each second: each scrape carries its own timestamp,
so that a rate over it is the cores. The pods can be changed while it runs (`pods`).
`/api/v1/query_range` answers as a Prometheus refusing a query would; any other path 404.
Used by tests/integration/test_prometheus_source.py, with a real Prometheus scraping it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from lockstep.services.metrics.promql import PROJECT_LABEL, WORKLOAD_LABEL

PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
REFUSAL = {"status": "error", "errorType": "execution", "error": "the fixture answers no query"}


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    cores: float
    memory_bytes: int


@dataclass(frozen=True, slots=True)
class Gpu:
    index: str
    utilization: float
    """Percent."""
    memory_used_mib: int


@dataclass(frozen=True, slots=True)
class FixturePod:
    namespace: str
    name: str
    node: str = ""
    """Empty while Pending and unscheduled."""
    workload_id: str | None = None
    """None: not lockstep's (no lockstep labels)."""
    project_id: str | None = None
    phase: str = "Running"
    containers: Sequence[Container] = ()
    gpus: Sequence[Gpu] = ()
    gpu_request: int = 0

    @property
    def uid(self) -> str:
        return f"uid-{self.namespace}-{self.name}"


def _labels(**labels: str) -> str:
    return "{" + ",".join(f"{k}={json.dumps(v)}" for k, v in labels.items()) + "}"


def exposition(pods: Sequence[FixturePod], *, started: float, now: float) -> str:
    """The text every exporter would show of `pods` at `now` (seconds since the epoch);
    CPU counters have counted since `started`."""
    lines: list[str] = []
    milliseconds = round(now * 1000)  # the sample's timestamp, which its value must match
    stamp = f" {milliseconds}"
    elapsed = (milliseconds - round(started * 1000)) / 1000  # exact: whole milliseconds
    for pod in pods:
        who = {"namespace": pod.namespace, "pod": pod.name}
        uid = {**who, "uid": pod.uid}
        info = {**uid, "node": pod.node, "host_ip": "10.0.0.1", "created_by_kind": "PyTorchJob"}
        lines.append(f"kube_pod_info{_labels(**info)} 1")
        mine = {}
        if pod.workload_id is not None:
            mine[WORKLOAD_LABEL] = pod.workload_id
        if pod.project_id is not None:
            mine[PROJECT_LABEL] = pod.project_id
        lines.append(f"kube_pod_labels{_labels(**uid, **mine, label_app='fixture')} 1")
        for phase in PHASES:
            value = int(phase == pod.phase)
            lines.append(f"kube_pod_status_phase{_labels(**uid, phase=phase)} {value}")
        for container in pod.containers or [Container("main", 0, 0)]:
            held = {**uid, "container": container.name, "node": pod.node}
            lines.append(
                f"kube_pod_container_resource_requests"
                f"{_labels(**held, resource='cpu', unit='core')} 1"
            )
        if pod.gpu_request:
            first = (pod.containers or [Container("main", 0, 0)])[0].name
            held = {**uid, "container": first, "node": pod.node}
            lines.append(
                f"kube_pod_container_resource_requests"
                f"{_labels(**held, resource='nvidia_com_gpu', unit='integer')} {pod.gpu_request}"
            )
        total_cores = sum(c.cores for c in pod.containers)
        total_memory = sum(c.memory_bytes for c in pod.containers)
        cgroups = [(c.name, c.cores, c.memory_bytes) for c in pod.containers]
        if pod.containers:
            # The pod's own cgroup (the sum) and its pause container: not to be counted again.
            cgroups += [("", total_cores, total_memory), ("POD", 0.5, 1 << 20)]
        for name, cores, memory in cgroups:
            series = {**who, "container": name, "id": f"/kubepods/{pod.uid}/{name}", "cpu": "total"}
            lines.append(
                f"container_cpu_usage_seconds_total{_labels(**series)} {cores * elapsed!r}{stamp}"
            )
            lines.append(f"container_memory_working_set_bytes{_labels(**series)} {memory}")
        for gpu in pod.gpus:
            device = {
                "gpu": gpu.index,
                "UUID": f"GPU-{pod.node}-{gpu.index}",
                "device": f"nvidia{gpu.index}",
                "modelName": "NVIDIA H100 80GB HBM3",
                "Hostname": pod.node,
                "container": (pod.containers or [Container("main", 0, 0)])[0].name,
                **who,
            }
            lines.append(f"DCGM_FI_DEV_GPU_UTIL{_labels(**device)} {gpu.utilization!r}")
            lines.append(f"DCGM_FI_DEV_FB_USED{_labels(**device)} {gpu.memory_used_mib}")
    return "\n".join(lines) + "\n"


class ClusterExporter:
    """The fixture exporter, serving from `start` (or `with`) until `stop`."""

    def __init__(self, pods: Sequence[FixturePod] = ()) -> None:
        self._lock = threading.Lock()
        self._pods = list(pods)
        self._started = time.time()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def pods(self) -> list[FixturePod]:
        with self._lock:
            return list(self._pods)

    def add(self, *pods: FixturePod) -> None:
        with self._lock:
            self._pods.extend(pods)

    def text(self) -> str:
        with self._lock:
            pods = list(self._pods)
        return exposition(pods, started=self._started, now=time.time())

    @property
    def port(self) -> int:
        assert self._server is not None, "the exporter is not started"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?")[0] != "/metrics":
                    self._reply(404, b"not found\n", "text/plain")
                    return
                self._reply(200, exporter.text().encode(), "text/plain; version=0.0.4")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                if self.path == "/api/v1/query_range":
                    self._reply(422, json.dumps(REFUSAL).encode(), "application/json")
                else:
                    self._reply(404, b"404 page not found\n", "text/plain")

            def _reply(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> ClusterExporter:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
