"""Trainings on the local runtime, through the API: one that completes, one that fails with
its exit code named, a Job-like one of four completions two at a time, and suspend/resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.api import Api, poll
from tests.support.pods import pod_log
from tests.support.requests import python, shared, single_pod
from tests.support.server import LiveServer

TRAININGS = "trainings"


def _pods(api: Api, workload_id: str) -> list[dict[str, Any]]:
    pods: list[dict[str, Any]] = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
    return pods


def test_a_training_completes_and_is_listed_as_one(live_server: LiveServer) -> None:
    api = live_server.api()
    body = single_pod(api.cluster_id(), name="fit", args=python("print('fitted')"))
    created = api.create(body, kind=TRAININGS)
    assert created["name"] == "fit"
    assert created["spec"]["image"] == "python:3.11"
    done = api.wait_for(created["workloadId"], {"Completed", "Failed"}, timeout=60)
    assert done["phase"] == "Completed", done
    assert done["type"] == "Training"
    assert done["priorityClassName"] == "train"
    assert done["preemptible"] is True
    assert [p["name"] for p in _pods(api, created["workloadId"])] == ["fit-0"]
    assert "fitted" in pod_log(api, created["workloadId"], "fit-0")
    got = api.get(f"/api/v1/workloads/trainings/{created['workloadId']}")
    assert got.status_code == 200 and got.json()["actualPhase"] == "Completed"
    # Each kind's path answers for its own kind only; the generic list filters by type.
    wrong = api.get(f"/api/v1/workloads/workspaces/{created['workloadId']}")
    assert wrong.status_code == 404, wrong.text
    assert "no workspace" in wrong.json()["message"]
    listed = api.get("/api/v1/workloads", params={"filterBy": "type==Training"}).json()
    assert [w["name"] for w in listed["workloads"]] == ["fit"]
    none = api.get("/api/v1/workloads", params={"filterBy": "type==Distributed"}).json()
    assert none["workloads"] == []


def test_a_failing_training_names_its_exit_code(live_server: LiveServer) -> None:
    api = live_server.api()
    body = single_pod(
        api.cluster_id(),
        name="broken",
        args=python("import sys; print('bad data'); sys.exit(7)"),
        backoffLimit=1,
    )
    created = api.create(body, kind=TRAININGS)
    failed = api.wait_for(created["workloadId"], {"Failed", "Completed"}, timeout=60)
    assert failed["phase"] == "Failed", failed
    message = failed["phaseMessage"]
    assert "broken-0" in message and "exited with code 7" in message, message
    assert "backoff limit (1)" in message, message
    assert "bad data" in message  # the last lines of its log
    (pod,) = _pods(api, created["workloadId"])
    assert pod["k8sPhase"] == "Failed"
    # Run again once, as backoffLimit 1 allows.
    assert [c["restartCount"] for c in pod["containers"]] == [1], pod


def test_four_completions_two_at_a_time(live_server: LiveServer, tmp_path: Path) -> None:
    """Each completion index runs once; never more than two at a time."""
    api = live_server.api()
    shared_dir = tmp_path / "completions"  # tmp_path is where pods may write (conftest.py)
    shared_dir.mkdir()
    code = (
        "import os, time, pathlib\n"
        f"d = pathlib.Path({str(shared_dir)!r})\n"
        "i = os.environ['JOB_COMPLETION_INDEX']\n"
        "(d / f'start-{i}').write_text(str(time.time()))\n"
        "time.sleep(0.5)\n"
        "(d / f'end-{i}').write_text(str(time.time()))\n"
    )
    body = single_pod(
        api.cluster_id(),
        name="sweep",
        args=python(code),
        completions=4,
        parallelism=2,
        storage=shared(shared_dir),
    )
    created = api.create(body, kind=TRAININGS)
    done = api.wait_for(created["workloadId"], {"Completed", "Failed"}, timeout=120)
    assert done["phase"] == "Completed", done
    assert done["phaseMessage"] == "all 4 completions succeeded"
    pods = _pods(api, created["workloadId"])
    assert sorted(p["name"] for p in pods) == ["sweep-0", "sweep-1", "sweep-2", "sweep-3"]
    assert {p["k8sPhase"] for p in pods} == {"Succeeded"}

    def moment(name: str) -> float:
        return float((shared_dir / name).read_text())

    spans = [(moment(f"start-{i}"), moment(f"end-{i}")) for i in range(4)]
    for start, _ in spans:
        running = sum(1 for s, e in spans if s <= start < e)
        assert running <= 2, spans
    # Completion 2 ran after completion 0 ended, in its place (its lane).
    assert spans[2][0] >= spans[0][1] and spans[3][0] >= spans[1][1], spans


def test_a_training_is_suspended_and_resumed(live_server: LiveServer) -> None:
    api = live_server.api()
    body = single_pod(
        api.cluster_id(),
        name="long",
        args=python("import time; time.sleep(600)"),
        terminationGracePeriodSeconds=1,
    )
    created = api.create(body, kind=TRAININGS)
    workload_id = created["workloadId"]
    api.wait_for(workload_id, {"Running"}, timeout=60)
    path = f"/api/v1/workloads/trainings/{workload_id}"
    assert api.post(f"{path}/suspend").status_code == 202
    api.wait_for(workload_id, {"Stopped"}, timeout=60)
    poll(
        lambda: True if all(p["k8sPhase"] != "Running" for p in _pods(api, workload_id)) else None,
        timeout=30,
        what="the pod to stop",
    )
    assert api.post(f"{path}/resume").status_code == 202
    api.wait_for(workload_id, {"Running"}, timeout=60)
    assert api.delete(path).status_code == 202
    api.wait_gone(workload_id)
