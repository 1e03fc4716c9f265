"""A property-based run of the Run:ai document against a real `lockstep serve`: schemathesis
generates requests for every operation lockstep serves (and only those) from the document's
schemas, its examples and negative data (coverage of each constraint's boundaries, then
fuzzing), sends them with the administrator's bearer token, and checks every answer:
no 5xx (`not_a_server_error`), a status the document lists (`status_code_conformance`), a
body of the documented schema (`response_schema_conformance`). Failures: none.

The run is bounded and reproducible (a fixed seed, derandomized generation, no example
database) and takes a minute or two, on SQLite and on PostgreSQL. It runs twice on each: once
with the path ids schemathesis generates (unknown ids, ids of the wrong form), once with the
ids of objects that exist (a running workload of each kind, the cluster, the default
project, a department and a node pool) so that their answers are full bodies — the operations
with such ids in their path (those of trainings and workspaces with the id of one of their
own kind), and the creation of departments and projects in the cluster that exists; that pass
deletes last, so that its DELETE requests leave the objects to the rest.

Where the document is silent lockstep follows its own documented rule, and the run checks
it against that rule (`SILENCES`): every operation answers input it refuses with Run:ai's
400 error body, though the document lists no 400 for some of them; the token endpoint answers
refused credentials with 401, and a client past its rate with 429; deleting a project,
department or node pool that something still depends on answers 409.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from schemathesis.engine import events, from_schema

from lockstep.api.app import create_app
from lockstep.config import Settings
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api
from tests.support.contract import document
from tests.support.requests import python, single_pod, sleeping
from tests.support.server import LiveServer

SEED = 20261201
MAX_EXAMPLES = 25
"""Fuzzed cases per operation and pass, beside the examples and the coverage cases: some
7,000 requests on each store in all (most of them the coverage of the creation request)."""
CHECKS = ("not_a_server_error", "status_code_conformance", "response_schema_conformance")
METHODS = frozenset({"get", "put", "post", "delete", "patch"})
SILENCES = {
    "400": "#/components/responses/400BadRequest",
    "401": "#/components/responses/401Unauthorized",
}
"""What lockstep answers where the document lists nothing: bad input gets 400 everywhere, and a
request without a valid token 401 (the document requires its bearer token of every operation,
but lists the 401 of most, not all: `/api/v1/authorization/me/access-rules` has none)."""
TOKEN_SILENCES = {
    "401": "#/components/responses/401Unauthorized",
    "429": "#/components/responses/503ServiceUnavailable",
}
"""Refused credentials at the token endpoint get 401 (docs/api.md: Errors); a client past its rate
of checks of a secret gets 429 (docs/api.md: The token endpoint), in the error body the document
gives a 503, which likewise says to try again later."""
CONFLICT_SILENCES = {"409": "#/components/responses/409Conflict"}
DELETIONS_REFUSED = frozenset(
    {
        ("DELETE", "/api/v1/org-unit/projects/{projectId}"),
        ("DELETE", "/api/v1/org-unit/departments/{departmentId}"),
        ("DELETE", "/api/v1/node-pools/{nodepoolId}"),
    }
)
"""Deleting what something still depends on is refused with 409 (docs/quotas.md: Projects,
departments and node pools): a project with workloads, a department with projects, the
default pool or one that resources name."""
NOT_FOUND_SILENCES = {"404": "#/components/responses/404NotFound"}
NOT_FOUND_FORGOTTEN = frozenset({("PUT", "/api/v1/idps/{idp}/mappers")})
"""An unknown identity provider is answered 404 by every operation on one (docs/api.md:
Single sign-on); the document forgets it here."""
TOKEN = ("POST", "/api/v1/token")
ORGANIZATION_CREATIONS = (
    ("POST", "/api/v1/org-unit/departments"),
    ("POST", "/api/v1/org-unit/projects"),
)
SINGLE_POD_COLLECTIONS = ("trainings", "workspaces")
"""The kinds whose paths answer for a workload of their own kind only."""


Operation = tuple[str, str]
"""(METHOD, path as the document writes it)."""


def _shape(path: str) -> str:
    """A path with its parameters unnamed, so that routes and the document compare."""
    return re.sub(r"\{[^}]*\}", "{}", path)


def routed(tmp_path: Path) -> set[Operation]:
    """Every (method, path) lockstep's app routes, read from the app itself (FastAPI's own
    description of its routes)."""
    settings = Settings(
        data_dir=tmp_path / "routes",
        database_url=f"sqlite:///{tmp_path / 'routes.db'}",
        bootstrap_client_id=ADMIN_ID,
        bootstrap_client_secret=ADMIN_SECRET,
    )
    app = create_app(settings)
    with TestClient(app):
        paths = app.openapi()["paths"]
    return {
        (method.upper(), _shape(path))
        for path, item in paths.items()
        for method in item
        if method in METHODS
    }


def documented() -> set[Operation]:
    return {
        (method.upper(), path)
        for path, item in document()["paths"].items()
        for method in item
        if method in METHODS
    }


def served(tmp_path: Path) -> list[Operation]:
    """The operations of the document that lockstep serves."""
    routes = routed(tmp_path)
    return sorted(op for op in documented() if (op[0], _shape(op[1])) in routes)


def with_silences(operations: Iterable[Operation]) -> dict[str, Any]:
    """The document, with what lockstep answers where it is silent (`SILENCES`) added to the
    responses of `operations`; nothing it does say is changed."""
    amended = copy.deepcopy(document())
    for method, path in operations:
        responses = amended["paths"][path][method.lower()]["responses"]
        added = {
            **SILENCES,
            **(TOKEN_SILENCES if (method, path) == TOKEN else {}),
            **(CONFLICT_SILENCES if (method, path) in DELETIONS_REFUSED else {}),
            **(NOT_FOUND_SILENCES if (method, path) in NOT_FOUND_FORGOTTEN else {}),
        }
        for status, reference in added.items():
            responses.setdefault(status, {"$ref": reference})
    return amended


@dataclass
class Outcome:
    cases: Counter[str]
    """Cases sent, by operation."""
    answers: Counter[tuple[str, int]]
    """Answers, by operation and status."""
    failures: list[str]


def run(
    schema_document: dict[str, Any],
    *,
    url: str,
    token: str,
    operations: Iterable[Operation],
    path_parameters: dict[str, str] | None = None,
    cluster: str | None = None,
) -> Outcome:
    """One schemathesis run over `operations` (the others are left out); `path_parameters`
    are the ids every path takes, `cluster` the cluster every request body names."""
    chosen = {f"{method} {path}" for method, path in operations}
    everything = {f"{method} {path}" for method, path in documented()}
    config = schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "base-url": url,
            "headers": {"Authorization": f"Bearer {token}"},
            "suppress-health-check": ["too_slow"],
            "workers": 1,
            "generation": {
                "mode": "all",
                "max-examples": MAX_EXAMPLES,
                "deterministic": True,
                "database": "none",
            },
            "phases": {"stateful": {"enabled": False}},
            "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
            "parameters": {f"path.{k}": v for k, v in (path_parameters or {}).items()},
            "operations": [
                {"include-name": name, "enabled": False} for name in sorted(everything - chosen)
            ],
        }
    )
    schema = schemathesis.openapi.from_dict(schema_document, config=config)
    if cluster is not None:

        @schema.hook
        def map_body(context: schemathesis.HookContext, body: Any) -> Any:
            """Creations name the cluster that exists, so that valid ones are stored."""
            if isinstance(body, dict) and isinstance(body.get("clusterId"), str):
                return {**body, "clusterId": cluster}
            return body

    outcome = Outcome(Counter(), Counter(), [])
    failures = outcome.failures
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            recorder = event.recorder
            outcome.cases[recorder.label] += len(recorder.cases)
            for interaction in recorder.interactions.values():
                if interaction.response is not None:
                    outcome.answers[recorder.label, interaction.response.status_code] += 1
            for checks in recorder.checks.values():
                for check in checks:
                    if check.failure_info is not None:
                        failure = check.failure_info.failure
                        failures.append(
                            f"{recorder.label}: {check.name}: {failure.title}\n"
                            f"{failure.message}\n{check.failure_info.code_sample}"
                        )
        elif isinstance(event, events.NonFatalError):
            failures.append(f"{event.label}: {event.info.title}: {event.info.message}")
        elif isinstance(event, events.FatalError):
            failures.append(f"the run stopped: {event.exception!r}")
    return outcome


USER_APPLICATION = "user application"
"""The pin of `appId` on the paths of user applications (an access key), where the
`appId` of `/api/v1/apps/…` is a service account."""
OWN_KEYS = frozenset(
    {
        ("GET", "/api/v1/access-keys/{accessKeyId}"),
        ("DELETE", "/api/v1/access-keys/{accessKeyId}"),
        ("POST", "/api/v1/access-keys/{accessKeyId}/secret"),
        ("GET", "/api/v1/user-applications/{appId}"),
        ("DELETE", "/api/v1/user-applications/{appId}"),
        ("POST", "/api/v1/user-applications/{appId}/secret"),
    }
)
"""The operations on the caller's own access keys: the run's caller is an application, which
has none (403); tests/integration/test_clients_api.py runs them as a user."""


UNSATISFIABLE = frozenset({("PUT", "/api/v1/idps/{idp}")})
"""Operations whose valid bodies the run cannot make: an OpenID Connect provider's
`discoverDocumentUrl` has a pattern no URL matches (`/^…$|^$/`, slashes and all), and the
document's named examples are not among the cases sent. tests/integration/test_single_sign_on.py
replaces providers with valid bodies."""


def _access_keys(api: Api, email: str, names: list[str]) -> list[str]:
    """A new user's access keys of these names: their ids."""
    created = api.post("/api/v1/users", json={"email": email})
    assert created.status_code == 201, created.text
    signed_in = api.client.post(
        "/api/v1/token",
        json={
            "grantType": "password",
            "username": email,
            "password": created.json()["tempPassword"],
        },
    )
    user = Api(api.client, signed_in.json()["accessToken"])
    return [
        str(user.post("/api/v1/access-keys", json={"name": name}).json()["id"]) for name in names
    ]


def _sent(pinned: dict[str, str], *, user_applications: bool = False) -> dict[str, str]:
    """The ids operations are sent with; on the paths of user applications, `appId` is an
    access key."""
    ids = {name: value for name, value in pinned.items() if name != USER_APPLICATION}
    if user_applications:
        ids["appId"] = pinned[USER_APPLICATION]
    return ids


def _existing_ids(server: LiveServer) -> tuple[dict[str, str], dict[str, str]]:
    """A running distributed workload and one of its pods, the cluster and its node, the
    default project, a department, a node pool, a user and an access rule that nothing depends
    on (so that deleting them succeeds); and a running workload of each single-pod kind, by
    its collection."""
    api = server.api()
    cluster = api.cluster_id()
    workload = api.create(sleeping(cluster, name="contract", workers=1))["workloadId"]
    asleep = python("import time; time.sleep(600)")
    single = {
        collection: api.create(
            single_pod(cluster, name=f"contract-{collection}", args=asleep), kind=collection
        )["workloadId"]
        for collection in SINGLE_POD_COLLECTIONS
    }
    for running in (workload, *single.values()):
        api.wait_for(running, {"Running"})
    department = api.post(
        "/api/v1/org-unit/departments", json={"name": "contract", "clusterId": cluster}
    )
    pool = api.post(
        "/api/v1/node-pools",
        json={
            "name": "contract",
            "labelKey": "pool",
            "labelValue": "contract",
            "clusterId": cluster,
        },
    )
    user = api.post("/api/v1/users", json={"email": "contract@example.com"})
    rule = api.post(
        "/api/v1/authorization/access-rules",
        json={
            "subjectType": "group",
            "subjectId": "contract-group",
            "roleId": 8,
            "scopeType": "project",
            "scopeId": "1",
        },
    )
    accounts = [
        api.post("/api/v1/service-accounts", json={"name": name}).json()["id"]
        for name in ("contract-account", "contract-app")
    ]
    keys = _access_keys(api, "contract-keys@example.com", ["contract-key", "contract-user-app"])
    idp = api.post(
        "/api/v1/idps",
        json={
            "name": "contract",
            "type": "oidc",
            "oidcData": {
                "clientId": "lockstep",
                "clientSecret": "a-secret",
                "discoverDocumentUrl": "https://idp.example.com/.well-known/openid-configuration",
            },
        },
    )
    assert idp.status_code == 201, idp.text
    assert department.status_code == 201 and pool.status_code == 201, (department, pool)
    assert user.status_code == 201 and rule.status_code == 201, (user.text, rule.text)
    node = api.get(f"/api/v1/clusters/{cluster}/nodes").json()["nodes"][0]["name"]
    pod = api.get(f"/api/v1/workloads/{workload}/pods").json()["pods"][0]["id"]
    pinned = {
        "workloadId": workload,
        "podId": pod,
        "nodeId": node,
        "clusterUuid": cluster,
        "departmentId": str(department.json()["id"]),
        "projectId": "1",
        "nodepoolId": str(pool.json()["id"]),
        "userId": str(user.json()["id"]),
        "accessRuleId": str(rule.json()["id"]),
        "serviceAccountId": accounts[0],
        "appId": accounts[1],
        "idp": "contract",
        "accessKeyId": keys[0],
        USER_APPLICATION: keys[1],
    }
    return pinned, single


PROJECT_DELETION: Operation = ("DELETE", "/api/v1/org-unit/projects/{projectId}")


def _kind_of(operation: Operation) -> str | None:
    """The single-pod collection whose workload the operation's path names, if any."""
    for collection in SINGLE_POD_COLLECTIONS:
        if operation[1].startswith(f"/api/v1/workloads/{collection}/"):
            return collection
    return None


@pytest.mark.timeout(900)
@pytest.mark.parametrize("ids", ["generated", "existing"])
def test_every_served_operation_keeps_the_contract(
    ids: str, live_server_on_each_store: LiveServer, tmp_path: Path
) -> None:
    live_server = live_server_on_each_store
    operations = served(tmp_path)
    assert operations, "lockstep serves none of the document's operations"
    print("covered:", *(f"{m} {p}" for m, p in operations), sep="\n  ")
    schema_document = with_silences(operations)
    token = live_server.api().token
    assert token is not None
    outcome = Outcome(Counter(), Counter(), [])
    passes: list[tuple[list[Operation], dict[str, str] | None]]
    if ids == "generated":
        passes = [(operations, None)]
    else:
        pinned, single = _existing_ids(live_server)
        # the ones that name no existing object would send what the generated pass sent; a
        # workload created would run its pods
        with_ids = [op for op in operations if "{" in op[1] or op in ORGANIZATION_CREATIONS]
        ids_of: dict[str | None, dict[str, str]] = {
            collection: pinned | {"workloadId": workload_id}
            for collection, workload_id in single.items()
        }
        ids_of[None] = pinned
        passes = [
            (
                [
                    op
                    for op in with_ids
                    if _kind_of(op) == kind
                    and deleting == (op[0] == "DELETE")
                    and op != PROJECT_DELETION
                ],
                _sent(ids),
            )
            for deleting in (False, True)
            for kind, ids in ids_of.items()
        ]
        # Then the user applications again, with an `appId` that is an access key.
        passes += [
            (
                [
                    op
                    for op in with_ids
                    if "/user-applications/" in op[1] and deleting == (op[0] == "DELETE")
                ],
                _sent(pinned, user_applications=True),
            )
            for deleting in (False, True)
        ]
        # Last, once every workload of the project is gone: a project that still has
        # workloads is not deleted (409).
        passes.append(([PROJECT_DELETION], _sent(pinned)))
        workload_ids = [pinned["workloadId"], *single.values()]
    for chosen, parameters in passes:
        if chosen == [PROJECT_DELETION]:
            for workload_id in workload_ids:
                live_server.api().wait_gone(workload_id)
        result = run(
            schema_document,
            url=live_server.url,
            token=token,
            operations=chosen,
            path_parameters=parameters,
            cluster=None if parameters is None else parameters["clusterUuid"],
        )
        outcome.cases.update(result.cases)
        outcome.answers.update(result.answers)
        outcome.failures.extend(result.failures)
    print("cases:", json.dumps(dict(sorted(outcome.cases.items())), indent=1))
    assert not outcome.failures, f"{len(outcome.failures)} failures:\n\n" + "\n\n".join(
        outcome.failures[:30]
    )
    sent = {label for label, count in outcome.cases.items() if count}
    expected = {f"{m} {p}" for op in passes for m, p in op[0]}
    assert sent == expected, f"operations left out of the run: {sorted(expected - sent)}"
    assert sum(outcome.cases.values()) >= (2000 if ids == "generated" else 200)
    if ids == "existing":
        answered = {label for (label, status), _ in outcome.answers.items() if status < 300}
        expected -= {f"{m} {p}" for m, p in OWN_KEYS | UNSATISFIABLE}
        assert answered >= expected, f"never answered 2xx: {sorted(expected - answered)}"
