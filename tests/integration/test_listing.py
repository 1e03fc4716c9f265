"""`GET /api/v1/workloads` and `/count`: filterBy with all eight operators, sortBy and
sortOrder, offset/limit with `next`, search and deleted, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.api import Api, poll
from tests.support.requests import distributed

NAMES = ["alpha-train", "beta-train", "gamma-eval", "delta-eval", "epsilon-train"]


def create_five(api: Api) -> Api:
    """Five workloads that never start (they ask for more CPUs than exist)."""
    cluster = api.cluster_id()
    for index, name in enumerate(NAMES):
        framework = "PyTorch" if index % 2 == 0 else "TF"
        api.create(
            distributed(cluster, name=name, framework=framework, compute={"cpuCoreRequest": 100000})
        )
    return api


@pytest.fixture(scope="module")
def listed(module_api: Api) -> Api:
    """Shared by the read-only tests of this module."""
    return create_five(module_api)


def names(api: Api, **params: Any) -> list[str]:
    response = api.get("/api/v1/workloads", params=params)
    assert response.status_code == 200, response.text
    return [w["name"] for w in response.json()["workloads"]]


def count(api: Api, **params: Any) -> int:
    response = api.get("/api/v1/workloads/count", params=params)
    assert response.status_code == 200, response.text
    return int(response.json()["count"])


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("name==beta-train", ["beta-train"]),
        ("name!=beta-train", ["alpha-train", "delta-eval", "epsilon-train", "gamma-eval"]),
        ("name=@eval", ["delta-eval", "gamma-eval"]),
        ("name!@train", ["delta-eval", "gamma-eval"]),
        ("name=^gam", ["gamma-eval"]),
        ("name=$-train", ["alpha-train", "beta-train", "epsilon-train"]),
        ("name<=beta-train", ["alpha-train", "beta-train"]),
        ("name>=epsilon-train", ["epsilon-train", "gamma-eval"]),
        ("distributedFramework==TF", ["beta-train", "delta-eval"]),
        ("projectName==default", NAMES),
        ("submittedBy==admin", NAMES),
        ("createdAt>=2000-01-01T00:00:00Z", NAMES),
        ("createdAt<=2000-01-01T00:00:00Z", []),
    ],
)
def test_filter_operators(listed: Api, expression: str, expected: list[str]) -> None:
    assert sorted(names(listed, filterBy=expression, sortBy="name")) == sorted(expected)
    assert count(listed, filterBy=expression) == len(expected)


def test_filters_combine(listed: Api) -> None:
    assert names(listed, filterBy="name=$-train,distributedFramework==PyTorch", sortBy="name") == [
        "alpha-train",
        "epsilon-train",
    ]
    repeated = listed.get(
        "/api/v1/workloads",
        params=[("filterBy", "name=@a"), ("filterBy", "distributedFramework==TF")],
    )
    assert sorted(w["name"] for w in repeated.json()["workloads"]) == ["beta-train", "delta-eval"]


def test_sort_and_pages(listed: Api) -> None:
    assert names(listed, sortBy="name", sortOrder="desc") == sorted(NAMES, reverse=True)
    assert names(listed) == NAMES  # default: oldest first
    first = listed.get("/api/v1/workloads", params={"sortBy": "name", "limit": 2}).json()
    assert [w["name"] for w in first["workloads"]] == ["alpha-train", "beta-train"]
    assert first["next"] == 2
    second = listed.get(
        "/api/v1/workloads", params={"sortBy": "name", "limit": 2, "offset": first["next"]}
    ).json()
    assert [w["name"] for w in second["workloads"]] == ["delta-eval", "epsilon-train"]
    last = listed.get(
        "/api/v1/workloads", params={"sortBy": "name", "limit": 2, "offset": second["next"]}
    ).json()
    assert [w["name"] for w in last["workloads"]] == ["gamma-eval"]
    assert "next" not in last


def test_every_documented_sort_field_and_offset_is_accepted(listed: Api) -> None:
    """The Run:ai document's `sortBy` values are all accepted: `idleGpus`, worked out at each
    request, keeps the order of creation (newest first with `desc`), as the fields lockstep
    has no value for do; its `offset` is a 32-bit integer with no minimum: a negative one
    starts at the first item."""
    assert names(listed, sortBy="idleGpus") == NAMES
    assert names(listed, sortBy="idleGpus", sortOrder="desc") == NAMES[::-1]
    assert names(listed, sortBy="nodepool") == NAMES
    page = listed.get("/api/v1/workloads", params={"offset": -3, "limit": 2}).json()
    assert [w["name"] for w in page["workloads"]] == NAMES[:2]
    assert page["next"] == 2
    assert names(listed, offset=-(2**31)) == NAMES
    assert names(listed, offset=2**31 - 1) == []


def test_search_matches_names(listed: Api) -> None:
    assert sorted(names(listed, search="eval")) == ["delta-eval", "gamma-eval"]
    assert count(listed, search="train") == 3


def test_deleted_lists_only_deleted(api: Api) -> None:
    listed = create_five(api)
    target = next(
        w for w in listed.get("/api/v1/workloads").json()["workloads"] if w["name"] == "gamma-eval"
    )
    assert listed.delete(f"/api/v1/workloads/distributed/{target['id']}").status_code == 202
    poll(
        lambda: True if count(listed, deleted="true") == 1 else None,
        timeout=30,
        what="the deletion",
    )
    assert names(listed, deleted="true") == ["gamma-eval"]
    assert "gamma-eval" not in names(listed)
    assert count(listed) == 4


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"filterBy": "colour==red"}, "filterBy: cannot filter on 'colour'"),
        ({"filterBy": "name~~x"}, "filterBy: 'name~~x' is not <field><operator><value>"),
        (
            {"filterBy": "createdAt>=yesterday"},
            "filterBy: createdAt: 'yesterday' is not an ISO-8601",
        ),
        ({"sortBy": "colour"}, "sortBy: cannot sort by 'colour'"),
        ({"sortOrder": "sideways"}, "sortOrder"),
        ({"limit": 0}, "limit: must be between 1 and 500"),
        ({"limit": 501}, "limit: must be between 1 and 500"),
        ({"offset": 2**31}, "offset: must be less than or equal to 2147483647 (a 32-bit"),
        ({"offset": "many"}, "offset"),
        ({"deleted": "perhaps"}, "deleted"),
    ],
)
def test_bad_list_parameters(listed: Api, params: dict[str, Any], message: str) -> None:
    response = listed.get("/api/v1/workloads", params=params)
    assert response.status_code == 400
    assert response.json()["code"] == 400
    assert message in response.json()["message"]
