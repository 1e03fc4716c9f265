"""The bounds of a request: checked by the schemas only when a request is parsed under them (the
server's parse of what it is asked, never of what it stored), the site's own each set by its
`LOCKSTEP_MAX_*` variable or `lockstep serve` flag; and
the body-size middleware, which refuses a streamed body once it passes the limit without
reading the rest of it."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from pydantic import ValidationError
from starlette.types import Message
from typer.testing import CliRunner

from lockstep.api.body_size import BodySizeLimit
from lockstep.cli.main import app
from lockstep.config import Settings
from lockstep.schemas.bounds import RequestBounds
from lockstep.schemas.distributed import DistributedCreationRequest, WorkerSpec

REQUEST: dict[str, Any] = {
    "name": "train",
    "projectId": "1",
    "clusterId": "00000000-0000-0000-0000-000000000001",
    "spec": {"distributedFramework": "PyTorch", "numWorkers": 1001, "image": "i", "args": "x"},
}


def test_the_schemas_hold_a_request_to_the_bounds_only_under_them() -> None:
    body = orjson.dumps(REQUEST)
    DistributedCreationRequest.model_validate_json(body)  # as the SDK parses: no bounds
    with pytest.raises(ValidationError, match="less than or equal to 1000"):
        DistributedCreationRequest.model_validate_json(body, context=RequestBounds().context())
    roomy = RequestBounds(max_workers=2000, max_command_length=1).context()
    DistributedCreationRequest.model_validate_json(body, context=roomy)
    long_args = orjson.dumps({**REQUEST, "spec": {**REQUEST["spec"], "args": "xy"}})
    with pytest.raises(ValidationError, match="at most 1 characters"):
        DistributedCreationRequest.model_validate_json(long_args, context=roomy)


def test_the_bounds_are_on_what_is_asked_not_on_what_is_stored() -> None:
    """A workload stored before a limit was lowered (or by an older lockstep) reads back."""
    stored = {
        "distributedFramework": "PyTorch",
        "numWorkers": 5000,
        "image": "i" * 2000,
        "args": "x" * 20_000,
        "backoffLimit": 2**40,
        "category": "c" * 300,
        "ports": [{"container": 80, "external": 70_000}],
        "security": {"runAsUid": -1},
    }
    assert WorkerSpec.model_validate(stored, strict=False).num_workers == 5000
    with pytest.raises(ValidationError) as caught:
        WorkerSpec.model_validate(stored, strict=False, context=RequestBounds().context())
    assert {".".join(map(str, error["loc"])) for error in caught.value.errors()} == {
        "numWorkers",
        "image",
        "args",
        "backoffLimit",
        "category",
        "ports.0.external",
        "security.runAsUid",
    }


def test_numbers_of_a_request_built_in_python_are_finite() -> None:
    spec = {**REQUEST["spec"], "numWorkers": 1, "compute": {"cpuCoreRequest": float("inf")}}
    with pytest.raises(ValidationError, match="finite number"):
        DistributedCreationRequest.model_validate({**REQUEST, "spec": spec}, strict=False)


def test_each_bound_is_set_by_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().request_bounds == RequestBounds(
        max_request_bytes=1024 * 1024, max_workers=1000, max_command_length=10_000
    )
    monkeypatch.setenv("LOCKSTEP_MAX_REQUEST_BYTES", "4096")
    monkeypatch.setenv("LOCKSTEP_MAX_WORKERS", "5000")
    monkeypatch.setenv("LOCKSTEP_MAX_COMMAND_LENGTH", "65536")
    assert Settings().request_bounds == RequestBounds(
        max_request_bytes=4096, max_workers=5000, max_command_length=65536
    )


def test_each_serve_flag_sets_its_bound() -> None:
    """A flag's value reaches the setting: one it cannot take stops `lockstep serve` at start,
    named by the variable, before it serves anything."""
    for flag, variable in (
        ("--max-request-bytes", "LOCKSTEP_MAX_REQUEST_BYTES"),
        ("--max-workers", "LOCKSTEP_MAX_WORKERS"),
        ("--max-command-length", "LOCKSTEP_MAX_COMMAND_LENGTH"),
    ):
        result = CliRunner().invoke(app, ["serve", flag, "0"])
        assert result.exit_code == 2, result.output
        assert f"lockstep: {variable}: Input should be greater than or equal to" in result.output


def receive_from(chunks: list[bytes], pulled: list[int]) -> Any:
    """A server's `receive` handing out `chunks`, noting in `pulled` each one handed out."""

    async def receive() -> dict[str, Any]:
        index = len(pulled)
        pulled.append(index)
        return {
            "type": "http.request",
            "body": chunks[index],
            "more_body": index + 1 < len(chunks),
        }

    return receive


def run_middleware(
    headers: list[tuple[bytes, bytes]], chunks: list[bytes]
) -> tuple[list[Message], list[int], list[int]]:
    """Run an app that reads its whole body behind a 1000-byte limit; what it sent, which
    chunks were pulled from the server, and how many bytes the app got."""
    sent: list[Message] = []
    pulled: list[int] = []
    read: list[int] = []

    async def reader(scope: Any, receive: Any, send: Any) -> None:
        more = True
        while more:
            message = await receive()
            read.append(len(message["body"]))
            more = message["more_body"]
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def send(message: Message) -> None:
        sent.append(message)

    async def main() -> None:
        limited = BodySizeLimit(reader, max_bytes=1000)
        scope = {"type": "http", "method": "POST", "path": "/", "headers": headers}
        await limited(scope, receive_from(chunks, pulled), send)

    asyncio.run(main())
    return sent, pulled, read


def test_a_streamed_body_is_refused_once_it_passes_the_limit() -> None:
    sent, pulled, read = run_middleware([], [b"x" * 400] * 100)
    assert sent[0]["status"] == 413
    assert orjson.loads(sent[1]["body"]) == {
        "code": 413,
        "message": "body: must be at most 1000 bytes (this server's limit)",
    }
    assert pulled == [0, 1, 2]  # the third chunk passed the limit: nothing more was read
    assert sum(read) == 800


def test_a_declared_length_over_the_limit_is_refused_unread() -> None:
    sent, pulled, _ = run_middleware([(b"content-length", b"1001")], [b"x" * 1001])
    assert sent[0]["status"] == 413
    assert pulled == []


def test_a_body_within_the_limit_reaches_the_app() -> None:
    sent, pulled, read = run_middleware([(b"content-length", b"1000")], [b"x" * 500] * 2)
    assert sent[0]["status"] == 204
    assert pulled == [0, 1]
    assert read == [500, 500]
