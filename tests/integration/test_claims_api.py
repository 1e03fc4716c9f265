"""The claims endpoints (a lockstep extension), in process on SQLite and PostgreSQL: round trips
with the claim's directory on this machine, usage beyond the size as an `OverSize` condition,
the errors in the Run:ai body naming the field and the rule, who may do what (as with the
project's workloads), and a claim a running workload made and mounts: listed, and not deleted
from under it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from lockstep.config import Settings
from lockstep.domain.claims import readable
from lockstep.domain.identity import Role
from lockstep.domain.quantities import binary_quantity
from lockstep.runtimes.local.volumes.claims import disk_usage
from tests.support.access import app_with_role, new_project
from tests.support.api import Api, poll
from tests.support.requests import distributed, python

MiB = 1024 * 1024


def path(project: str = "1", name: str | None = None) -> str:
    base = f"/api/v1/org-unit/projects/{project}/claims"
    return base if name is None else f"{base}/{name}"


def claims_dir(api: Api) -> Path:
    settings: Settings = api.client.app.state.settings  # type: ignore[attr-defined]
    return settings.claims_dir


def error(response: httpx.Response, code: int) -> str:
    assert response.status_code == code, response.text
    body: dict[str, Any] = response.json()
    assert {"code", "message"} <= set(body) and body["code"] == code
    return str(body["message"])


def created(api: Api, body: dict[str, Any], project: str = "1") -> dict[str, Any]:
    response = api.post(path(project), json=body)
    assert response.status_code == 201, response.text
    claim: dict[str, Any] = response.json()
    return claim


def test_a_claim_round_trips_with_its_directory(module_api: Api) -> None:
    api = module_api
    body = created(api, {"name": "data", "size": "10Gi"})
    assert set(body) == {"name", "projectId", "size", "used", "createdAt", "conditions"}
    assert (body["name"], body["projectId"], body["size"], body["used"]) == (
        "data",
        "1",
        "10Gi",
        "0",
    )
    assert body["conditions"] == [] and body["createdAt"].endswith("Z")
    directory = claims_dir(api) / "1" / "data"
    assert directory.is_dir()
    assert api.get(path()).json() == {"claims": [body]}
    assert api.get(path(name="data")).json() == body

    (directory / "weights.bin").write_bytes(os.urandom(MiB))
    used = api.get(path(name="data")).json()
    assert used["used"] == binary_quantity(disk_usage(directory)) and disk_usage(directory) >= MiB
    assert used["conditions"] == []

    deleted = api.delete(path(name="data"))
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert not directory.exists()
    assert error(api.get(path(name="data")), 404) == "project 1 has no claim named 'data'"
    assert api.get(path()).json() == {"claims": []}


def test_a_claim_without_a_size_has_none(module_api: Api) -> None:
    api = module_api
    body = created(api, {"name": "open"})
    assert (body["size"], body["conditions"]) == (None, [])
    assert api.delete(path(name="open")).status_code == 204


@pytest.mark.parametrize(
    ("size", "shown"),
    [(1048576, "1Mi"), ("1Gi", "1Gi"), ("1G", "1000000000"), ("1.5Ki", "1536"), ("500m", "1")],
)
def test_sizes_are_kubernetes_quantities_rounded_up_to_bytes(
    module_api: Api, size: Any, shown: str
) -> None:
    assert created(module_api, {"name": "sized", "size": size})["size"] == shown
    assert module_api.delete(path(name="sized")).status_code == 204


def test_usage_beyond_the_size_is_an_over_size_condition(module_api: Api) -> None:
    api = module_api
    created(api, {"name": "small", "size": "64Ki"})
    created(api, {"name": "roomy", "size": "1Gi"})
    for name in ("small", "roomy"):
        (claims_dir(api) / "1" / name / "big").write_bytes(os.urandom(MiB))
    used = disk_usage(claims_dir(api) / "1" / "small")
    small, roomy = api.get(path()).json()["claims"][::-1]
    assert small["name"] == "small" and small["used"] == binary_quantity(used)
    assert small["conditions"] == [
        {"type": "OverSize", "status": "True", "message": f"uses {readable(used)} of its 64Ki"}
    ]
    assert readable(used).endswith("Mi")
    assert roomy["name"] == "roomy" and roomy["conditions"] == []
    assert api.get(path(name="small")).json() == small
    for name in ("small", "roomy"):
        assert api.delete(path(name=name)).status_code == 204


BAD_BODIES: list[tuple[Any, str]] = [
    ({"size": "1Gi"}, "name: required"),
    ({"name": "Bad_Name"}, "name: must be a DNS-1123 label"),
    ({"name": "x" * 64}, "name: must be a DNS-1123 label"),
    ({"name": 5}, "name: input should be a valid string"),
    ({"name": "ok", "size": "ten"}, "size: must be a quantity of bytes such as 10Gi"),
    ({"name": "ok", "size": "-1Gi"}, "size: must be a quantity of bytes"),
    ({"name": "ok", "size": "0"}, "size: must be greater than 0, not '0'"),
    ({"name": "ok", "size": True}, "size: input should be a valid string"),
    ({"name": "ok", "storageClass": "fast"}, "storageClass: is not a known field"),
    (b'{"name": "ok"', "body: is not valid JSON"),
    (b"", "body: a JSON object is required"),
]


@pytest.mark.parametrize("bad", BAD_BODIES, ids=[case[1] for case in BAD_BODIES])
def test_bad_bodies_are_400_naming_the_field_and_the_rule(
    module_api: Api, bad: tuple[Any, str]
) -> None:
    body, message = bad
    content = body if isinstance(body, bytes) else None
    json_body = None if isinstance(body, bytes) else body
    response = module_api.post(path(), content=content, json=json_body)
    assert message in error(response, 400)
    assert module_api.get(path()).json() == {"claims": []}


def test_every_violation_is_named_at_once(module_api: Api) -> None:
    response = module_api.post(path(), json={"name": "Bad", "size": "lots"})
    message = error(response, 400)
    assert message.startswith("name: must be a DNS-1123 label")
    assert "; size: must be a quantity of bytes" in message


ENDPOINTS = [("GET", path()), ("POST", path()), ("GET", path(name="a")), ("DELETE", path(name="a"))]


@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_every_claims_endpoint_needs_a_token(module_api: Api, method: str, url: str) -> None:
    response = module_api.client.request(method, url, json={"name": "a"})
    assert "bearer token is required" in error(response, 401)


def test_unknown_projects_and_names_are_404(module_api: Api) -> None:
    api = module_api
    for project in ("999", "abc"):
        expected = f"no project has the id {project!r}"
        assert error(api.get(path(project)), 404) == expected
        assert error(api.post(path(project), json={"name": "a"}), 404) == expected
        assert error(api.get(path(project, "a")), 404) == expected
        assert error(api.delete(path(project, "a")), 404) == expected
    missing = "project 1 has no claim named 'nope'"
    assert error(api.get(path(name="nope")), 404) == missing
    assert error(api.delete(path(name="nope")), 404) == missing
    assert not (claims_dir(api) / "999").exists()


def test_creating_an_existing_name_is_409_and_keeps_the_first(module_api: Api) -> None:
    api = module_api
    created(api, {"name": "dup", "size": "1Gi"})
    (claims_dir(api) / "1" / "dup" / "kept").write_text("first")
    again = api.post(path(), json={"name": "dup", "size": "2Gi"})
    assert error(again, 409) == "project 1 already has a claim named 'dup'"
    assert api.get(path(name="dup")).json()["size"] == "1Gi"
    assert (claims_dir(api) / "1" / "dup" / "kept").read_text() == "first"
    assert api.delete(path(name="dup")).status_code == 204


def test_a_researcher_manages_claims_only_in_its_own_project(api: Api) -> None:
    other = new_project(api, "other")
    researcher = app_with_role(api, "researcher", Role.L1_RESEARCHER, other)
    created(api, {"name": "theirs"})

    mine = created(researcher, {"name": "mine", "size": "1Mi"}, other)
    assert mine["projectId"] == other
    assert (claims_dir(api) / other / "mine").is_dir()
    assert [c["name"] for c in researcher.get(path(other)).json()["claims"]] == ["mine"]
    assert researcher.get(path(other, "mine")).status_code == 200
    assert researcher.delete(path(other, "mine")).status_code == 204

    assert error(researcher.get(path()), 403) == "you may not read workloads in project 1"
    for name in ("theirs", "nope"):
        assert error(researcher.get(path(name=name)), 403).startswith("you may not read")
    sneak = researcher.post(path(), json={"name": "sneak"})
    assert error(sneak, 403) == "you may not create workloads in project 1"
    deleted = researcher.delete(path(name="theirs"))
    assert error(deleted, 403) == "you may not delete workloads in project 1"
    assert sorted(p.name for p in (claims_dir(api) / "1").iterdir()) == [
        "theirs",
        "theirs.claim.json",
    ]


def test_a_viewer_reads_claims_but_changes_nothing(api: Api) -> None:
    viewer = app_with_role(api, "viewer", Role.VIEWER, "1")
    body = created(api, {"name": "data", "size": "1Gi"})
    assert viewer.get(path()).json() == {"claims": [body]}
    assert viewer.get(path(name="data")).json() == body
    made = viewer.post(path(), json={"name": "mine"})
    assert error(made, 403) == "you may not create workloads in project 1"
    gone = viewer.delete(path(name="data"))
    assert error(gone, 403) == "you may not delete workloads in project 1"
    assert api.get(path()).json() == {"claims": [body]}


WRITE_AND_WAIT = (
    "import os, time\n"
    "with open('/data/blob', 'wb') as f:\n"
    "    f.write(os.urandom(2 * 1024 * 1024))\n"
    "time.sleep(600)\n"
)


def test_a_claim_a_running_workload_made_is_listed_and_kept_while_in_use(api: Api) -> None:
    claim = {"claimName": "scratchpad", "path": "/data", "existingPvc": False}
    claim["claimInfo"] = {"size": "1Mi"}
    body = distributed(
        api.cluster_id(), name="filler", workers=1, args=python(WRITE_AND_WAIT),
        storage={"pvc": [claim]},
    )  # fmt: skip
    workload = api.create(body)["workloadId"]
    api.wait_for(workload, ["Running"], timeout=60)

    def written() -> dict[str, Any] | None:
        response = api.get(path(name="scratchpad"))
        found: dict[str, Any] = response.json()
        return found if response.status_code == 200 and found["conditions"] else None

    listed = poll(written, timeout=30, what="the workload's claim to be over its size")
    assert (listed["size"], listed["conditions"][0]["type"]) == ("1Mi", "OverSize")
    assert listed["conditions"][0]["message"].endswith(" of its 1Mi")
    assert [c["name"] for c in api.get(path()).json()["claims"]] == ["scratchpad"]

    in_use = api.delete(path(name="scratchpad"))
    assert error(in_use, 409) == (
        "the claim 'scratchpad' is in use by the workload filler of project 1: "
        "stop or delete it first"
    )
    assert (claims_dir(api) / "1" / "scratchpad" / "blob").exists()

    assert api.delete(f"/api/v1/workloads/distributed/{workload}").status_code == 202
    api.wait_gone(workload)
    assert (claims_dir(api) / "1" / "scratchpad" / "blob").exists(), "a claim outlives it"
    assert api.delete(path(name="scratchpad")).status_code == 204
    assert api.get(path()).json() == {"claims": []}
