"""The SDK's calls for each kind of workload (`Client.trainings`, `.workspaces`, `.distributed`
and `of_type`) against the API: typed requests in, each kind's typed workload out, the same
typed errors as the distributed calls, and each kind's calls reaching its own path only; the
async client's against a live server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from lockstep import AsyncClient, Client
from lockstep.schemas.single_pod import (
    TrainingCreationRequest,
    TrainingWorkload,
    WorkspaceCreationRequest,
    WorkspaceWorkload,
)
from lockstep.sdk import Conflict, InvalidRequest, NotFound
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api, poll
from tests.support.requests import python, single_pod
from tests.support.server import LiveServer

SLEEP = python("import time; time.sleep(600)")


@pytest.fixture
def sdk(client: TestClient) -> Iterator[Client]:
    with Client(
        str(client.base_url), client_id=ADMIN_ID, client_secret=ADMIN_SECRET, http=client
    ) as lockstep:
        yield lockstep


def test_a_training_is_created_read_and_answered_by_its_own_path_only(
    sdk: Client, api: Api
) -> None:
    body = single_pod(
        api.cluster_id(), name="fit", args=python("print('fitted')"), completions=2, parallelism=2
    )
    created = sdk.trainings.create(TrainingCreationRequest.model_validate(body, strict=False))
    assert isinstance(created, TrainingWorkload)
    assert created.name == "fit"
    assert created.spec is not None and (created.spec.completions, created.spec.parallelism) == (
        2,
        2,
    )
    done = sdk.wait(created.workload_id, phase="Completed", timeout=60, every=0.05)
    assert done["type"] == "Training"
    got = sdk.trainings.get(created.workload_id)
    assert isinstance(got, TrainingWorkload) and got.actual_phase == "Completed"
    assert sorted(p["name"] for p in sdk.pods(created.workload_id)) == ["fit-0", "fit-1"]
    assert "".join(sdk.logs(created.workload_id, "fit-1")) == "fitted\n"
    with pytest.raises(NotFound) as elsewhere:
        sdk.workspaces.get(created.workload_id)
    assert "no workspace" in elsewhere.value.message
    with pytest.raises(NotFound):
        sdk.get_distributed(created.workload_id)
    with pytest.raises(NotFound):
        sdk.suspend(created.workload_id)  # the distributed path
    assert sdk.of_type(done["type"]) is sdk.trainings
    sdk.trainings.delete(created.workload_id)
    poll(lambda: _gone(sdk, created.workload_id), timeout=30, what="the training deleted")


def test_a_workspace_is_suspended_resumed_and_deleted_through_its_type(
    sdk: Client, api: Api
) -> None:
    body = single_pod(
        api.cluster_id(),
        name="notebook",
        args=SLEEP,
        ports=[{"container": 8888}],
        terminationGracePeriodSeconds=1,
    )
    created = sdk.workspaces.create(body)
    assert isinstance(created, WorkspaceWorkload)
    assert created.spec is not None and created.spec.ports is not None
    assert created.spec.ports[0].container == 8888
    running = sdk.wait(created.workload_id, phase="Running", timeout=60, every=0.05)
    assert (running["type"], running["priorityClassName"]) == ("Workspace", "build")
    (pod,) = sdk.pods(created.workload_id)
    assert pod["name"] == "notebook-0"
    (port,) = pod["containers"][0]["ports"]
    assert port["containerPort"] == 8888 and port["hostPort"] > 0
    calls = sdk.of_type(running["type"])
    calls.suspend(created.workload_id)
    sdk.wait(created.workload_id, phase="Stopped", timeout=60, every=0.05)
    calls.resume(created.workload_id)
    sdk.wait(created.workload_id, phase="Running", timeout=60, every=0.05)
    with pytest.raises(NotFound):
        sdk.trainings.delete(created.workload_id)
    calls.delete(created.workload_id)
    poll(lambda: _gone(sdk, created.workload_id), timeout=30, what="the workspace deleted")


def test_errors_are_typed_for_every_kind(sdk: Client, api: Api) -> None:
    with pytest.raises(InvalidRequest) as invalid:
        sdk.trainings.create(single_pod(api.cluster_id(), name="none", parallelism=0))
    assert invalid.value.status == 400
    assert "spec.parallelism" in invalid.value.message
    sdk.workspaces.create(single_pod(api.cluster_id(), name="twice", args=SLEEP))
    with pytest.raises(Conflict) as conflict:
        sdk.workspaces.create(single_pod(api.cluster_id(), name="twice", args=SLEEP))
    assert "twice" in conflict.value.message
    with pytest.raises(NotFound):
        sdk.trainings.get("00000000-0000-0000-0000-000000000001")
    with pytest.raises(ValueError, match="no kind of workload 'Inference'"):
        sdk.of_type("Inference")


def test_a_training_is_rendered_and_nothing_is_stored(sdk: Client, api: Api) -> None:
    request = WorkspaceCreationRequest.model_validate(
        single_pod(api.cluster_id(), name="dry"), strict=False
    )
    rendered = sdk.workspaces.render(request)
    assert "dry-0" in str(rendered)
    rendered = sdk.trainings.render(single_pod(api.cluster_id(), name="dry", completions=3))
    assert "dry-2" in str(rendered)
    assert list(sdk.list(name="dry")) == []


def test_the_async_client_has_the_same_calls(live_server: LiveServer) -> None:
    cluster = live_server.api().cluster_id()

    async def scenario() -> tuple[TrainingWorkload, list[str]]:
        async with AsyncClient(
            live_server.url, client_id=ADMIN_ID, client_secret=ADMIN_SECRET
        ) as lockstep:
            training = await lockstep.trainings.create(
                single_pod(cluster, name="awaited", args=python("print('done')"))
            )
            await lockstep.wait(training.workload_id, phase="Completed", timeout=60, every=0.05)
            got = await lockstep.trainings.get(training.workload_id)
            workspace = await lockstep.workspaces.create(
                single_pod(cluster, name="desk", args=SLEEP, terminationGracePeriodSeconds=1)
            )
            await lockstep.wait(workspace.workload_id, phase="Running", timeout=60, every=0.05)
            await lockstep.of_type("Workspace").suspend(workspace.workload_id)
            await lockstep.wait(workspace.workload_id, phase="Stopped", timeout=60, every=0.05)
            with pytest.raises(NotFound):
                await lockstep.workspaces.get(training.workload_id)
            await lockstep.workspaces.delete(workspace.workload_id)
            lines = [line async for line in lockstep.logs(training.workload_id, "awaited-0")]
            return got, lines

    got, lines = asyncio.run(scenario())
    assert isinstance(got, TrainingWorkload) and got.actual_phase == "Completed"
    assert lines == ["done\n"]


def _gone(sdk: Client, workload_id: object) -> bool | None:
    try:
        sdk.get(str(workload_id))
    except NotFound:
        return True
    return None
