"""A workload's life through the API: names, delete, suspend, resume, pods, events and the
phase history, on SQLite and on PostgreSQL."""

from __future__ import annotations

from typing import Any

from tests.support.api import Api, poll
from tests.support.requests import distributed, python, sleeping


def phases_of(api: Api, workload_id: str) -> list[str]:
    records = api.get(f"/api/v1/workloads/{workload_id}/history", params={"limit": 500}).json()[
        "records"
    ]
    return [
        r["spec"]["phaseUpdate"]["phase"] for r in records if r["meta"]["type"] == "PhaseUpdate"
    ]


def test_create_returns_the_stored_workload(api: Api) -> None:
    created = api.create(distributed(api.cluster_id(), name="first"))
    assert created["name"] == created["requestedName"] == "first"
    assert created["projectId"] == "1"
    assert created["departmentId"] == "1"
    assert created["createdBy"] == "admin"
    assert created["desiredPhase"] == "Running"
    assert created["actualPhase"] == "Creating"
    assert created["createdAt"].endswith("Z")
    assert "masterSpec" not in created


def test_name_prefix_gets_a_random_suffix(api: Api) -> None:
    names = {
        api.create({**distributed(api.cluster_id(), name="sweep"), "useGivenNameAsPrefix": True})[
            "name"
        ]
        for _ in range(3)
    }
    assert len(names) == 3
    for name in names:
        assert name.startswith("sweep-") and len(name) == len("sweep-") + 5


def test_live_name_conflicts_until_deleted(api: Api) -> None:
    first = api.create(distributed(api.cluster_id(), name="unique"))
    again = api.post(
        "/api/v1/workloads/distributed", json=distributed(api.cluster_id(), name="unique")
    )
    assert again.status_code == 409
    assert again.json() == {
        "code": 409,
        "message": "a workload named 'unique' already exists in project 1",
    }
    assert api.delete(f"/api/v1/workloads/distributed/{first['workloadId']}").status_code == 202
    api.wait_gone(first["workloadId"])
    reused = api.create(distributed(api.cluster_id(), name="unique"))
    assert reused["workloadId"] != first["workloadId"]


def test_delete_stops_pods_then_workload_is_gone_and_listed_as_deleted(api: Api) -> None:
    created = api.create(sleeping(api.cluster_id(), name="doomed", terminationGracePeriodSeconds=5))
    workload_id = created["workloadId"]
    api.wait_for(workload_id, {"Running"})
    pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
    assert {p["k8sPhase"] for p in pods} == {"Running"}

    first = api.delete(f"/api/v1/workloads/distributed/{workload_id}")
    second = api.delete(f"/api/v1/workloads/distributed/{workload_id}")
    assert first.status_code == second.status_code == 202
    assert first.json() == {"code": 202, "message": "Request has been accepted."}
    api.wait_gone(workload_id)
    assert api.get(f"/api/v1/workloads/{workload_id}").status_code == 404
    assert api.delete(f"/api/v1/workloads/distributed/{workload_id}").status_code == 202

    deleted = api.get("/api/v1/workloads", params={"deleted": "true"}).json()["workloads"]
    assert [w["id"] for w in deleted] == [workload_id]
    assert deleted[0]["deletedAt"] is not None
    assert deleted[0]["phase"] == "Deleting"
    assert api.get("/api/v1/workloads").json()["workloads"] == []


def test_suspend_and_resume_walk_the_phases(api: Api) -> None:
    created = api.create(sleeping(api.cluster_id(), name="pausable"))
    workload_id = created["workloadId"]
    api.wait_for(workload_id, {"Running"})

    assert api.post(f"/api/v1/workloads/distributed/{workload_id}/suspend").status_code == 202
    assert (
        api.get(f"/api/v1/workloads/distributed/{workload_id}").json()["desiredPhase"] == "Stopped"
    )
    api.wait_for(workload_id, {"Stopped"})
    assert api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"] == []
    assert api.post(f"/api/v1/workloads/distributed/{workload_id}/suspend").status_code == 202

    assert api.post(f"/api/v1/workloads/distributed/{workload_id}/resume").status_code == 202
    assert (
        api.get(f"/api/v1/workloads/distributed/{workload_id}").json()["desiredPhase"] == "Running"
    )
    api.wait_for(workload_id, {"Running"})
    assert phases_of(api, workload_id) == [
        "Creating",
        "Pending",
        "Initializing",
        "Running",
        "Stopping",
        "Stopped",
        "Resuming",
        "Pending",
        "Initializing",
        "Running",
    ]


def test_suspending_a_finished_workload_conflicts(api: Api) -> None:
    created = api.create(distributed(api.cluster_id(), name="quick", workers=1))
    api.wait_for(created["workloadId"], {"Completed"})
    response = api.post(f"/api/v1/workloads/distributed/{created['workloadId']}/suspend")
    assert response.status_code == 409
    assert "Completed" in response.json()["message"]


def test_pods_events_and_history_of_a_completed_run(api: Api) -> None:
    created = api.create(
        distributed(api.cluster_id(), name="short", workers=1, args=python("print('hi')"))
    )
    workload_id = created["workloadId"]
    done = api.wait_for(workload_id, {"Completed", "Failed"})
    assert done["phase"] == "Completed"
    assert done["completedAt"] is not None

    def settled() -> list[dict[str, Any]] | None:
        pods: list[dict[str, Any]] = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
        return pods if len(pods) == 2 and all(p["k8sPhase"] == "Succeeded" for p in pods) else None

    pods = poll(settled, timeout=30, what="both pods to succeed")
    assert {p["name"] for p in pods} == {"short-master-0", "short-worker-0"}
    assert all(p["workloadId"] == workload_id and p["ip"] == "127.0.0.1" for p in pods)

    events = api.get(f"/api/v1/workloads/{workload_id}/events", params={"sortOrder": "asc"}).json()[
        "events"
    ]
    reasons = [e["reason"] for e in events]
    assert reasons[0] == "Scheduled"
    assert reasons.count("Completed") == 3  # two pods and the workload
    assert phases_of(api, workload_id) == [
        "Creating",
        "Pending",
        "Initializing",
        "Running",
        "Completed",
    ] or (phases_of(api, workload_id) == ["Creating", "Pending", "Initializing", "Completed"])
    history = api.get(f"/api/v1/workloads/{workload_id}/history").json()["records"]
    stamps = [r["meta"]["creationTimestamp"] for r in history]
    assert stamps == sorted(stamps)
    assert {r["meta"]["type"] for r in history} == {"PhaseUpdate", "Event"}


def test_pending_reason_when_the_gang_cannot_fit(api: Api) -> None:
    created = api.create(
        distributed(api.cluster_id(), name="greedy", compute={"cpuCoreRequest": 4096})
    )
    workload_id = created["workloadId"]

    def explained() -> dict[str, Any] | None:
        item = api.workload(workload_id)
        return item if "CPU cores" in item["phaseMessage"] else None

    item = poll(explained, timeout=30, what="a pending reason")
    assert item["phase"] == "Pending"
    assert item["phaseMessage"].startswith(
        "the workload can never fit this cluster: needs 12288 CPU cores, "
    )
    detail = api.get(f"/api/v1/workloads/{workload_id}").json()
    # Not a quota's doing: no phase reason (the contract has one for quotas only), and parked
    # (it waits for the cluster to change) it holds no place in its project's queue.
    assert "phaseReason" not in detail and "pendingSchedulingMessages" not in detail
    assert "queuePosition" not in detail
