"""Input that cannot hurt the server, on every endpoint: a body over the size limit is refused
with 413 (declared or streamed), NUL characters anywhere in a request (body, query, path) and
numbers the store cannot hold are refused with 400 naming the field, and so are offsets past 32
bits (the Run:ai document's int32), more than 100 `filterBy` clauses, and pod specs past their
bounds (environment variable names, paths, quantities past Kubernetes' largest) for every kind
of workload; nothing is stored. A URL too long to parse is answered in Run:ai's error body. A
large request is refused while the server goes on answering others, and a site may raise each
limit.

The distributed workload's own bounds (numWorkers, args, ...) are with the other invalid
creation requests in test_invalid_requests.py.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lockstep.config import Settings
from tests.conftest import in_process, make_settings
from tests.support.api import Api
from tests.support.raw_http import raw_exchange
from tests.support.requests import distributed, single_pod
from tests.support.server import LiveServer

MIB = 1024 * 1024
JSON = {"Content-Type": "application/json"}
NUL = "must not contain a NUL character"


def refusal(response: httpx.Response, status: int = 400) -> str:
    """The message of a refusal in the Run:ai error body."""
    assert response.status_code == status, response.text
    error = response.json()
    assert error["code"] == status
    return str(error["message"])


def counts(api: Api) -> tuple[int, ...]:
    """How many of each thing these requests could add the server holds."""
    project = "/api/v1/org-unit/projects/1"
    return (
        api.get("/api/v1/workloads/count").json()["count"],
        len(api.get("/api/v1/org-unit/projects").json()["projects"]),
        len(api.get("/api/v1/org-unit/departments").json()["departments"]),
        len(api.get(f"{project}/secrets").json()["secrets"]),
        len(api.get(f"{project}/configmaps").json()["configMaps"]),
        len(api.get(f"{project}/claims").json()["claims"]),
    )


# --- strings that hold a NUL ---------------------------------------------------------------


BODIES_WITH_NUL: list[tuple[str, str, dict[str, Any], str]] = [
    ("project name", "/api/v1/org-unit/projects", {"name": "a\x00"}, "name"),
    ("department name", "/api/v1/org-unit/departments", {"name": "a\x00"}, "name"),
    (
        "project resources",
        "/api/v1/org-unit/projects",
        {"name": "vision", "resources": [{"nodePool": {"name": "x\x00"}}]},
        "resources[0].nodePool.name",
    ),
    (
        "secret value",
        "/api/v1/org-unit/projects/1/secrets",
        {"name": "db", "data": {"password": "a\x00b"}},
        "data.password",
    ),
    (
        "secret key",
        "/api/v1/org-unit/projects/1/secrets",
        {"name": "db", "data": {"pass\x00word": "x"}},
        "data: key 'pass\\x00word'",
    ),
    (
        "config map name",
        "/api/v1/org-unit/projects/1/configmaps",
        {"name": "c\x00", "data": {}},
        "name",
    ),
    ("claim name", "/api/v1/org-unit/projects/1/claims", {"name": "d\x00"}, "name"),
    (
        "token credentials",
        "/api/v1/token",
        {"grantType": "app_token", "AppId": "admin\x00", "AppSecret": "x"},
        "AppId",
    ),
]


@pytest.mark.parametrize(
    ("case", "path", "body", "field"), BODIES_WITH_NUL, ids=[c[0] for c in BODIES_WITH_NUL]
)
def test_a_nul_in_any_body_is_refused_naming_the_field(
    module_api: Api, case: str, path: str, body: dict[str, Any], field: str
) -> None:
    if path.endswith(("projects", "departments")):
        body = {"clusterId": module_api.cluster_id(), "resources": [], **body}
    before = counts(module_api)
    message = refusal(module_api.post(path, json=body))
    assert message.startswith(f"{field}: {NUL}"), (case, message)
    assert counts(module_api) == before


def test_a_nul_in_a_replaced_secret_is_refused(module_api: Api) -> None:
    secrets = "/api/v1/org-unit/projects/1/secrets"
    created = module_api.post(secrets, json={"name": "kept", "data": {"k": "v"}})
    assert created.status_code == 201, created.text
    try:
        message = refusal(module_api.put(f"{secrets}/kept", json={"data": {"k": "\x00"}}))
        assert message.startswith(f"data.k: {NUL}")
        assert module_api.get(f"{secrets}/kept").json()["keys"] == ["k"]
    finally:
        assert module_api.delete(f"{secrets}/kept").status_code == 204


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/v1/workloads?search=a%00b", "search"),
        ("/api/v1/workloads?filterBy=name%3D%3Da%00", "filterBy"),
        ("/api/v1/workloads/count?search=%00", "search"),
        ("/api/v1/org-unit/projects?search=%00", "search"),
        ("/api/v1/workloads?sortOrder=asc%00", "sortOrder"),
        ("/api/v1/org-unit/projects/1%00", "projectId"),
        ("/api/v1/org-unit/projects/1%00/secrets", "projectId"),
        ("/api/v1/org-unit/projects/1/secrets/db%00", "name"),
        ("/api/v1/org-unit/departments/%00", "departmentId"),
        ("/api/v1/workloads?x%00y=1", "query: parameter 'x\\x00y'"),
    ],
)
def test_a_nul_in_the_query_or_the_path_is_refused_naming_it(
    module_api: Api, path: str, field: str
) -> None:
    assert refusal(module_api.get(path)).startswith(f"{field}: {NUL}")


def test_the_logs_refuse_a_nul_and_numbers_past_their_bounds(api: Api) -> None:
    workload_id = api.create(distributed(api.cluster_id(), name="quiet", workers=1))["workloadId"]
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    logs = f"/api/v1/workloads/{workload_id}/pods/quiet-master-0/logs"
    assert api.get(logs).status_code == 200
    assert refusal(api.get(logs.replace("/logs", "%00/logs"))).startswith(f"podName: {NUL}")
    for query, field, largest in (
        ("sinceSeconds", "sinceSeconds", 2**31 - 1),  # farther back, the date is out of range
        ("tailLines", "tailLines", 2**63 - 1),
    ):
        assert api.get(logs, params={query: largest}).status_code == 200
        for number in (largest + 1, 10**30):
            message = refusal(api.get(logs, params={query: number}))
            assert message == f"{field}: input should be less than or equal to {largest}"


# --- numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field", "rule"),
    [
        (
            "/api/v1/org-unit/projects",
            '{"name": "p", "clusterId": "@cluster@", "resources": [{"gpu": {"deserved": 1e400}}]}',
            "resources[0].gpu.deserved",
            "must be a finite number",
        ),
        (
            "/api/v1/org-unit/departments",
            '{"name": "d", "clusterId": "@cluster@", "resources": [{"cpu": {"limit": NaN}}]}',
            "resources[0].cpu.limit",
            "must be a finite number",
        ),
        (
            "/api/v1/org-unit/projects",
            '{"name": "p", "clusterId": "@cluster@", "resources": [{"memory": {"deserved": '
            + str(2**64)
            + "}}]}",
            "resources[0].memory.deserved",
            "signed 64-bit integer",
        ),
        (
            "/api/v1/org-unit/projects/1/claims",
            '{"name": "big", "size": 99999999999999999999}',
            "size",
            "signed 64-bit integer",
        ),
        (
            "/api/v1/token",
            '{"grantType": "app_token", "AppId": 1e999, "AppSecret": "x"}',
            "AppId",
            "must be a finite number",
        ),
    ],
    ids=["projects", "departments", "past 64 bits", "claims", "token"],
)
def test_a_number_the_store_cannot_hold_is_refused_on_every_endpoint(
    module_api: Api, path: str, body: str, field: str, rule: str
) -> None:
    before = counts(module_api)
    text = body.replace("@cluster@", module_api.cluster_id())
    message = refusal(module_api.post(path, content=text, headers=JSON))
    assert message.startswith(f"{field}: "), message
    assert rule in message
    assert counts(module_api) == before


@pytest.mark.parametrize(
    ("query", "field", "rule"),
    [
        (f"offset={2**31}", "offset", "less than or equal to 2147483647 (a 32-bit integer"),
        (f"offset={2**63}", "offset", "less than or equal to 2147483647"),
        ("offset=" + "9" * 40, "offset", "less than or equal to 2147483647"),
        (f"offset={-(2**31) - 1}", "offset", "greater than or equal to -2147483648"),
        (f"limit={2**64}", "limit", "between 1 and 500"),
    ],
)
@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/workloads",
        "/api/v1/workloads/pods",
        "/api/v1/org-unit/projects",
        "/api/v1/org-unit/departments",
        "/api/v1/node-pools",
    ],
)
def test_an_offset_past_32_bits_is_refused(
    module_api: Api, path: str, query: str, field: str, rule: str
) -> None:
    message = refusal(module_api.get(f"{path}?{query}"))
    assert message.startswith(f"{field}: ")
    assert rule in message


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/org-unit/projects/{id}",
        "/api/v1/org-unit/departments/{id}",
        "/api/v1/org-unit/projects/{id}/secrets",
        "/api/v1/org-unit/projects/{id}/configmaps/cfg",
        "/api/v1/org-unit/projects/{id}/claims",
    ],
)
@pytest.mark.parametrize("number", [2**31, 2**63, 10**30], ids=["32 bits", "64 bits", "more"])
def test_an_id_past_the_stores_range_is_no_such_id(module_api: Api, path: str, number: int) -> None:
    """Ids are the store's 32-bit keys: a larger one names nothing (it used to answer 500)."""
    message = refusal(module_api.get(path.format(id=number)), 404)
    assert f"has the id '{number}'" in message


def test_the_largest_offset_answers_an_empty_page(api: Api) -> None:
    created = api.create(distributed(api.cluster_id(), name="paged", workers=1))
    largest = 2**31 - 1
    for path in (
        "/api/v1/workloads",
        "/api/v1/org-unit/projects",
        f"/api/v1/workloads/{created['workloadId']}/pods",
        f"/api/v1/workloads/{created['workloadId']}/events",
        f"/api/v1/workloads/{created['workloadId']}/history",
    ):
        response = api.get(f"{path}?offset={largest}")
        assert response.status_code == 200, (path, response.text)
        assert "next" not in response.json()
    workload = f"/api/v1/workloads/{created['workloadId']}"
    for path in (f"{workload}/events", f"{workload}/history", f"{workload}/pods"):
        message = refusal(api.get(f"{path}?offset={largest + 1}"))
        assert message.startswith("offset: "), (path, message)


# --- what a pod spec asks: names, paths and quantities -------------------------------------

HUGE = 500_000
ENORMOUS = "99999999999999999999999999Gi"
QUANTITY_RULE = (
    "must be at most 9223372036854775807 (2^63-1) in its base unit, bytes for memory and "
    "storage: Kubernetes' largest quantity"
)
KINDS = ("distributed", "trainings", "workspaces")

SPEC_BOUNDS: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "environment variable name",
        {"environmentVariables": [{"name": "N" * HUGE, "value": "1"}]},
        "environmentVariables[0].name",
        "must be at most 253 characters",
    ),
    (
        "workingDir",
        {"workingDir": "/" + "d" * HUGE},
        "workingDir",
        "must be at most 4096 characters",
    ),
    (
        "mount path",
        {"storage": {"emptyDirVolume": [{"path": "/" + "p" * 5000}]}},
        "storage.emptyDirVolume[0].path",
        "must be at most 4096 characters",
    ),
    (
        "cpuMemoryRequest",
        {"compute": {"cpuMemoryRequest": ENORMOUS}},
        "compute.cpuMemoryRequest",
        QUANTITY_RULE,
    ),
    (
        "cpuMemoryLimit",
        {"compute": {"cpuMemoryLimit": "8Ei"}},
        "compute.cpuMemoryLimit",
        QUANTITY_RULE,
    ),
    (
        "gpuMemoryRequest",
        {"compute": {"gpuMemoryRequest": ENORMOUS, "gpuRequestType": "memory"}},
        "compute.gpuMemoryRequest",
        QUANTITY_RULE,
    ),
    (
        "gpuMemoryLimit",
        {"compute": {"gpuMemoryRequest": "1Gi", "gpuMemoryLimit": "1e30"}},
        "compute.gpuMemoryLimit",
        QUANTITY_RULE,
    ),
    (
        "extended resource",
        {"compute": {"extendedResources": [{"resource": "example.com/fpga", "quantity": "1e19"}]}},
        "compute.extendedResources[0].quantity",
        QUANTITY_RULE,
    ),
    (
        "cpuCoreRequest",
        {"compute": {"cpuCoreRequest": 1e300}},
        "compute.cpuCoreRequest",
        "must be at most 9223372036854775 cores",
    ),
    (
        "claim size",
        {"storage": {"pvc": [{"path": "/data", "claimInfo": {"size": ENORMOUS}}]}},
        "storage.pvc[0].claimInfo.size",
        QUANTITY_RULE,
    ),
    (
        "emptyDir sizeLimit",
        {"storage": {"emptyDirVolume": [{"path": "/cache", "sizeLimit": ENORMOUS}]}},
        "storage.emptyDirVolume[0].sizeLimit",
        QUANTITY_RULE,
    ),
]


def creation(api: Api, kind: str, name: str, **spec: Any) -> dict[str, Any]:
    if kind == "distributed":
        return distributed(api.cluster_id(), name=name, workers=1, **spec)
    return single_pod(api.cluster_id(), name=name, **spec)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bound", SPEC_BOUNDS, ids=[c[0] for c in SPEC_BOUNDS])
def test_a_pod_spec_past_its_bounds_is_refused_at_submission(
    module_api: Api, kind: str, bound: tuple[str, dict[str, Any], str, str]
) -> None:
    """What used to be accepted (202) and then failed to start or stayed Pending: refused
    with 400 naming the field and the limit, and nothing stored, for every kind."""
    case, spec, field, rule = bound
    before = counts(module_api)
    body = creation(module_api, kind, "bounded", **spec)
    message = refusal(module_api.post(f"/api/v1/workloads/{kind}", json=body))
    assert f"spec.{field}: {rule}" in message, (case, message)
    assert counts(module_api) == before


def test_a_master_spec_past_its_bounds_is_refused(module_api: Api) -> None:
    body = distributed(module_api.cluster_id(), name="bounded", workers=1)
    body["masterSpecSameAsWorker"] = False
    body["masterSpec"] = {
        "image": "python:3.11",
        "workingDir": "/" + "d" * HUGE,
        "compute": {"cpuMemoryRequest": ENORMOUS},
    }
    response = module_api.post("/api/v1/workloads/distributed", json=body)
    assert refusal(response) == "masterSpec.workingDir: must be at most 4096 characters"
    body["masterSpec"]["workingDir"] = "/work"
    message = refusal(module_api.post("/api/v1/workloads/distributed", json=body))
    assert message == f"masterSpec.compute.cpuMemoryRequest: {QUANTITY_RULE}"


@pytest.mark.parametrize("kind", KINDS)
def test_a_pod_spec_at_its_bounds_is_accepted(module_api: Api, kind: str) -> None:
    largest = str(2**63 - 1)
    body = creation(
        module_api,
        kind,
        "at-bounds",
        environmentVariables=[{"name": "N" * 253, "value": "1"}],
        workingDir="/" + "d" * 4095,
        compute={
            "cpuMemoryRequest": largest,
            "cpuMemoryLimit": largest,
            "extendedResources": [{"resource": "example.com/fpga", "quantity": largest}],
        },
        storage={"emptyDirVolume": [{"path": "/cache", "sizeLimit": "7Ei"}]},
    )
    response = module_api.post(f"/api/v1/workloads/{kind}", params={"dryRun": "true"}, json=body)
    assert response.status_code == 200, response.text


def test_a_claim_past_kubernetes_largest_quantity_is_refused(module_api: Api) -> None:
    claims = "/api/v1/org-unit/projects/1/claims"
    before = counts(module_api)
    message = refusal(module_api.post(claims, json={"name": "vast", "size": ENORMOUS}))
    assert message == f"size: {QUANTITY_RULE}"
    assert counts(module_api) == before


# --- filterBy --------------------------------------------------------------------------------


def test_at_most_a_hundred_filter_clauses(module_api: Api) -> None:
    hundred = [("filterBy", "name!=x")] * 100
    for path in ("/api/v1/workloads", "/api/v1/workloads/count", "/api/v1/org-unit/projects"):
        assert module_api.get(path, params=hundred).status_code == 200
        message = refusal(module_api.get(path, params=[*hundred, ("filterBy", "name!=y")]))
        assert message == "filterBy: must hold at most 100 clauses, not 101"
        joined = ",".join(["name!=x"] * 101)
        message = refusal(module_api.get(path, params={"filterBy": joined}))
        assert message == "filterBy: must hold at most 100 clauses, not 101"


# --- the size of a body ----------------------------------------------------------------------


def test_a_body_over_a_mebibyte_is_refused_with_413(module_api: Api) -> None:
    body = distributed(module_api.cluster_id(), name="huge", args="x" * MIB)
    before = counts(module_api)
    message = refusal(module_api.post("/api/v1/workloads/distributed", json=body), 413)
    assert message == f"body: must be at most {MIB} bytes (this server's limit)"
    assert counts(module_api) == before
    secret = {"name": "huge", "data": {"blob": "x" * MIB}}
    assert module_api.post("/api/v1/org-unit/projects/1/secrets", json=secret).status_code == 413
    assert counts(module_api) == before


def test_a_body_just_under_the_limit_is_read(module_api: Api) -> None:
    filler = "x" * (MIB - 200)
    secret = {"name": "large", "data": {"blob": filler}}
    text = json.dumps(secret)
    assert len(text) < MIB
    response = module_api.post("/api/v1/org-unit/projects/1/secrets", content=text, headers=JSON)
    assert response.status_code == 201, response.text
    assert module_api.delete("/api/v1/org-unit/projects/1/secrets/large").status_code == 204


def chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    """A JSON body streamed without a Content-Length (chunked): a secret of `total` bytes."""
    yield b'{"name": "streamed", "data": {"blob": "'
    sent = 0
    while sent < total:
        piece = min(size, total - sent)
        yield b"x" * piece
        sent += piece
    yield b'"}}'


@pytest.fixture
def live_api(live_server: LiveServer) -> Api:
    return live_server.api()


def test_a_streamed_body_is_counted_as_it_arrives(live_api: Api) -> None:
    """On a real server (uvicorn): a chunked body, with no Content-Length to refuse it by,
    is refused once it passes the limit; one within the limit is stored."""
    secrets = "/api/v1/org-unit/projects/1/secrets"
    over = live_api.post(secrets, content=chunks(8 * MIB), headers=JSON)
    assert refusal(over, 413) == f"body: must be at most {MIB} bytes (this server's limit)"
    assert live_api.get(secrets).json()["secrets"] == []
    within = live_api.post(secrets, content=chunks(MIB // 2), headers=JSON)
    assert within.status_code == 201, within.text


def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_read(
    live_api: Api,
) -> None:
    body = json.dumps({"name": "declared", "data": {"blob": "x" * (10 * MIB)}})
    response = live_api.post("/api/v1/org-unit/projects/1/secrets", content=body, headers=JSON)
    assert refusal(response, 413).startswith("body: must be at most")
    assert response.headers["connection"] == "close"
    assert live_api.get("/api/v1/clusters").status_code == 200


def test_a_megabyte_of_args_is_refused_while_the_server_answers_others(
    live_server: LiveServer, live_api: Api, record_property: Any
) -> None:
    """The request that froze the server for 15 s: 1 MB of `args` (within the body limit).
    It is refused naming spec.args, and a GET sent at the same time is answered. The times are
    recorded, not asserted."""
    body = json.dumps(distributed(live_api.cluster_id(), name="long-args", args="x" * 1_000_000))
    assert len(body) < MIB
    other = live_server.api()
    start = threading.Barrier(2)
    results: dict[str, tuple[httpx.Response, float]] = {}

    def timed(name: str, send: Any) -> None:
        start.wait()
        began = time.perf_counter()
        results[name] = (send(), time.perf_counter() - began)

    post = threading.Thread(
        target=timed,
        args=(
            "post",
            lambda: live_api.post("/api/v1/workloads/distributed", content=body, headers=JSON),
        ),
    )
    post.start()
    timed("get", lambda: other.get("/api/v1/clusters"))
    post.join()
    refused, refused_in = results["post"]
    answered, answered_in = results["get"]
    assert refusal(refused) == "spec.args: must be at most 10000 characters (this server's limit)"
    assert answered.status_code == 200
    record_property("refused in seconds", round(refused_in, 3))
    record_property("concurrent GET answered in seconds", round(answered_in, 3))
    assert live_api.get("/api/v1/workloads/count").json()["count"] == 0


# --- what uvicorn answers before the app: URLs too long, requests that are not HTTP -----------


def target_of(length: int) -> bytes:
    """A request target of exactly `length` bytes: the workload list, searched."""
    prefix = b"/api/v1/workloads?search="
    return prefix + b"x" * (length - len(prefix))


def test_a_url_too_long_is_refused_in_runais_error_body(live_server: LiveServer) -> None:
    """uvicorn answers a request it cannot parse before lockstep sees it, in plain text;
    lockstep's protocol answers it in Run:ai's error body, naming the limit. A URL at the limit
    reaches the app (401 here: no token); the server answers others meanwhile."""
    token = live_server.api().token
    auth = f"Authorization: Bearer {token}\r\n".encode()
    for length in (65_536, 1_000_000):
        request = b"GET " + target_of(length) + b" HTTP/1.1\r\nHost: lockstep\r\n" + auth + b"\r\n"
        status, headers, body = raw_exchange(live_server, request)
        assert status == 400, body[:200]
        assert headers["content-type"] == "application/json"
        assert headers["connection"] == "close"
        assert json.loads(body) == {
            "code": 400,
            "message": "url: must be at most 65535 bytes (this server's limit)",
        }
    at_limit = b"GET " + target_of(65_535) + b" HTTP/1.1\r\nHost: lockstep\r\n" + auth + b"\r\n"
    status, _, body = raw_exchange(live_server, at_limit)
    assert status == 200, body[:200]
    assert json.loads(body)["workloads"] == []
    assert live_server.api().get("/api/v1/clusters").status_code == 200


def test_a_request_that_is_not_http_is_refused_in_runais_error_body(
    live_server: LiveServer,
) -> None:
    status, headers, body = raw_exchange(live_server, b"HELLO THERE\r\n\r\n")
    assert (status, headers["content-type"]) == (400, "application/json")
    assert json.loads(body) == {"code": 400, "message": "request: is not a valid HTTP/1.1 request"}


# --- a site's own limits ---------------------------------------------------------------------


@pytest.fixture
def roomy_api(tmp_path: Path, sqlite_url: str) -> Iterator[Api]:
    """A server with its own limits: fewer workers, longer command lines, a smaller body."""
    settings: Settings = make_settings(tmp_path / "data", sqlite_url).model_copy(
        update={"max_workers": 3, "max_command_length": 20_000, "max_request_bytes": 32 * 1024}
    )
    with in_process(settings) as client:
        yield Api.login(client)


def test_a_site_sets_its_own_limits(roomy_api: Api) -> None:
    cluster = roomy_api.cluster_id()
    dry_run = "/api/v1/workloads/distributed?dryRun=true"
    fits = distributed(cluster, name="three", workers=3, args="-c " + "x" * 19_000)
    assert roomy_api.post(dry_run, json=fits).status_code == 200
    four = distributed(cluster, name="four", workers=4)
    assert refusal(roomy_api.post(dry_run, json=four)) == (
        "spec.numWorkers: must be less than or equal to 3 (this server's limit)"
    )
    longer = distributed(cluster, name="longer", args="x" * 20_001)
    assert refusal(roomy_api.post(dry_run, json=longer)) == (
        "spec.args: must be at most 20000 characters (this server's limit)"
    )
    larger = distributed(cluster, name="larger", args="x" * (32 * 1024))
    assert refusal(roomy_api.post(dry_run, json=larger), 413) == (
        "body: must be at most 32768 bytes (this server's limit)"
    )
