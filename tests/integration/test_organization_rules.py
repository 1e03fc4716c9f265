"""What projects and departments may be created with: names and requested namespaces that are
Kubernetes names, and `resources[]` as the Run:ai document types it, with quotas that make
sense. A refusal is a 400 naming the field and the rule, and stores nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.api import Api

PROJECTS = "/api/v1/org-unit/projects"
DEPARTMENTS = "/api/v1/org-unit/departments"


def _gpu(**quota: Any) -> list[dict[str, Any]]:
    return [{"nodePool": {"id": "1", "name": "default"}, "gpu": quota}]


BAD_RESOURCES = [
    ("a string", "text", "resources: input should be a valid array"),
    ("a number", [{"gpu": {"deserved": "1"}}], "resources[0].gpu.deserved: must be a number"),
    ("a boolean", [{"gpu": {"deserved": True}}], "resources[0].gpu.deserved: must be a number"),
    (
        "negative",
        _gpu(deserved=-2),
        "resources[0].gpu: deserved must be -1 (unlimited) or greater than or equal to 0",
    ),
    (
        "a limit with unlimited deserved",
        _gpu(deserved=-1, limit=4),
        "resources[0].gpu: limit must be -1 (no limit) when deserved is -1 (unlimited)",
    ),
    ("too large", _gpu(deserved=1e13), "resources[0].gpu: deserved must be at most 1e+12"),
    (
        "an unknown node pool",
        [{"nodePool": {"id": "77"}, "gpu": {"deserved": 1}}],
        "resources[0].nodePool: no node pool '77'; node pools: default",
    ),
    (
        "a node pool twice",
        [{"nodePool": {"id": "1"}}, {"nodePool": {"id": "default"}}],
        "resources[1].nodePool: node pool 'default' is already given by resources[0]",
    ),
    (
        "an id and a name that disagree",
        [{"nodePool": {"id": "1", "name": "a100"}}],
        "resources[0].nodePool: id '1' is the pool 'default', not 'a100'",
    ),
    ("too many entries", [{}] * 65, "resources: list should have at most 64 items"),
    (
        "a negative weight",
        _gpu(deserved=1, overQuotaWeight=-2),
        "resources[0].gpu: overQuotaWeight must be greater than or equal to 0",
    ),
    (
        "a limit below deserved",
        _gpu(deserved=4, limit=2),
        "resources[0].gpu: limit (2) must be -1 (no limit) or at least deserved (4)",
    ),
    (
        "a negative limit other than -1",
        _gpu(deserved=0, limit=-3),
        "resources[0].gpu: limit must be -1 (no limit) or greater than or equal to 0",
    ),
    (
        "memory without units",
        [{"gpu": {"deserved": 0}, "memory": {"deserved": 10}}],
        "resources[0].memory.units: required",
    ),
    (
        "unknown units",
        [{"gpu": {"deserved": 0}, "memory": {"deserved": 10, "units": "TB"}}],
        "resources[0].memory.units: input should be 'Mib', 'MB' or 'GB'",
    ),
    ("an unknown field", [{"gpu": {"deserved": 0, "share": 1}}], "resources[0].gpu.share"),
    ("a node pool without id", [{"nodePool": {"name": "x"}}], "resources[0].nodePool.id"),
]


@pytest.mark.parametrize(
    ("case", "resources", "message"), BAD_RESOURCES, ids=[case for case, _, _ in BAD_RESOURCES]
)
def test_bad_resources_are_refused_naming_the_field(
    api: Api, case: str, resources: Any, message: str
) -> None:
    cluster = api.cluster_id()
    for path, body in (
        (PROJECTS, {"name": "refused", "clusterId": cluster, "resources": resources}),
        (DEPARTMENTS, {"name": "refused", "clusterId": cluster, "resources": resources}),
    ):
        response = api.post(path, json=body)
        assert response.status_code == 400, (case, response.text)
        assert response.json()["code"] == 400
        assert message in response.json()["message"], (case, response.json())
        names = [item["name"] for item in api.get(path).json()[path.rsplit("/", 1)[1]]]
        assert "refused" not in names


def test_good_resources_are_stored_as_sent_with_the_default_gpu_share(api: Api) -> None:
    cluster = api.cluster_id()
    resources = [
        {
            "nodePool": {"id": "1", "name": "default"},
            "gpu": {"deserved": 2, "limit": -1, "overQuotaWeight": 1},
            "cpu": {"deserved": 1000, "limit": 4000},
            "memory": {"deserved": 10, "limit": None, "units": "GB"},
            "priority": "Normal",
        },
        {"cpu": None},
    ]
    created = api.post(
        PROJECTS, json={"name": "quota", "clusterId": cluster, "resources": resources}
    )
    assert created.status_code == 201, created.text
    stored = api.get(f"{PROJECTS}/{created.json()['id']}").json()["resources"]
    assert stored == [
        {
            "nodePool": {"id": "1", "name": "default"},
            "gpu": {"deserved": 2, "limit": -1, "overQuotaWeight": 1},
            "cpu": {"deserved": 1000, "limit": 4000},
            "memory": {"deserved": 10, "limit": None, "units": "GB"},
            "priority": "Normal",
        },
        {"cpu": None, "gpu": {"deserved": 0}},
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", "Vision"),
        ("name", "under_score"),
        ("name", "-leading"),
        ("name", "trailing-"),
        ("name", "a" * 64),
        ("name", ""),
        ("requestedNamespace", "Team.A"),
        ("requestedNamespace", "n" * 64),
    ],
)
def test_names_and_namespaces_must_be_kubernetes_names(api: Api, field: str, value: str) -> None:
    body = {"name": "vision", "clusterId": api.cluster_id(), "resources": [], field: value}
    response = api.post(PROJECTS, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["message"].startswith(f"{field}: "), response.json()
    if field == "name":
        department = api.post(DEPARTMENTS, json={"name": value, "clusterId": api.cluster_id()})
        assert department.status_code == 400, department.text
        assert department.json()["message"].startswith("name: ")
    assert [p["name"] for p in api.get(PROJECTS).json()["projects"]] == ["default"]


def test_a_project_name_leaves_room_for_its_namespace(api: Api) -> None:
    cluster = api.cluster_id()
    long = api.post(PROJECTS, json={"name": "p" * 58, "clusterId": cluster, "resources": []})
    assert long.status_code == 400
    assert "runai-<name>" in long.json()["message"]
    fits = api.post(PROJECTS, json={"name": "p" * 57, "clusterId": cluster, "resources": []})
    assert fits.status_code == 201, fits.text
    assert fits.json()["status"]["namespace"] == "runai-" + "p" * 57


@pytest.mark.parametrize("number", ["1e400", "-1e400", "NaN", "Infinity"])
def test_quotas_that_are_not_finite_are_refused(api: Api, number: str) -> None:
    quota = '[{"gpu": {"deserved": ' + number + "}}]"
    body = '{"name": "huge", "clusterId": "' + api.cluster_id() + '", "resources": ' + quota + "}"
    response = api.post(PROJECTS, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.json()["message"].startswith("resources[0].gpu.deserved: "), response.json()
    assert [p["name"] for p in api.get(PROJECTS).json()["projects"]] == ["default"]
