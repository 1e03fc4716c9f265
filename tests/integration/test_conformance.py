"""Every response of every endpoint lockstep serves validates against the Run:ai document."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from lockstep.domain.identity import Role
from tests.support.access import app_with_role, new_project
from tests.support.api import Api
from tests.support.contract import assert_conforms
from tests.support.requests import distributed, python, single_pod, sleeping

WORKLOAD = "/api/v1/workloads/{workloadId}"
DISTRIBUTED = "/api/v1/workloads/distributed/{workloadId}"
SINGLE_POD_KINDS = {"trainings": "Training", "workspaces": "Workspace"}
"""The collection of each single-pod kind, and the `type` the generic list gives it."""
ACCEPTED = {"code": 202, "message": "Request has been accepted."}
ACTIONS = (("GET", ""), ("DELETE", ""), ("POST", "/suspend"), ("POST", "/resume"))
"""Each operation on one workload of a kind: its method and what follows the id."""


def test_token_responses_conform(api: Api) -> None:
    ok = api.client.post(
        "/api/v1/token",
        json={
            "grantType": "client_credentials",
            "clientId": "admin",
            "clientSecret": "admin-secret-for-tests",
        },
    )
    assert ok.status_code == 200
    body = assert_conforms(ok, "/api/v1/token")
    assert body["expiresIn"] == 3600
    bad = api.client.post("/api/v1/token", json={"grantType": "password"})
    assert bad.status_code == 400
    assert_conforms(bad, "/api/v1/token")


def test_distributed_lifecycle_responses_conform(api: Api) -> None:
    cluster = api.cluster_id()
    created = api.post("/api/v1/workloads/distributed", json=sleeping(cluster, name="conform"))
    assert created.status_code == 202
    body = assert_conforms(created, "/api/v1/workloads/distributed")
    workload_id = body["workloadId"]
    api.wait_for(workload_id, {"Running"})

    fetched = api.get(f"/api/v1/workloads/distributed/{workload_id}")
    assert assert_conforms(fetched, DISTRIBUTED)["workloadId"] == workload_id
    for path in (WORKLOAD, WORKLOAD + "/pods", WORKLOAD + "/events", WORKLOAD + "/history"):
        response = api.get(path.replace("{workloadId}", workload_id))
        assert response.status_code == 200, response.text
        assert_conforms(response, path)

    for action in ("suspend", "resume"):
        response = api.post(f"/api/v1/workloads/distributed/{workload_id}/{action}")
        assert response.status_code == 202
        assert assert_conforms(response, DISTRIBUTED + f"/{action}") == {
            "code": 202,
            "message": "Request has been accepted.",
        }
    deleted = api.delete(f"/api/v1/workloads/distributed/{workload_id}")
    assert deleted.status_code == 202
    assert_conforms(deleted, DISTRIBUTED)
    api.wait_gone(workload_id)
    listed = api.get("/api/v1/workloads", params={"deleted": "true"})
    assert assert_conforms(listed, "/api/v1/workloads")["workloads"][0]["deletedAt"]


def test_list_and_count_conform(api: Api) -> None:
    cluster = api.cluster_id()
    for name in ("alpha", "beta"):
        api.create(distributed(cluster, name=name))
    listed = api.get("/api/v1/workloads", params={"limit": 1, "sortBy": "name"})
    body = assert_conforms(listed, "/api/v1/workloads")
    assert [w["name"] for w in body["workloads"]] == ["alpha"]
    assert body["next"] == 1
    counted = api.get("/api/v1/workloads/count")
    assert assert_conforms(counted, "/api/v1/workloads/count") == {"count": 2}


def test_organization_responses_conform(api: Api) -> None:
    cluster = api.cluster_id()
    clusters = api.get("/api/v1/clusters")
    assert_conforms(clusters, "/api/v1/clusters")
    one = api.get(f"/api/v1/clusters/{cluster}")
    assert assert_conforms(one, "/api/v1/clusters/{clusterUuid}")["uuid"] == cluster

    department = api.post(
        "/api/v1/org-unit/departments", json={"name": "research", "clusterId": cluster}
    )
    assert department.status_code == 201, department.text
    department_id = assert_conforms(department, "/api/v1/org-unit/departments")["id"]
    assert_conforms(api.get("/api/v1/org-unit/departments"), "/api/v1/org-unit/departments")
    assert_conforms(
        api.get(f"/api/v1/org-unit/departments/{department_id}"),
        "/api/v1/org-unit/departments/{departmentId}",
    )

    project = api.post(
        "/api/v1/org-unit/projects",
        json={"name": "vision", "clusterId": cluster, "parentId": department_id, "resources": []},
    )
    assert project.status_code == 201, project.text
    project_id = assert_conforms(project, "/api/v1/org-unit/projects")["id"]
    assert_conforms(api.get("/api/v1/org-unit/projects"), "/api/v1/org-unit/projects")
    got = api.get(f"/api/v1/org-unit/projects/{project_id}")
    assert (
        assert_conforms(got, "/api/v1/org-unit/projects/{projectId}")["parentId"] == department_id
    )

    duplicate = api.post(
        "/api/v1/org-unit/projects",
        json={"name": "vision", "clusterId": cluster, "parentId": department_id, "resources": []},
    )
    assert duplicate.status_code == 409
    assert_conforms(duplicate, "/api/v1/org-unit/projects")


def test_error_responses_conform(api: Api) -> None:
    missing = str(uuid.uuid4())
    for path in (
        DISTRIBUTED,
        WORKLOAD,
        WORKLOAD + "/pods",
        WORKLOAD + "/events",
        WORKLOAD + "/history",
    ):
        response = api.get(path.replace("{workloadId}", missing))
        assert response.status_code == 404
        assert_conforms(response, path)
    unauthenticated = api.client.get("/api/v1/workloads")
    assert unauthenticated.status_code == 401
    assert_conforms(unauthenticated, "/api/v1/workloads")
    invalid = api.post("/api/v1/workloads/distributed", json={"name": "x"})
    assert invalid.status_code == 400
    assert_conforms(invalid, "/api/v1/workloads/distributed")


def test_descriptions_are_stored_and_returned(api: Api) -> None:
    cluster = api.cluster_id()
    department = api.post(
        "/api/v1/org-unit/departments",
        json={"name": "lab", "clusterId": cluster, "description": "the lab's GPUs"},
    )
    assert department.status_code == 201, department.text
    department_id = assert_conforms(department, "/api/v1/org-unit/departments")["id"]
    project = api.post(
        "/api/v1/org-unit/projects",
        json={
            "name": "speech",
            "clusterId": cluster,
            "parentId": department_id,
            "description": "speech recognition",
            "resources": [],
        },
    )
    assert project.status_code == 201, project.text
    project_id = assert_conforms(project, "/api/v1/org-unit/projects")["id"]
    got = api.get(f"/api/v1/org-unit/departments/{department_id}")
    assert assert_conforms(got, "/api/v1/org-unit/departments/{departmentId}")["description"] == (
        "the lab's GPUs"
    )
    got = api.get(f"/api/v1/org-unit/projects/{project_id}")
    assert assert_conforms(got, "/api/v1/org-unit/projects/{projectId}")["description"] == (
        "speech recognition"
    )
    listed = api.get("/api/v1/org-unit/projects", params={"filterBy": "name==speech"}).json()
    assert [p["description"] for p in listed["projects"]] == ["speech recognition"]

    variable = {"name": "HOME_DIR", "value": "/home/me", "description": "Home directory."}
    created = api.create(distributed(cluster, name="described", environmentVariables=[variable]))
    fetched = api.get(f"/api/v1/workloads/distributed/{created['workloadId']}")
    body = assert_conforms(fetched, DISTRIBUTED)
    assert body["spec"]["environmentVariables"] == [variable]


def test_the_pod_list_is_served_as_the_document_says(api: Api) -> None:
    cluster = api.cluster_id()
    first = api.create(sleeping(cluster, name="first", workers=1))["workloadId"]
    api.wait_for(first, {"Running"})
    second = api.create(distributed(cluster, name="second", workers=1))["workloadId"]
    api.wait_for(second, {"Completed"})

    listed = api.get("/api/v1/workloads/pods")
    body = assert_conforms(listed, "/api/v1/workloads/pods")
    assert sorted(p["name"] for p in body["pods"]) == [
        "first-master-0",
        "first-worker-0",
        "second-master-0",
        "second-worker-0",
    ]
    assert all("workloadName" not in p for p in body["pods"])
    full = api.get("/api/v1/workloads/pods", params={"verbosity": "full", "limit": 1})
    body = assert_conforms(full, "/api/v1/workloads/pods")
    assert len(body["pods"]) == 1 and body["next"] == 1
    assert body["pods"][0]["workloadName"] in {"first", "second"}
    assert body["pods"][0]["projectName"] == "default"

    running = api.get("/api/v1/workloads/pods", params={"completed": "false"}).json()["pods"]
    assert sorted(p["name"] for p in running) == ["first-master-0", "first-worker-0"]
    ended = api.get(
        "/api/v1/workloads/pods",
        params={"filterBy": f"workloadId=={second}", "sortBy": "createdAt", "sortOrder": "desc"},
    ).json()["pods"]
    assert {p["workloadId"] for p in ended} == {second} and len(ended) == 2
    bad = api.get("/api/v1/workloads/pods", params={"sortBy": "colour"})
    assert bad.status_code == 400
    assert bad.json()["message"].startswith("sortBy: cannot sort by 'colour'")
    # the pods of one workload are still its own
    one = api.get(f"/api/v1/workloads/{first}/pods").json()["pods"]
    assert {p["workloadId"] for p in one} == {first}


def test_nodes_carry_the_required_fields_and_honour_their_query(api: Api) -> None:
    cluster = api.cluster_id()
    response = api.get(f"/api/v1/clusters/{cluster}/nodes")
    body = assert_conforms(response, "/api/v1/clusters/{clusterUuid}/nodes")
    (node,) = body["nodes"]
    assert node["clusterUuid"] == cluster
    assert node["createdAt"] and node["updatedAt"]
    name = node["name"]
    for params, names in (
        ({"filterBy": f"name=={name}"}, [name]),
        ({"filterBy": "name!=" + name}, []),
        ({"filterBy": "nodePool==default", "sortBy": "name", "sortOrder": "desc"}, [name]),
        ({"nodeName": name}, [name]),
        ({"nodeName": "elsewhere"}, []),
        ({"search": name[:2]}, [name]),
        ({"offset": 1}, []),
        ({"limit": 1}, [name]),
    ):
        answer = api.get(f"/api/v1/clusters/{cluster}/nodes", params=params)
        got = assert_conforms(answer, "/api/v1/clusters/{clusterUuid}/nodes")
        assert [n["name"] for n in got["nodes"]] == names, params
    bad = api.get(f"/api/v1/clusters/{cluster}/nodes", params={"filterBy": "colour==red"})
    assert bad.status_code == 400
    assert bad.json()["message"].startswith("filterBy: cannot filter on 'colour'")


def test_a_method_not_allowed_names_the_allowed_ones(api: Api) -> None:
    missing = str(uuid.uuid4())
    response = api.put(f"/api/v1/workloads/distributed/{missing}", json={})
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, DELETE"
    assert response.json() == {
        "code": 405,
        "message": "method PUT is not allowed on this endpoint; allowed: GET, DELETE",
    }
    assert api.delete("/api/v1/org-unit/projects").headers["Allow"] == "GET, POST"


def test_documented_workload_fields_lockstep_has_no_value_for_are_null(api: Api) -> None:
    cluster = api.cluster_id()
    for name in ("alpha", "beta"):
        api.create(distributed(cluster, name=name))
    for params, names in (
        ({"sortBy": "aiApplicationName"}, ["alpha", "beta"]),
        ({"filterBy": "aiApplicationName==chat"}, []),
        ({"filterBy": "nodepool!=a100"}, ["alpha", "beta"]),
        ({"filterBy": "idleAllocatedGpus>=1"}, []),
    ):
        listed = api.get("/api/v1/workloads", params=params)
        body = assert_conforms(listed, "/api/v1/workloads")
        assert [w["name"] for w in body["workloads"]] == names, params


def _collection(kind: str) -> str:
    return f"/api/v1/workloads/{kind}"


def _one(kind: str) -> str:
    return _collection(kind) + "/{workloadId}"


def _asleep(api: Api, name: str, **spec: Any) -> dict[str, Any]:
    return single_pod(
        api.cluster_id(),
        name=name,
        args=python("import time; time.sleep(600)"),
        terminationGracePeriodSeconds=1,
        **spec,
    )


def _error(response: Any, path: str, status: int) -> str:
    """The response is the documented error of `status`, a Run:ai error body; its message."""
    assert response.status_code == status, response.text
    body = assert_conforms(response, path)
    assert set(body) == {"code", "message"} and body["code"] == status, body
    return str(body["message"])


@pytest.mark.parametrize("kind", SINGLE_POD_KINDS)
def test_single_pod_lifecycle_responses_conform(api: Api, kind: str) -> None:
    collection, one = _collection(kind), _one(kind)
    created = api.post(collection, json=_asleep(api, f"conform-{kind}"))
    assert created.status_code == 202, created.text
    body = assert_conforms(created, collection)
    workload_id = body["workloadId"]
    assert body["name"] == f"conform-{kind}" and body["spec"]["image"] == "python:3.11"
    api.wait_for(workload_id, {"Running"})

    path = one.replace("{workloadId}", workload_id)
    fetched = api.get(path)
    assert fetched.status_code == 200, fetched.text
    got = assert_conforms(fetched, one)
    assert got["workloadId"] == workload_id and got["actualPhase"] == "Running"
    assert got["spec"]["terminationGracePeriodSeconds"] == 1

    generic = api.get(WORKLOAD.replace("{workloadId}", workload_id))
    item = assert_conforms(generic, WORKLOAD)
    assert item["type"] == SINGLE_POD_KINDS[kind] and "distributedFramework" not in item
    listed = api.get("/api/v1/workloads", params={"filterBy": f"type=={SINGLE_POD_KINDS[kind]}"})
    (entry,) = assert_conforms(listed, "/api/v1/workloads")["workloads"]
    assert entry["id"] == workload_id and entry["type"] == SINGLE_POD_KINDS[kind]
    assert "distributedFramework" not in entry
    pods = assert_conforms(api.get(f"/api/v1/workloads/{workload_id}/pods"), WORKLOAD + "/pods")
    assert [p["name"] for p in pods["pods"]] == [f"conform-{kind}-0"]

    for action in ("suspend", "resume"):
        response = api.post(f"{path}/{action}")
        assert response.status_code == 202, response.text
        assert assert_conforms(response, f"{one}/{action}") == ACCEPTED
    deleted = api.delete(path)
    assert deleted.status_code == 202, deleted.text
    assert assert_conforms(deleted, one) == ACCEPTED
    api.wait_gone(workload_id)
    gone = api.get("/api/v1/workloads", params={"deleted": "true"})
    (entry,) = assert_conforms(gone, "/api/v1/workloads")["workloads"]
    assert entry["type"] == SINGLE_POD_KINDS[kind] and entry["deletedAt"]


@pytest.mark.parametrize(
    ("kind", "spec", "field"),
    [
        ("trainings", {"completions": 0}, "spec.completions"),
        ("trainings", {"parallelism": 0}, "spec.parallelism"),
        ("trainings", {"restartPolicy": "Always"}, "spec.restartPolicy"),
        ("trainings", {"image": None}, "spec.image"),
        ("workspaces", {"image": None}, "spec.image"),
    ],
    ids=[
        "training completions 0",
        "training parallelism 0",
        "training restartPolicy Always",
        "training without image",
        "workspace without image",
    ],
)
def test_single_pod_bad_requests_conform(
    api: Api, kind: str, spec: dict[str, Any], field: str
) -> None:
    body = single_pod(api.cluster_id(), name="refused")
    body["spec"] = {k: v for k, v in (body["spec"] | spec).items() if v is not None}
    message = _error(api.post(_collection(kind), json=body), _collection(kind), 400)
    assert field in message, message
    assert api.get("/api/v1/workloads/count").json() == {"count": 0}


def test_a_workspace_may_always_restart(api: Api) -> None:
    """restartPolicy Always is refused for a training only: a workspace's pod may run on."""
    body = single_pod(api.cluster_id(), name="desk", restartPolicy="Always")
    created = api.post(_collection("workspaces"), json=body)
    assert created.status_code == 202, created.text
    assert assert_conforms(created, _collection("workspaces"))["spec"]["restartPolicy"] == "Always"


@pytest.mark.parametrize("kind", SINGLE_POD_KINDS)
def test_single_pod_not_found_and_unauthenticated_responses_conform(api: Api, kind: str) -> None:
    missing = str(uuid.uuid4())
    one = _one(kind)
    for method, suffix in ACTIONS:
        path = one.replace("{workloadId}", missing) + suffix
        message = _error(api.request(method, path), one + suffix, 404)
        assert missing in message, message
        unauthenticated = api.client.request(method, path)
        _error(unauthenticated, one + suffix, 401)
    _error(api.client.post(_collection(kind), json={}), _collection(kind), 401)


def test_an_id_answers_under_its_own_kind_only(api: Api) -> None:
    """A training's id is not a workspace's, nor a distributed workload's; and back."""
    training = api.create(single_pod(api.cluster_id(), name="fit"), kind="trainings")
    workspace = api.create(single_pod(api.cluster_id(), name="desk"), kind="workspaces")
    for workload_id, others in (
        (training["workloadId"], ("workspaces", "distributed")),
        (workspace["workloadId"], ("trainings", "distributed")),
    ):
        for other in others:
            one = f"/api/v1/workloads/{other}/{{workloadId}}"
            for method, suffix in ACTIONS:
                path = one.replace("{workloadId}", workload_id) + suffix
                message = _error(api.request(method, path), one + suffix, 404)
                assert workload_id in message, message
    for kind, created in (("trainings", training), ("workspaces", workspace)):
        got = api.get(_one(kind).replace("{workloadId}", created["workloadId"]))
        assert assert_conforms(got, _one(kind))["workloadId"] == created["workloadId"]


@pytest.mark.parametrize("kind", SINGLE_POD_KINDS)
def test_single_pod_forbidden_responses_conform(api: Api, kind: str) -> None:
    """A researcher of project 1 may neither submit to another project nor touch its
    workloads, whose ids it is answered as unknown ones (404)."""
    other = new_project(api, "elsewhere")
    researcher = app_with_role(api, "researcher", Role.L1_RESEARCHER, "1")
    theirs = api.create(_asleep(api, "theirs", project_id=other), kind=kind)
    one = _one(kind)
    for method, suffix in ACTIONS:
        path = one.replace("{workloadId}", theirs["workloadId"]) + suffix
        _error(researcher.request(method, path), one + suffix, 404)
    sneak = single_pod(api.cluster_id(), name="sneak", project_id=other)
    message = _error(researcher.post(_collection(kind), json=sneak), _collection(kind), 403)
    assert other in message, message
    own = researcher.post(_collection(kind), json=single_pod(api.cluster_id(), name="own"))
    assert own.status_code == 202, own.text
    assert assert_conforms(own, _collection(kind))["createdBy"] == "researcher"
