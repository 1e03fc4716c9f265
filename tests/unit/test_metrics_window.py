"""The metrics routes' window (api/metrics_window.py): its query parameters read under their
camelCase names, their types checked with the route's own, and the window parsed on demand,
naming each parameter that is wrong."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.testclient import TestClient

from lockstep.api.deps import WorkloadId
from lockstep.api.metrics_window import (
    ClusterMetricsWindow,
    ClusterWindowQuery,
    MetricsWindow,
    PooledMetricsWindow,
    PooledWindowQuery,
    WindowQuery,
)
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.metrics import DEFAULT_SAMPLES, Window

START = "2024-01-01T00:00:00Z"
END = "2024-01-01T01:00:00Z"


def _app() -> FastAPI:
    app = FastAPI()

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Any, error: RequestValidationError) -> Any:
        from starlette.responses import JSONResponse

        return JSONResponse([list(item["loc"]) for item in error.errors()], status_code=400)

    @app.get("/plain/{workloadId}")
    async def plain(workload_id: WorkloadId, query: MetricsWindow) -> dict[str, Any]:
        return query.model_dump()

    @app.get("/pooled")
    async def pooled(query: PooledMetricsWindow) -> dict[str, Any]:
        return query.model_dump()

    @app.get("/cluster")
    async def cluster(query: ClusterMetricsWindow) -> dict[str, Any]:
        return query.model_dump()

    return app


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(_app()) as client:
        yield client


def test_the_parameters_are_read_under_their_camel_case_names(client: TestClient) -> None:
    answer = client.get(
        "/plain/00000000-0000-0000-0000-000000000001",
        params=[
            ("metricType", "GPU_UTILIZATION,CPU_USAGE_CORES"),
            ("metricType", "CPU_MEMORY_USAGE_BYTES"),
            ("start", START),
            ("end", END),
            ("numberOfSamples", "7"),
            ("number_of_samples", "9"),
        ],
    )
    assert answer.status_code == 200
    assert answer.json() == {
        "metric_type": ["GPU_UTILIZATION,CPU_USAGE_CORES", "CPU_MEMORY_USAGE_BYTES"],
        "start": START,
        "end": END,
        "number_of_samples": 7,
    }


def test_the_pooled_and_the_cluster_windows_add_their_own_parameters(client: TestClient) -> None:
    pooled = client.get("/pooled", params={"nodepoolName": "default", "start": START})
    assert pooled.json() == {
        "metric_type": None,
        "start": START,
        "end": None,
        "number_of_samples": None,
        "nodepool_name": "default",
    }
    cluster = client.get("/cluster", params={"groupBy": "Nodepool", "nodepoolName": "a"})
    assert cluster.json()["group_by"] == "Nodepool"
    assert cluster.json()["nodepool_name"] == "a"


def test_types_are_checked_after_the_path_like_the_routes_own_parameters(
    client: TestClient,
) -> None:
    answer = client.get("/plain/not-a-uuid", params={"numberOfSamples": "many"})
    assert answer.status_code == 400
    assert answer.json() == [["path", "workloadId"], ["query", "numberOfSamples"]]


def test_the_document_lists_the_parameters_in_their_order() -> None:
    document = _app().openapi()["paths"]
    names = {
        path: [parameter["name"] for parameter in item["get"]["parameters"]]
        for path, item in document.items()
    }
    assert names == {
        "/plain/{workloadId}": ["workloadId", "metricType", "start", "end", "numberOfSamples"],
        "/pooled": ["metricType", "start", "end", "numberOfSamples", "nodepoolName"],
        "/cluster": ["metricType", "start", "end", "numberOfSamples", "groupBy", "nodepoolName"],
    }


def test_a_window_is_parsed_with_the_default_number_of_samples() -> None:
    window = WindowQuery.model_validate({"start": START, "end": END}).window()
    assert window == Window(
        datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, 1, tzinfo=UTC), DEFAULT_SAMPLES
    )


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({}, ["start", "end"]),
        ({"start": START, "end": "yesterday"}, ["end"]),
        ({"start": END, "end": START}, ["end"]),
        ({"start": START, "end": END, "numberOfSamples": -1}, ["numberOfSamples"]),
        ({"start": " ", "numberOfSamples": 100_000}, ["start", "end", "numberOfSamples"]),
    ],
)
def test_a_bad_window_names_each_parameter_that_is_wrong(
    query: dict[str, Any], named: list[str]
) -> None:
    for model in (WindowQuery, PooledWindowQuery, ClusterWindowQuery):
        with pytest.raises(InvalidRequest) as refused:
            model.model_validate(query).window()
        assert [violation.field for violation in refused.value.violations] == named
