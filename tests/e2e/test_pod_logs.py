"""Pod logs over real HTTP: `follow` streams lines as the pod prints them and ends when the pod
ends, and what a pod prints while lockstep is down is in its log once lockstep is back."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

from tests.support.api import poll
from tests.support.pods import pod_log
from tests.support.requests import distributed, shared
from tests.support.server import LiveServer

STAGES = (
    "import os, sys, time\n"
    "gates = sys.argv[1]\n"
    "for stage in sys.argv[2:]:\n"
    "    print(stage, flush=True)\n"
    "    open(os.path.join(gates, stage + '.printed'), 'w').close()\n"
    "    while not os.path.exists(os.path.join(gates, stage)): time.sleep(0.02)\n"
)


def staged(cluster: str, gates: Path, name: str, *stages: str) -> dict[str, Any]:
    """A workload whose master prints each stage, then waits for `<gates>/<stage>` to exist;
    its worker just ends."""
    script = gates / "stages.py"
    script.write_text(STAGES)
    body = distributed(cluster, name=name, workers=1, args="-c pass")
    body["masterSpecSameAsWorker"] = False
    body["masterSpec"] = {
        "image": "python:3.11",
        "command": sys.executable,
        "args": " ".join([str(script), str(gates), *stages]),
        "storage": shared(gates),  # what it writes there reaches the test
    }
    return body


def printed(gates: Path, stage: str) -> None:
    poll(lambda: (gates / f"{stage}.printed").exists() or None, timeout=60, what=stage)


def test_follow_streams_each_line_as_printed_and_ends_with_the_pod(
    live_server: LiveServer, tmp_path: Path
) -> None:
    api = live_server.api()
    workload_id = api.create(staged(api.cluster_id(), tmp_path, "chatty", "one", "two"))[
        "workloadId"
    ]
    printed(tmp_path, "one")
    path = f"/api/v1/workloads/{workload_id}/pods/chatty-master-0/logs"
    with api.client.stream(
        "GET", path, params={"follow": "true"}, headers=api.headers()
    ) as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        assert next(lines) == "one"
        (tmp_path / "one").touch()
        assert next(lines) == "two"
        (tmp_path / "two").touch()
        assert list(lines) == []  # the stream ended: the pod did
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"


def test_what_a_pod_prints_while_lockstep_is_down_is_kept(
    live_server: LiveServer, tmp_path: Path
) -> None:
    api = live_server.api()
    body = staged(api.cluster_id(), tmp_path, "steadfast", "before", "during", "after")
    workload_id = api.create(body)["workloadId"]
    printed(tmp_path, "before")
    poll(
        lambda: pod_log(api, workload_id, "steadfast-master-0") == "before\n" or None,
        timeout=30,
        what="the first line in the log",
    )

    live_server.stop(signal.SIGKILL)
    (tmp_path / "before").touch()
    printed(tmp_path, "during")  # into the pod's pipe, with nobody reading it

    live_server.start()
    api = live_server.api()
    (tmp_path / "during").touch()
    poll(
        lambda: pod_log(api, workload_id, "steadfast-master-0").endswith("after\n") or None,
        timeout=60,
        what="lockstep to collect the pod's output again",
    )
    (tmp_path / "after").touch()
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    assert pod_log(api, workload_id, "steadfast-master-0") == "before\nduring\nafter\n"
