"""`GET /api/v1/workloads/{id}/pods/{pod}/logs`: what pods printed, on stdout and stderr, chosen
by tail and since, time-stamped on request, kept after the pod ended and while the workload is
suspended, and refused clearly for a pod or a query that is wrong."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.support.api import Api, poll
from tests.support.pods import settled_pods
from tests.support.requests import distributed, python

PRINTS = python(
    "import os, sys\n"
    "for n in range(5): print(f'{os.environ[\"RANK\"]} line {n}')\n"
    "print('to stderr', file=sys.stderr)"
)


def logs_path(workload_id: str, pod: str) -> str:
    return f"/api/v1/workloads/{workload_id}/pods/{pod}/logs"


def completed(api: Api, name: str, args: str) -> str:
    workload_id = str(
        api.create(distributed(api.cluster_id(), name=name, workers=1, args=args))["workloadId"]
    )
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    settled_pods(api, workload_id)  # the master's end ends the workload, not the worker's
    return workload_id


def test_stdout_and_stderr_of_each_pod_in_order(api: Api) -> None:
    workload_id = completed(api, "printer", PRINTS)
    for pod, rank in (("printer-master-0", 0), ("printer-worker-0", 1)):
        response = api.get(logs_path(workload_id, pod))
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/plain; charset=utf-8"
        assert response.text.splitlines() == [f"{rank} line {n}" for n in range(5)] + ["to stderr"]


def test_tail_since_and_timestamps(api: Api) -> None:
    workload_id = completed(api, "tails", PRINTS)
    path = logs_path(workload_id, "tails-master-0")
    assert api.get(path, params={"tailLines": 2}).text == "0 line 4\nto stderr\n"
    assert api.get(path, params={"tailLines": 0}).text == ""
    assert len(api.get(path, params={"sinceSeconds": 3600}).text.splitlines()) == 6

    stamped = api.get(path, params={"timestamps": "true", "tailLines": 1}).text
    moment, _, text = stamped.rstrip("\n").partition(" ")
    printed = datetime.strptime(moment, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert text == "to stderr"
    assert abs(datetime.now(UTC) - printed) < timedelta(minutes=5)


def test_logs_outlive_a_suspension_and_the_next_run_appends(api: Api) -> None:
    args = python("import time; print('running', flush=True); time.sleep(600)")
    body = distributed(api.cluster_id(), name="pausing", workers=1, args=args)
    workload_id = str(api.create(body)["workloadId"])
    path = logs_path(workload_id, "pausing-master-0")

    def lines() -> list[str]:
        return list(api.get(path).text.splitlines())

    poll(lambda: lines() == ["running"] or None, timeout=60, what="the first run's line")
    assert api.post(f"/api/v1/workloads/distributed/{workload_id}/suspend").status_code == 202
    api.wait_for(workload_id, {"Stopped"})
    assert lines() == ["running"]

    assert api.post(f"/api/v1/workloads/distributed/{workload_id}/resume").status_code == 202
    poll(lambda: lines() == ["running", "running"] or None, timeout=60, what="the second run")
    assert api.delete(f"/api/v1/workloads/distributed/{workload_id}").status_code == 202
    api.wait_gone(workload_id)
    assert api.get(path).status_code == 404


def error_of(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == status
    return str(body["message"])


def test_a_pod_the_workload_does_not_have_is_not_found(api: Api) -> None:
    workload_id = completed(api, "lonely", python("pass"))
    message = error_of(api.get(logs_path(workload_id, "lonely-worker-7")), 404)
    assert "lonely-worker-7" in message
    unknown = "00000000-0000-4000-8000-000000000000"
    assert unknown in error_of(api.get(logs_path(unknown, "x-master-0")), 404)


def test_bad_queries_name_the_parameter_and_the_rule(api: Api) -> None:
    path = logs_path("00000000-0000-4000-8000-000000000000", "x-master-0")
    assert "tailLines" in error_of(api.get(path, params={"tailLines": -1}), 400)
    assert "sinceSeconds" in error_of(api.get(path, params={"sinceSeconds": 0}), 400)
    assert "follow" in error_of(api.get(path, params={"follow": "maybe"}), 400)


def test_logs_need_a_token(api: Api) -> None:
    anonymous = Api(api.client)
    path = logs_path("00000000-0000-4000-8000-000000000000", "x-master-0")
    assert error_of(anonymous.get(path), 401)
