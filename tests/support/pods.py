"""Helpers for end-to-end tests that read a finished workload's pods and their logs."""

from __future__ import annotations

from typing import Any

from tests.support.api import Api, poll


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
