"""The Python SDK against the API in process (lockstep.sdk): every call, its typed errors with
the server's message, paging, waiting, logs, and tokens renewed before they expire and again
when the server refuses one."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from starlette.testclient import TestClient

from lockstep import Client
from lockstep.schemas.distributed import DistributedCreationRequest
from lockstep.sdk import (
    Conflict,
    InvalidRequest,
    NotFound,
    Unauthorized,
    Unavailable,
    WorkloadEnded,
)
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api, poll
from tests.support.requests import distributed, python, sleeping


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def sdk(client: TestClient, clock: Clock) -> Iterator[Client]:
    with Client(
        str(client.base_url),
        client_id=ADMIN_ID,
        client_secret=ADMIN_SECRET,
        http=client,
        clock=clock,
    ) as lockstep:
        yield lockstep


def test_submit_wait_read_and_delete(sdk: Client, api: Api) -> None:
    body = distributed(api.cluster_id(), name="via-sdk", args=python("print('hello from the sdk')"))
    created = sdk.create_distributed(DistributedCreationRequest.model_validate(body, strict=False))
    assert created.name == "via-sdk"
    done = sdk.wait(created.workload_id, phase="Completed", timeout=60, every=0.05)
    assert done["phase"] == "Completed"
    assert sdk.get_distributed(created.workload_id).workload_id == created.workload_id
    pods = sdk.pods(created.workload_id)
    assert sorted(p["name"] for p in pods) == [
        "via-sdk-master-0",
        "via-sdk-worker-0",
        "via-sdk-worker-1",
    ]
    log = "".join(sdk.logs(created.workload_id, "via-sdk-master-0"))
    assert log == "hello from the sdk\n"
    stamped = list(sdk.logs(created.workload_id, "via-sdk-master-0", timestamps=True, tail_lines=1))
    assert len(stamped) == 1 and stamped[0].endswith("Z hello from the sdk\n")
    assert any(e["reason"] == "Scheduled" for e in sdk.events(created.workload_id))
    history = sdk.history(created.workload_id)
    phases = [
        r["spec"]["phaseUpdate"]["phase"] for r in history if r["meta"]["type"] == "PhaseUpdate"
    ]
    assert phases[:2] == ["Creating", "Pending"] and phases[-1] == "Completed"
    sdk.delete(created.workload_id)

    def gone() -> bool | None:
        try:
            sdk.get_distributed(created.workload_id)
        except NotFound:
            return True
        return None

    poll(gone, timeout=30, what="the workload deleted")


def test_errors_are_typed_and_carry_the_servers_message(sdk: Client, api: Api) -> None:
    bad = distributed(api.cluster_id(), name="bad", workers=0)
    with pytest.raises(InvalidRequest) as invalid:
        sdk.create_distributed(bad)
    assert invalid.value.status == 400
    assert "spec.numWorkers" in invalid.value.message
    with pytest.raises(NotFound) as missing:
        sdk.get("00000000-0000-0000-0000-000000000001")
    assert missing.value.status == 404
    sdk.create_distributed(sleeping(api.cluster_id(), name="twice"))
    with pytest.raises(Conflict) as conflict:
        sdk.create_distributed(sleeping(api.cluster_id(), name="twice"))
    assert "twice" in conflict.value.message


def test_wait_raises_when_the_workload_ends_otherwise(sdk: Client, api: Api) -> None:
    body = distributed(
        api.cluster_id(), name="doomed", args=python("raise SystemExit(3)"), backoffLimit=0
    )
    created = sdk.create_distributed(body)
    with pytest.raises(WorkloadEnded) as ended:
        sdk.wait(created.workload_id, phase="Completed", timeout=60, every=0.05)
    assert ended.value.workload["phase"] == "Failed"
    assert "exited with code 3" in str(ended.value)


def test_list_iterates_across_pages_with_filters(sdk: Client, api: Api) -> None:
    for i in range(7):
        sdk.create_distributed(sleeping(api.cluster_id(), name=f"many-{i}", workers=1))
    names = [w["name"] for w in sdk.list(page_size=3, sort_by="name")]
    assert names == [f"many-{i}" for i in range(7)]
    assert [w["name"] for w in sdk.list(name="many-4")] == ["many-4"]
    assert [p["name"] for p in sdk.projects()][:1]


def test_suspend_and_resume(sdk: Client, api: Api) -> None:
    created = sdk.create_distributed(sleeping(api.cluster_id(), name="pausing", workers=1))
    sdk.wait(created.workload_id, phase="Running", timeout=60, every=0.05)
    sdk.suspend(created.workload_id)
    sdk.wait(created.workload_id, phase="Stopped", timeout=60, every=0.05)
    sdk.resume(created.workload_id)
    assert (
        sdk.wait(created.workload_id, phase="Running", timeout=60, every=0.05)["phase"] == "Running"
    )


def count_token_requests(client: TestClient) -> list[str]:
    seen: list[str] = []
    client.event_hooks["request"].append(
        lambda request: (
            seen.append(request.url.path) if request.url.path == "/api/v1/token" else None
        )
    )
    return seen


def test_a_token_is_renewed_before_it_expires(
    sdk: Client, client: TestClient, clock: Clock
) -> None:
    tokens = count_token_requests(client)
    sdk.projects()
    sdk.projects()
    assert len(tokens) == 1
    first = sdk.auth.token
    clock.now += 3600 - 30  # the server's tokens live an hour: within the last minute now
    sdk.projects()
    assert len(tokens) == 2
    assert sdk.auth.token != first


def test_a_refused_token_is_replaced_and_the_call_sent_again(
    sdk: Client, client: TestClient
) -> None:
    sdk.projects()
    tokens = count_token_requests(client)
    sdk.auth._token = "expired.or.revoked"  # as if the server no longer accepted it
    assert sdk.projects()
    assert len(tokens) == 1


def test_a_given_token_is_used_as_is_and_bad_credentials_are_unauthorized(
    client: TestClient, api: Api
) -> None:
    assert api.token is not None
    with Client(str(client.base_url), token=api.token, http=client) as with_token:
        assert with_token.projects()
    with (
        Client(str(client.base_url), token="nonsense", http=client) as bad_token,
        pytest.raises(Unauthorized),
    ):
        bad_token.projects()
    with (
        Client(str(client.base_url), client_id=ADMIN_ID, client_secret="wrong", http=client) as bad,
        pytest.raises(Unauthorized),
    ):
        bad.projects()
    with pytest.raises(ValueError, match="a token, a refresh token, or a client id"):
        Client("http://x", client_id="only-an-id")


def test_idempotent_calls_are_retried_on_503_and_creates_are_not() -> None:
    answers = iter([503, 503, 200])
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.method)
        status = next(answers, 503)
        return httpx.Response(
            status,
            json={"projects": []} if status == 200 else {"code": 503, "message": "store down"},
        )

    transport = httpx.MockTransport(handler)
    pauses: list[float] = []
    with httpx.Client(transport=transport, base_url="http://lockstep") as http:
        sdk = Client("http://lockstep", token="t", http=http, sleep=pauses.append)
        assert sdk.projects() == []
        assert sent == ["GET", "GET", "GET"]
        assert pauses == [0.2, 0.4]
        sent.clear()
        with pytest.raises(Unavailable, match="store down"):
            sdk.create_distributed({"name": "x"})
        assert sent == ["POST"]
