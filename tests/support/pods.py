"""Helpers for end-to-end tests that read a finished workload's pods and their logs."""

from __future__ import annotations

import json
from typing import Any

from tests.support.api import Api, poll
from tests.support.requests import distributed, python


def settled_pods(api: Api, workload_id: str, *, timeout: float = 30.0) -> list[dict[str, Any]]:
    """The workload's pods once none of them is still running; fail at the deadline."""

    def settled() -> list[dict[str, Any]] | None:
        pods: list[dict[str, Any]] = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
        return pods if pods and all(p["k8sPhase"] != "Running" for p in pods) else None

    return poll(settled, timeout=timeout, what="every pod to finish")


def pod_log(api: Api, workload_id: str, pod: str) -> str:
    """What a pod printed, read through the API."""
    response = api.get(f"/api/v1/workloads/{workload_id}/pods/{pod}/logs")
    assert response.status_code == 200, response.text
    return response.text


def run_to_end(api: Api, name: str, code: str, **spec: Any) -> dict[str, Any]:
    """A workload of one master and one worker running Python `code`, never restarted,
    waited for until it ends."""
    body = distributed(api.cluster_id(), name=name, workers=1, args=python(code), **spec)
    body["spec"]["backoffLimit"] = 0
    created = api.create(body)
    return api.wait_for(created["workloadId"], ["Completed", "Failed"], timeout=90)


def printed(api: Api, workload: dict[str, Any], pod: str = "master-0") -> Any:
    """The JSON a pod of the workload (its master by default) printed last."""
    lines = pod_log(api, workload["id"], f"{workload['name']}-{pod}").splitlines()
    return json.loads(lines[-1])
