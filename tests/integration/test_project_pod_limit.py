"""Pods and workloads count against their project (LOCKSTEP_MAX_PODS_PER_PROJECT,
LOCKSTEP_MAX_WORKLOADS_PER_PROJECT), through the API of an in-process server with real pods:
on a node of 3 pod slots, project A, limited to 2 pods and 3 unfinished workloads, runs 2
sleeping workspaces that ask for nothing; its third waits Pending naming the pod limit (it
would have taken the node's last slot), its fourth is refused with a 400 naming the workload
limit, and project B's workspace still runs. Once one of A's ends, its third runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from lockstep.config import NodeSettings, Settings
from tests.conftest import make_settings
from tests.support.access import new_project
from tests.support.api import Api, poll
from tests.support.requests import python, single_pod

SLEEPS = python("import time\ntime.sleep(600)")


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    configured = make_settings(tmp_path / "data", database_url)
    return configured.model_copy(
        update={
            "nodes": [NodeSettings(name="solo", max_pods=3)],
            "max_pods_per_project": 2,
            "max_workloads_per_project": 3,
        }
    )


def workspace(api: Api, project_id: str, name: str) -> str:
    """A sleeping workspace that asks for no resources; its id."""
    body = single_pod(api.cluster_id(), name=name, project_id=project_id, args=SLEEPS)
    return str(api.create(body, kind="workspaces")["workloadId"])


def test_a_project_past_its_limits_cannot_take_the_slots_another_project_needs(api: Api) -> None:
    first, second = workspace(api, "1", "a-1"), workspace(api, "1", "a-2")
    api.wait_for(first, {"Running"})
    api.wait_for(second, {"Running"})
    third = workspace(api, "1", "a-3")

    def waits_for_its_pod_limit() -> dict[str, object] | None:
        item = api.workload(third)
        message = str(item["phaseMessage"])
        return item if item["phase"] == "Pending" and "pod limit" in message else None

    waiting = poll(waits_for_its_pod_limit, timeout=30, what="a-3 pending on the pod limit")
    assert waiting["phaseMessage"] == (
        "project default would pass its pod limit (2 limit, 2 held, 1 asked; "
        "LOCKSTEP_MAX_PODS_PER_PROJECT); waiting for pods of the project to end"
    )
    assert waiting["phaseReason"] == "OverLimit"

    refused = api.post(
        "/api/v1/workloads/workspaces",
        json=single_pod(api.cluster_id(), name="a-4", args=SLEEPS),
    )
    assert refused.status_code == 400, refused.text
    body = refused.json()
    assert body["code"] == 400
    assert body["message"] == (
        "projectId: project default has 3 unfinished workloads, its limit "
        "(3, LOCKSTEP_MAX_WORKLOADS_PER_PROJECT): delete some, or wait for some to complete, "
        "before submitting more"
    )

    # Project B takes the node's last slot, which A's third would have held without the limit.
    other = workspace(api, new_project(api, "team-b"), "b-1")
    api.wait_for(other, {"Running"})
    assert api.workload(third)["phase"] == "Pending"

    # Pods of A end: its waiting workspace runs (it waited; it was not refused).
    assert api.delete(f"/api/v1/workloads/workspaces/{first}").status_code == 202
    api.wait_for(third, {"Running"})
