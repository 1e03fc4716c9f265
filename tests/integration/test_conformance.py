"""Every response of every endpoint lockstep serves validates against the Run:ai document."""

from __future__ import annotations

import uuid

from tests.support.api import Api
from tests.support.contract import assert_conforms
from tests.support.requests import distributed, sleeping

WORKLOAD = "/api/v1/workloads/{workloadId}"
DISTRIBUTED = "/api/v1/workloads/distributed/{workloadId}"


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
