"""A small HTTP client for tests: a bearer token, JSON in and out, waiting with deadlines."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import httpx

T = TypeVar("T")

ADMIN_ID = "admin"
ADMIN_SECRET = "admin-secret-for-tests"


class Api:
    def __init__(self, client: httpx.Client, token: str | None = None) -> None:
        self.client = client
        self.token = token

    @classmethod
    def login(
        cls, client: httpx.Client, client_id: str = ADMIN_ID, secret: str = ADMIN_SECRET
    ) -> Api:
        response = client.post(
            "/api/v1/token",
            json={"grantType": "app_token", "AppId": client_id, "AppSecret": secret},
        )
        assert response.status_code == 200, response.text
        return cls(client, response.json()["accessToken"])

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {**self.headers(), **kwargs.pop("headers", {})}
        return self.client.request(method, path, headers=headers, **kwargs)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)

    def cluster_id(self) -> str:
        clusters = self.get("/api/v1/clusters").json()
        return str(clusters[0]["uuid"])

    def create(self, body: dict[str, Any], *, kind: str = "distributed") -> dict[str, Any]:
        """Create a workload of `kind` (its collection: distributed, trainings, workspaces)."""
        response = self.post(f"/api/v1/workloads/{kind}", json=body)
        assert response.status_code == 202, response.text
        created: dict[str, Any] = response.json()
        return created

    def workload(self, workload_id: str) -> dict[str, Any]:
        response = self.get(f"/api/v1/workloads/{workload_id}")
        assert response.status_code == 200, response.text
        item: dict[str, Any] = response.json()
        return item

    def wait_gone(self, workload_id: str, *, timeout: float = 60.0) -> None:
        """Poll until the workload is deleted (GET answers 404); fail at the deadline."""

        def gone() -> bool | None:
            response = self.get(f"/api/v1/workloads/{workload_id}")
            return True if response.status_code == 404 else None

        poll(gone, timeout=timeout, what=f"workload {workload_id} to be deleted")

    def wait_for(
        self,
        workload_id: str,
        phases: Iterable[str],
        *,
        timeout: float = 60.0,
    ) -> dict[str, Any]:
        """Poll the workload until its phase is one of `phases`; fail at the deadline."""
        wanted = set(phases)
        seen: list[str] = []

        def reached() -> dict[str, Any] | None:
            item = self.workload(workload_id)
            if not seen or seen[-1] != item["phase"]:
                seen.append(item["phase"])
            return item if item["phase"] in wanted else None

        return poll(reached, timeout=timeout, what=lambda: f"phase in {sorted(wanted)}; saw {seen}")


def poll(
    check: Callable[[], T | None],
    *,
    timeout: float,
    what: Callable[[], str] | str,
    every: float = 0.05,
) -> T:
    """Call `check` until it returns something, or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result is not None:
            return result
        if time.monotonic() >= deadline:
            description = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout:g}s waiting for {description}")
        time.sleep(every)
