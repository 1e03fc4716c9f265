"""Container ports and readiness probes on the local runtime: each declared port gets a port of
this machine (the same number for the first pod that declares it, when free), reported on the
pod and given to it in LOCKSTEP_HOST_PORT_<port>; an httpGet readiness probe holds the workload
Initializing until the pod answers; exposedUrls resolve to this machine."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.api import Api, poll
from tests.support.requests import distributed, shared

SERVES_WHEN_RELEASED = """\
import http.server, os, sys, time
gate, container = sys.argv[1], sys.argv[2]
while not os.path.exists(gate):
    time.sleep(0.02)
port = int(os.environ["LOCKSTEP_HOST_PORT_" + container])

class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/healthz" else 404)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass

print("serving on", port, flush=True)
http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"""


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def served(api: Api, tmp_path: Path, name: str, port: int, **master: Any) -> dict[str, Any]:
    script = tmp_path / "serve.py"
    script.write_text(SERVES_WHEN_RELEASED)
    talk = tmp_path / "talk"  # where the test opens the gate, as the pod sees it
    talk.mkdir(exist_ok=True)
    body = distributed(
        api.cluster_id(), name=name, workers=1, args="-c 'import time; time.sleep(600)'"
    )
    body["masterSpecSameAsWorker"] = False
    body["masterSpec"] = {
        "image": "python:3.11",
        "command": sys.executable,
        "args": f"{script} {talk / 'gate'} {port}",
        "ports": [{"container": port, "name": "http"}],
        "storage": shared(talk),
        **master,
    }
    return body


def pod(api: Api, workload_id: str, name: str) -> dict[str, Any]:
    """The pod named `name`, waiting for it to be listed (pods appear as they start)."""

    def listed() -> dict[str, Any] | None:
        pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
        return next((p for p in pods if p["name"] == name), None)

    return poll(listed, timeout=30, what=f"pod {name} to be listed")


def test_a_readiness_probe_gates_running_and_the_port_is_reported(api: Api, tmp_path: Path) -> None:
    port = unused_port()
    probe = {
        "readiness": {
            "periodSeconds": 1,
            "handler": {"httpGet": {"path": "/healthz", "port": port}},
        }
    }
    body = served(api, tmp_path, "probed", port, probes=probe)
    body["spec"]["exposedUrls"] = [{"container": port}]
    workload_id = api.create(body)["workloadId"]

    waiting = api.wait_for(workload_id, {"Initializing"}, timeout=60)
    poll(
        lambda: (
            "waiting for probed-master-0 to be ready" in api.workload(workload_id)["phaseMessage"]
            or None
        ),
        timeout=60,
        what="the workload to wait for the master's readiness",
    )
    master = pod(api, workload_id, "probed-master-0")
    assert master["k8sPhase"] == "Running"
    assert master["containers"][0]["ready"] is False
    assert master["containers"][0]["ports"] == [
        {"containerPort": port, "hostPort": port, "name": "http"}
    ]
    assert waiting["phase"] == "Initializing"

    (tmp_path / "talk" / "gate").touch()
    api.wait_for(workload_id, {"Running"}, timeout=60)
    assert pod(api, workload_id, "probed-master-0")["containers"][0]["ready"] is True
    events = api.get(f"/api/v1/workloads/{workload_id}/events").json()["events"]
    assert any(e["reason"] == "Ready" and "probed-master-0" in e["message"] for e in events)

    [url] = api.workload(workload_id)["urls"]
    assert url == f"http://localhost:{port}"
    assert httpx.get(f"{url}/healthz".replace("localhost", "127.0.0.1")).status_code == 200


@pytest.mark.parametrize("external", [False, True], ids=["container-port", "external-port"])
def test_a_port_two_pods_declare_is_the_first_pods_and_the_other_learns_its_own(
    api: Api, tmp_path: Path, external: bool
) -> None:
    """Also a machine port asked for (`external`) on a spec both pods share: the workload's,
    given to its leader, as a service in front of the workload would reach the leader."""
    port = unused_port()
    body = served(api, tmp_path, "shared", port)
    body["spec"]["ports"] = [{"container": port}]
    if external:
        for spec in ("spec", "masterSpec"):
            body[spec]["ports"][0]["external"] = port
    body["spec"]["args"] = (
        f'-c \'import os; print(os.environ["LOCKSTEP_HOST_PORT_{port}"], flush=True); '
        "import time; time.sleep(600)'"
    )
    workload_id = api.create(body)["workloadId"]
    api.wait_for(workload_id, {"Initializing", "Running"}, timeout=60)

    def ports_of(name: str) -> list[dict[str, Any]] | None:
        found: list[dict[str, Any]] = pod(api, workload_id, name)["containers"][0]["ports"]
        return found or None

    master = poll(lambda: ports_of("shared-master-0"), timeout=30, what="master ports")
    worker = poll(lambda: ports_of("shared-worker-0"), timeout=30, what="worker ports")
    assert master[0]["hostPort"] == port
    assert worker[0]["containerPort"] == port
    assert worker[0]["hostPort"] != port
    log = poll(
        lambda: api.get(f"/api/v1/workloads/{workload_id}/pods/shared-worker-0/logs").text or None,
        timeout=30,
        what="the worker's line",
    )
    assert log == f"{worker[0]['hostPort']}\n"
    (tmp_path / "talk" / "gate").touch()
    api.wait_for(workload_id, {"Running"}, timeout=60)


def test_an_external_port_that_is_taken_fails_the_workload_naming_it(
    api: Api, tmp_path: Path
) -> None:
    with socket.socket() as holder:
        holder.bind(("0.0.0.0", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        body = served(api, tmp_path, "clash", 8080)
        body["masterSpec"]["ports"] = [{"container": 8080, "external": taken}]
        workload_id = api.create(body)["workloadId"]
        failed = api.wait_for(workload_id, {"Failed", "Running"}, timeout=60)
    assert failed["phase"] == "Failed"
    assert f"port {taken} of this machine" in failed["phaseMessage"]
    assert "is taken" in failed["phaseMessage"]
