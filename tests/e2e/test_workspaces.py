"""Workspaces on the local runtime, through the API: one that unpacks a tar archive passed in
its `args` into an existing claim and completes (a training started next reads the files), one
that serves HTTP on a port a client reaches at the URL lockstep reports, and suspend/resume."""

from __future__ import annotations

import base64
import io
import os
import socket
import sys
import tarfile
from typing import Any

import httpx

from tests.support.api import Api, poll
from tests.support.pods import pod_log
from tests.support.requests import python, single_pod
from tests.support.server import LiveServer

WORKSPACES = "workspaces"
MAX_COMMAND_CHARACTERS = 10_000


def _archive(files: dict[str, bytes]) -> str:
    """A gzipped tar of `files`, base64-encoded."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            member = tarfile.TarInfo(name)
            member.size = len(data)
            member.mode = 0o644
            archive.addfile(member, io.BytesIO(data))
    return base64.b64encode(buffer.getvalue()).decode()


def _unpacking_args(directory: str) -> tuple[str, dict[str, bytes]]:
    """`sh -c` args close to the server's 10,000-character limit that unpack an archive of
    code and data (random, so it does not compress) into `directory`."""
    files = {
        "train.py": b"import pathlib\n"
        b"data = pathlib.Path(__file__).with_name('data.bin').read_bytes()\n"
        b"print('read', len(data), 'bytes of data')\n",
        "data.bin": os.urandom(7000),
    }
    script = f"echo {_archive(files)} | base64 -d | tar -xz -C {directory} && ls {directory}"
    args = f"-c '{script}'"
    assert 9_000 < len(args) <= MAX_COMMAND_CHARACTERS, len(args)
    return args, files


def test_a_workspace_unpacks_code_into_a_claim_and_a_training_reads_it(
    live_server: LiveServer,
) -> None:
    api = live_server.api()
    made = api.post("/api/v1/org-unit/projects/1/claims", json={"name": "code", "size": "10Mi"})
    assert made.status_code == 201, made.text
    args, files = _unpacking_args("/code")
    claim = {"claimName": "code", "path": "/code", "existingPvc": True}
    body = single_pod(
        api.cluster_id(), name="upload", command="sh", args=args, storage={"pvc": [claim]}
    )
    created = api.create(body, kind=WORKSPACES)
    assert created["spec"]["args"] == args
    done = api.wait_for(created["workloadId"], {"Completed", "Failed"}, timeout=60)
    assert done["phase"] == "Completed", done
    assert done["type"] == "Workspace"
    assert (done["priorityClassName"], done["preemptible"]) == ("build", False)
    assert "data.bin" in pod_log(api, created["workloadId"], "upload-0")
    kept = live_server.data_dir / "claims" / "1" / "code"
    assert (kept / "data.bin").read_bytes() == files["data.bin"]

    reader = {"claimName": "code", "path": "/code", "existingPvc": True, "readOnly": True}
    training = single_pod(
        api.cluster_id(), name="reader", args="/code/train.py", storage={"pvc": [reader]}
    )
    trained = api.create(training, kind="trainings")
    finished = api.wait_for(trained["workloadId"], {"Completed", "Failed"}, timeout=60)
    assert finished["phase"] == "Completed", finished
    assert "read 7000 bytes of data" in pod_log(api, trained["workloadId"], "reader-0")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


SERVES = (
    "import http.server, os, sys\n"
    "port = int(os.environ['LOCKSTEP_HOST_PORT_' + sys.argv[1]])\n"
    "class Notebook(http.server.BaseHTTPRequestHandler):\n"
    "    def do_GET(self):\n"
    "        self.send_response(200)\n"
    "        self.end_headers()\n"
    "        self.wfile.write(b'notebook ' + os.environ['HOSTNAME'].encode())\n"
    "    def log_message(self, *args):\n"
    "        pass\n"
    "http.server.HTTPServer(('0.0.0.0', port), Notebook).serve_forever()\n"
)


def _serving(api: Api, name: str) -> dict[str, Any]:
    port = _free_port()
    return single_pod(
        api.cluster_id(),
        name=name,
        command=sys.executable,
        args=f"{python(SERVES)} {port}",
        ports=[{"container": port, "name": "http"}],
        exposedUrls=[{"container": port}],
        terminationGracePeriodSeconds=1,
    )


def _url(api: Api, workload_id: str) -> str:
    """The URL lockstep reports for the workspace, once its pod runs."""

    def reported() -> str | None:
        item = api.workload(workload_id)
        pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
        bound = pods and pods[0]["containers"][0]["ports"]
        return str(item["urls"][0]) if item["phase"] == "Running" and bound else None

    return poll(reported, timeout=60, what="the workspace to run and report its URL")


def _answer(url: str) -> str | None:
    try:
        return httpx.get(url, timeout=2).text
    except httpx.TransportError:
        return None


def test_a_workspace_serves_http_at_the_url_lockstep_reports(live_server: LiveServer) -> None:
    api = live_server.api()
    created = api.create(_serving(api, "notebook"), kind=WORKSPACES)
    workload_id = created["workloadId"]
    url = _url(api, workload_id)
    assert poll(lambda: _answer(url), timeout=30, what=f"{url} to answer") == "notebook notebook-0"

    path = f"/api/v1/workloads/workspaces/{workload_id}"
    assert api.post(f"{path}/suspend").status_code == 202
    api.wait_for(workload_id, {"Stopped"}, timeout=60)
    poll(lambda: True if _answer(url) is None else None, timeout=30, what=f"{url} to close")
    assert api.post(f"{path}/resume").status_code == 202
    url = _url(api, workload_id)
    assert poll(lambda: _answer(url), timeout=30, what=f"{url} to answer") == "notebook notebook-0"
    assert api.delete(path).status_code == 202
    api.wait_gone(workload_id)
    assert _answer(url) is None


def test_a_workspace_whose_command_fails_is_failed(live_server: LiveServer) -> None:
    api = live_server.api()
    body = single_pod(api.cluster_id(), name="typo", args=python("raise SystemExit(2)"))
    created = api.create(body, kind=WORKSPACES)
    failed = api.wait_for(created["workloadId"], {"Failed", "Completed"}, timeout=60)
    assert failed["phase"] == "Failed", failed
    assert "typo-0" in failed["phaseMessage"] and "exited with code 2" in failed["phaseMessage"]
