"""Quotas through the API on a server with nodes in the pools a100 and h100: node pools (those
seen on nodes listed with `default`), projects' and departments' `resources[]` naming pools by
id or name, PUT and PATCH of a project's resources, deletion refused while something depends
on the object (409 naming it), and the quota `status` of what admitted workloads hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockstep.config import NodeSettings, Settings
from lockstep.domain.quotas import unbounded_resources
from tests.conftest import make_settings
from tests.support.api import Api, poll
from tests.support.requests import sleeping

PROJECTS = "/api/v1/org-unit/projects"
DEPARTMENTS = "/api/v1/org-unit/departments"
POOLS = "/api/v1/node-pools"


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    configured = make_settings(tmp_path / "data", database_url)
    nodes = [
        NodeSettings(name="alpha", pool="a100", cpu_cores=8, memory="16Gi", gpus=2),
        NodeSettings(name="beta", pool="h100", cpu_cores=8, memory="16Gi", gpus=4),
    ]
    return configured.model_copy(update={"nodes": nodes})


def _pools(api: Api) -> dict[str, dict[str, Any]]:
    response = api.get(POOLS)
    assert response.status_code == 200, response.text
    return {p["name"]: p for p in response.json()["nodepools"]}


def _project(api: Api, name: str, resources: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    body = {"name": name, "clusterId": api.cluster_id(), "resources": resources, **extra}
    response = api.post(PROJECTS, json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_the_pools_of_the_nodes_are_listed_with_the_default_pool(api: Api) -> None:
    pools = _pools(api)
    assert set(pools) == {"default", "a100", "h100"}
    assert pools["default"]["isDefault"] is True
    assert pools["default"]["phase"] == "Empty"
    assert pools["a100"]["isDefault"] is False
    assert pools["a100"]["phase"] == "Ready"
    assert pools["a100"]["status"]["nodes"] == ["alpha"]
    assert pools["h100"]["capacity"] == {"gpus": 4, "cpuCores": "8", "memory": "16Gi"}
    assert api.get(f"{POOLS}/count").json() == {"count": 3}
    one = api.get(f"{POOLS}/{pools['h100']['id']}")
    assert one.status_code == 200 and one.json()["name"] == "h100"
    assert api.get(f"{POOLS}/9999").status_code == 404


def test_a_pool_is_created_updated_and_deleted_but_not_the_default_one(api: Api) -> None:
    body = {
        "name": "v100",
        "labelKey": "node-type",
        "labelValue": "v100",
        "clusterId": api.cluster_id(),
    }
    created = api.post(POOLS, json=body)
    assert created.status_code == 201, created.text
    pool = created.json()
    assert (pool["phase"], pool["status"]["nodes"]) == ("Empty", [])
    assert api.post(POOLS, json=body).status_code == 409
    bad = api.post(POOLS, json=body | {"name": "x2", "labelKey": "bad key"})
    assert bad.status_code == 400 and "labelKey" in bad.json()["message"]
    patched = api.request("PATCH", f"{POOLS}/{pool['id']}", json={"labelValue": "type-v"})
    assert patched.status_code == 200, patched.text
    assert (patched.json()["labelKey"], patched.json()["labelValue"]) == ("node-type", "type-v")
    default = _pools(api)["default"]
    refused = api.delete(f"{POOLS}/{default['id']}")
    assert refused.status_code == 409 and "default" in refused.json()["message"]
    project = _project(api, "uses-v100", [{"nodePool": {"id": "v100"}, "gpu": {"deserved": 1}}])
    in_use = api.delete(f"{POOLS}/{pool['id']}")
    assert in_use.status_code == 409, in_use.text
    assert "project 'uses-v100'" in in_use.json()["message"]
    assert api.delete(f"{PROJECTS}/{project['id']}").status_code == 204
    assert api.delete(f"{POOLS}/{pool['id']}").status_code == 204
    assert "v100" not in _pools(api)


def test_resources_name_pools_by_id_or_name_and_are_stored_with_both(api: Api) -> None:
    pools = _pools(api)
    project = _project(
        api,
        "vision",
        [
            {"nodePool": {"id": "a100"}, "gpu": {"deserved": 1, "limit": 2}},
            {"nodePool": {"id": pools["h100"]["id"]}, "gpu": {"deserved": 4}},
        ],
    )
    assert [r["nodePool"] for r in project["resources"]] == [
        {"id": pools["a100"]["id"], "name": "a100"},
        {"id": pools["h100"]["id"], "name": "h100"},
    ]


def test_patch_merges_pool_by_pool_and_put_replaces(api: Api) -> None:
    project = _project(
        api, "merge", [{"nodePool": {"id": "a100"}, "gpu": {"deserved": 1, "overQuotaWeight": 2}}]
    )
    path = f"{PROJECTS}/{project['id']}/resources"
    patched = api.request(
        "PATCH",
        path,
        json=[
            {"nodePool": {"id": "a100"}, "gpu": {"limit": 2}},
            {"nodePool": {"name": "h100", "id": "h100"}, "cpu": {"deserved": 1000}},
        ],
    )
    assert patched.status_code == 200, patched.text
    by_pool = {r["nodePool"]["name"]: r for r in patched.json()}
    assert by_pool["a100"]["gpu"] == {"deserved": 1, "overQuotaWeight": 2, "limit": 2}
    assert by_pool["h100"]["cpu"] == {"deserved": 1000}
    below = api.request("PATCH", path, json=[{"nodePool": {"id": "a100"}, "gpu": {"deserved": 3}}])
    assert below.status_code == 400, below.text
    assert "resources[0].gpu" in below.json()["message"] and "at least deserved" in below.text
    put = api.put(path, json=[{"nodePool": {"id": "h100"}, "gpu": {"deserved": 2}}])
    assert put.status_code == 200, put.text
    stored = api.get(f"{PROJECTS}/{project['id']}").json()["resources"]
    assert [r["nodePool"]["name"] for r in stored] == ["h100"]
    assert stored[0]["gpu"] == {"deserved": 2}
    refused = api.put(path, json=[{"nodePool": {"id": "nope"}, "gpu": {"deserved": 1}}])
    assert refused.status_code == 400 and "resources[0].nodePool" in refused.json()["message"]
    assert api.get(f"{PROJECTS}/{project['id']}").json()["resources"] == stored


def test_put_project_and_department_and_counting(api: Api) -> None:
    before = api.get(f"{PROJECTS}/count").json()["count"]
    project = _project(api, "put-me", [])
    assert api.get(f"{PROJECTS}/count").json()["count"] == before + 1
    assert api.get(f"{PROJECTS}/count", params={"filterBy": "name==put-me"}).json() == {"count": 1}
    body = {
        "description": "quota",
        "resources": [{"nodePool": {"id": "a100"}, "gpu": {"deserved": 1}}],
    }
    updated = api.put(f"{PROJECTS}/{project['id']}", json=body)
    assert updated.status_code == 200, updated.text
    assert updated.json()["description"] == "quota"
    assert updated.json()["resources"][0]["nodePool"]["name"] == "a100"
    department = api.post(DEPARTMENTS, json={"name": "research", "clusterId": api.cluster_id()})
    assert department.status_code == 201, department.text
    path = f"{DEPARTMENTS}/{department.json()['id']}"
    changed = api.put(
        path, json={"resources": [{"nodePool": {"id": "h100"}, "gpu": {"deserved": 4}}]}
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["resources"][0]["nodePool"]["name"] == "h100"
    assert api.put(f"{PROJECTS}/424242", json={"resources": []}).status_code == 404


def test_deleting_refuses_live_workloads_and_departments_with_projects(api: Api) -> None:
    department = api.post(DEPARTMENTS, json={"name": "team", "clusterId": api.cluster_id()}).json()
    project = _project(
        api,
        "busy",
        [{"nodePool": {"id": "a100"}, "gpu": {"deserved": 2}}],
        parentId=department["id"],
    )
    refused = api.delete(f"{DEPARTMENTS}/{department['id']}")
    assert refused.status_code == 409 and "busy" in refused.json()["message"]
    workload = api.create(
        sleeping(
            api.cluster_id(),
            name="holds",
            project_id=project["id"],
            workers=1,
            compute={"gpuDevicesRequest": 1, "cpuCoreRequest": 0.5},
            nodePools=["a100"],
        )
    )
    workload_id = str(workload["workloadId"])
    api.wait_for(workload_id, {"Running"})

    def allocated() -> dict[str, Any] | None:
        status = api.get(f"{PROJECTS}/{project['id']}").json()["status"]
        return status if status["quotaStatus"]["allocated"]["gpu"] == 2 else None

    status = poll(allocated, timeout=60.0, what="2 GPUs allocated to the project")
    a100 = {s["nodePoolName"]: s for s in status["nodePoolQuotaStatuses"]}["a100"]
    assert a100["allocated"] == {"gpu": 2, "cpu": 1000, "memory": 0}
    assert a100["requested"]["gpu"] == 2
    assert a100["allocatedNonPreemptible"]["gpu"] == 0
    of_department = api.get(f"{DEPARTMENTS}/{department['id']}").json()["status"]
    assert of_department["quotaStatus"]["allocated"]["gpu"] == 2
    busy = api.delete(f"{PROJECTS}/{project['id']}")
    assert busy.status_code == 409, busy.text
    assert "holds" in busy.json()["message"]
    assert api.delete(f"/api/v1/workloads/distributed/{workload_id}").status_code == 202
    api.wait_gone(workload_id)
    assert api.delete(f"{PROJECTS}/{project['id']}").status_code == 204
    assert api.get(f"{PROJECTS}/{project['id']}").status_code == 404
    assert api.delete(f"{DEPARTMENTS}/{department['id']}").status_code == 204
    assert api.get(f"{DEPARTMENTS}/{department['id']}").status_code == 404


def test_the_default_project_is_unlimited(api: Api) -> None:
    default = next(p for p in api.get(PROJECTS).json()["projects"] if p["name"] == "default")
    assert default["resources"] == unbounded_resources()
