"""`GET /api/v1/scheduling/queue` and a waiting workload's `queuePosition`, through the API of
an in-process server: each project's shares as the last cycle found them and its waiting
workloads in admission order, shown only to those who may read the project's workloads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockstep.config import Settings
from lockstep.domain.identity import Role
from lockstep.domain.quotas import Resource
from lockstep.reconciler.shares import usage_from_store
from lockstep.store.database import Database
from tests.conftest import make_settings
from tests.support.access import app_with_role
from tests.support.api import Api, poll
from tests.support.requests import sleeping

ONE_CORE = {"cpuCoreRequest": 0.5}
"""Each workload here is two pods of half a core: one core in all."""


def capped_project(api: Api, name: str, millicores: int) -> str:
    pools = api.get("/api/v1/node-pools").json()["nodepools"]
    pool = next(p for p in pools if p["name"] == "default")
    body = {
        "name": name,
        "clusterId": api.cluster_id(),
        "resources": [
            {
                "nodePool": {"id": pool["id"], "name": "default"},
                "gpu": {"deserved": 0},
                "cpu": {"deserved": 0, "limit": millicores},
            }
        ],
    }
    response = api.post("/api/v1/org-unit/projects", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def submit(api: Api, project_id: str, name: str) -> str:
    body = sleeping(api.cluster_id(), name=name, project_id=project_id, workers=1, compute=ONE_CORE)
    return str(api.create(body)["workloadId"])


def queue_of(api: Api, project_id: str) -> dict[str, Any]:
    response = api.get("/api/v1/scheduling/queue", params={"projectId": project_id})
    assert response.status_code == 200, response.text
    (only,) = response.json()["projects"]
    return dict(only)


def test_a_project_queue_shows_its_shares_and_its_waiting_workloads_in_order(api: Api) -> None:
    alpha = capped_project(api, "alpha", 1000)
    beta = capped_project(api, "beta", 1000)
    first = submit(api, alpha, "first")
    api.wait_for(first, {"Running"})
    second, third = submit(api, alpha, "second"), submit(api, alpha, "third")

    def waiting() -> dict[str, Any] | None:
        queue = queue_of(api, alpha)
        names = [w["name"] for w in queue["waiting"]]
        pools = queue["nodePools"]
        # The shares are those of the last cycle: the one that saw both waiting.
        seen_both = bool(pools) and pools[0]["cpu"]["requested"] == 3000
        return queue if names == ["second", "third"] and seen_both else None

    queue = poll(waiting, timeout=30, what="alpha's queue with two waiting")
    assert [w["position"] for w in queue["waiting"]] == [1, 2]
    assert queue["waiting"][0]["phaseReason"] == "OverLimit"
    assert "limit" in queue["waiting"][0]["phaseMessage"]
    (pool,) = queue["nodePools"]
    assert pool["nodePool"] == "default"
    assert pool["cpu"]["allocated"] == 1000 and pool["cpu"]["deserved"] == 0
    # Requested: what it holds and what its waiting ones ask (3 cores).
    assert api.workload(second)["queuePosition"] == 1
    assert api.workload(third)["queuePosition"] == 2
    assert "queuePosition" not in api.workload(first)

    # A researcher of alpha sees alpha's queue, not beta's.
    researcher = app_with_role(api, "alpha-researcher", Role.L1_RESEARCHER, alpha)
    seen = researcher.get("/api/v1/scheduling/queue").json()["projects"]
    assert [p["projectName"] for p in seen] == ["alpha"]
    refused = researcher.get("/api/v1/scheduling/queue", params={"projectId": beta})
    assert refused.status_code == 404, refused.text
    assert set(refused.json()) >= {"code", "message"}


def test_a_bad_project_filter_is_refused_naming_it(api: Api) -> None:
    response = api.get("/api/v1/scheduling/queue", params={"projectId": "alpha"})
    assert response.status_code == 400, response.text
    assert "projectId" in response.json()["message"]
    assert api.get("/api/v1/scheduling/queue", headers={"Authorization": ""}).status_code == 401


class TestTimeAware:
    """With time-aware fair share on, what a project held counts as its recent usage, kept
    with its shares (so that a restart keeps it)."""

    @pytest.fixture
    def settings(self, tmp_path: Path, database_url: str) -> Settings:
        configured = make_settings(tmp_path / "data", database_url)
        return configured.model_copy(
            update={"time_aware_fair_share": True, "fair_share_half_life_seconds": 0.5}
        )

    def test_recent_usage_is_kept_with_the_shares(self, api: Api, settings: Settings) -> None:
        alpha = capped_project(api, "alpha", 2000)
        holder = submit(api, alpha, "holder")
        api.wait_for(holder, {"Running"})
        # The cycle that admits the next one sees what `holder` has held since the last.
        api.wait_for(submit(api, alpha, "next"), {"Running"})

        def used() -> float | None:
            pools = queue_of(api, alpha)["nodePools"]
            recent = float(pools[0]["cpu"].get("recentUsage", 0)) if pools else 0.0
            return recent if recent > 0 else None

        recent = poll(used, timeout=30, what="alpha's recent CPU usage")
        assert 0 < recent <= 1
        assert settings.database_url is not None
        database = Database(settings.database_url)
        try:
            with database.read() as unit:
                stored = usage_from_store(unit.scheduling.shares())
        finally:
            database.dispose()
        assert stored[alpha]["default"][Resource.CPU] == recent
