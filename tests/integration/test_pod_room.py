"""How many pods a node runs at once, and gangs that could never fit, through the API: the
server here has one node that runs at most 2 pods (`max_pods`, the kubelet's maxPods). A gang
of more pods than that is parked, Pending with the reason, whatever its size (100,000 pods
cost no more than 3); gangs that fit run one after the other as room frees; an elastic
workload starts with the pods there is room for and lists the others as waiting. A parked
workload is looked at again once the nodes change."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lockstep.api.app import create_app
from lockstep.config import NodeSettings, Settings
from lockstep.domain.clock import utc_now
from lockstep.domain.cluster import Node
from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.workload_request import WorkloadRequest
from lockstep.runtimes.local.runtime import LocalRuntime
from lockstep.store.database import Database
from tests.conftest import make_settings
from tests.integration.test_store import new_workload
from tests.support.api import Api, poll
from tests.support.requests import distributed, python, shared
from tests.support.server import kill_pods

ROOM = "a node runs at most 2 pods at once"


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    configured = make_settings(tmp_path / "data", database_url)
    return configured.model_copy(update={"nodes": [NodeSettings(name="solo", max_pods=2)]})


def waits_for(path: Path) -> dict[str, Any]:
    """The spec's `args` that wait until `path` exists, then exit, and the storage that shows
    the pod its directory as the test writes there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    code = f"import os, time\nwhile not os.path.exists({str(path)!r}):\n    time.sleep(0.05)"
    return {"args": python(code), "storage": shared(path.parent)}


def pending_with(api: Api, workload_id: str, words: str) -> dict[str, Any]:
    def explained() -> dict[str, Any] | None:
        item = api.workload(workload_id)
        return item if item["phase"] == "Pending" and words in item["phaseMessage"] else None

    return poll(explained, timeout=30, what=f"{workload_id} pending: {words}")


def stored_directly(settings: Settings, *, name: str, workers: int) -> str:
    """A workload put in the store as the API would have stored it, bypassing the API's
    bounds on a request (a site may configure higher ones); its id."""
    assert settings.database_url is not None
    database = Database(settings.database_url)
    try:
        now = utc_now()
        spec = distributed("", name=name, workers=workers)["spec"]
        workload = dataclasses.replace(
            new_workload(database, name, created_at=now),
            request=WorkloadRequest(WorkloadKind.DISTRIBUTED, {"spec": spec}),
            phase_updated_at=now,
        )
        with database.write() as unit:
            unit.workloads.insert(workload)
    finally:
        database.dispose()
    return workload.id


def test_a_gang_of_100000_pods_is_parked_and_a_workload_submitted_after_it_runs(
    client: TestClient, api: Api, settings: Settings
) -> None:
    huge = stored_directly(settings, name="huge", workers=99_999)
    client.app.state.controller.notify(huge)  # type: ignore[attr-defined]
    item = pending_with(api, huge, "never fit")
    assert item["phaseMessage"] == (
        f"the workload can never fit this cluster: needs room for 100000 pods, 2 in all ({ROOM})"
    )
    small = api.create(distributed(api.cluster_id(), name="small", workers=1))["workloadId"]
    assert api.wait_for(small, {"Completed", "Failed"})["phase"] == "Completed"
    # parked: it stays Pending with its reason, and none of its pods exists
    assert api.workload(huge)["phaseMessage"] == item["phaseMessage"]
    assert api.get(f"/api/v1/workloads/{huge}/pods").json()["pods"] == []


def test_a_gang_beyond_the_nodes_room_waits_whole_and_two_that_fit_run_in_turn(
    api: Api, tmp_path: Path
) -> None:
    three = api.create(distributed(api.cluster_id(), name="three", workers=2))["workloadId"]
    assert pending_with(api, three, "never fit")["phaseMessage"] == (
        f"the workload can never fit this cluster: needs room for 3 pods, 2 in all ({ROOM})"
    )
    release = tmp_path / "talk" / "release"
    first = api.create(
        distributed(api.cluster_id(), name="first", workers=1, **waits_for(release))
    )["workloadId"]
    api.wait_for(first, {"Running"})
    second = api.create(distributed(api.cluster_id(), name="second", workers=1))["workloadId"]
    assert pending_with(api, second, "room")["phaseMessage"] == (
        f"waiting for resources: needs room for 2 pods, 0 free ({ROOM})"
    )
    release.touch()
    assert api.wait_for(first, {"Completed", "Failed"})["phase"] == "Completed"
    assert api.wait_for(second, {"Completed", "Failed"})["phase"] == "Completed"
    assert api.workload(three)["phase"] == "Pending"


def test_an_elastic_workload_starts_with_the_room_there_is_and_lists_the_rest_waiting(
    api: Api, tmp_path: Path
) -> None:
    release = tmp_path / "talk" / "release"
    body = distributed(
        api.cluster_id(),
        name="elastic",
        workers=3,
        **waits_for(release),
        minReplicas=2,
        maxReplicas=3,
    )
    workload_id = api.create(body)["workloadId"]
    api.wait_for(workload_id, {"Running"})

    def listed() -> dict[str, dict[str, Any]] | None:
        pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
        return {p["name"]: p for p in pods} if len(pods) == 3 else None

    pods = poll(listed, timeout=30, what="three pods listed")
    waiting = [name for name, pod in pods.items() if pod["k8sPhase"] == "Pending"]
    assert waiting == ["elastic-worker-2"]
    release.touch()
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"


class ChangingNodes(LocalRuntime):
    """The local runtime, its nodes changed at will, as a cluster's change."""

    def __init__(self, root: Path, nodes: Sequence[Node], on_change: Callable[[str], None]):
        super().__init__(root, on_change=on_change, nodes=nodes)
        self.current = list(nodes)

    def nodes(self) -> list[Node]:
        return self.current


def test_a_parked_workload_is_looked_at_again_once_the_nodes_change(
    tmp_path: Path, database_url: str
) -> None:
    settings = make_settings(tmp_path / "data", database_url).model_copy(
        update={"resync_seconds": 0.2}
    )
    solo = Node("solo", "default", Decimal(2), Decimal(2**30), max_pods=2)

    def notify(key: str) -> None:
        app.state.controller.notify(key)  # the app is made after its runtime

    runtime = ChangingNodes(settings.runtime_dir, [solo], on_change=notify)
    app = create_app(settings, runtime=runtime)
    with TestClient(app) as client:
        try:
            api = Api.login(client)
            three = api.create(distributed(api.cluster_id(), name="three", workers=2))
            pending_with(api, three["workloadId"], "never fit")
            runtime.current = [replace(solo, max_pods=3)]
            finished = api.wait_for(three["workloadId"], {"Completed", "Failed"})
            assert finished["phase"] == "Completed"
        finally:
            kill_pods(settings.runtime_dir)
