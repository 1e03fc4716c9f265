"""Quotas decide who runs, end to end: a real `lockstep serve` with virtual GPU nodes
(LOCKSTEP_NODES; no real GPU is used), projects created with quotas through the API, and
workloads whose pods are real processes. Each workload here is two pods of 2 GPUs (4 GPUs).

(a) two projects deserving 8 of 16 GPUs, one filling the cluster, then the other submitting:
    the second gets its share back by reclaim, the first keeps the rest; (b) over-quota split
    2:1 by weight; (c) a limit held on an idle cluster, `OverLimit` shown; (d) non-preemptible
    workloads held to deserved, `NonPreemptibleOverQuota` shown; (e) a quota change at run
    time; (f) the same decisions after a restart of lockstep.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import running
from tests.support.api import Api, poll
from tests.support.requests import sleeping
from tests.support.server import LiveServer

GPUS_EACH = 4
"""What one workload of this test holds: two pods of 2 GPUs."""


def nodes(count: int, gpus: int) -> str:
    return json.dumps(
        [
            {"name": f"gpu-{i}", "cpu_cores": 64, "memory": "256Gi", "gpus": gpus}
            for i in range(count)
        ]
    )


@pytest.fixture
def cluster_16(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    """Two virtual nodes of 8 GPUs."""
    settings = {"NODES": nodes(2, 8)}
    with running(LiveServer(tmp_path / "data", sqlite_url, settings=settings)) as server:
        yield server


@pytest.fixture
def cluster_12(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    """Three virtual nodes of 4 GPUs."""
    settings = {"NODES": nodes(3, 4)}
    with running(LiveServer(tmp_path / "data", sqlite_url, settings=settings)) as server:
        yield server


def default_pool(api: Api) -> dict[str, str]:
    pools = api.get("/api/v1/node-pools").json()["nodepools"]
    pool = next(p for p in pools if p["name"] == "default")
    return {"id": str(pool["id"]), "name": "default"}


def project(api: Api, name: str, **gpu: float) -> str:
    """A project with a GPU quota in the default pool (`deserved`, `limit`, `overQuotaWeight`)."""
    body = {
        "name": name,
        "clusterId": api.cluster_id(),
        "resources": [{"nodePool": default_pool(api), "gpu": gpu}],
    }
    response = api.post("/api/v1/org-unit/projects", json=body)
    assert response.status_code in (200, 201), response.text
    return str(response.json()["id"])


def submit(api: Api, project_id: str, name: str, **spec: Any) -> str:
    body = sleeping(
        api.cluster_id(),
        name=name,
        project_id=project_id,
        workers=1,
        compute={"gpuDevicesRequest": GPUS_EACH // 2},
        **spec,
    )
    return str(api.create(body)["workloadId"])


def phases(api: Api, ids: dict[str, str]) -> dict[str, str]:
    return {name: api.workload(workload_id)["phase"] for name, workload_id in ids.items()}


def settle(api: Api, ids: dict[str, str], wanted: dict[str, str], *, timeout: float = 60) -> None:
    """Poll until the named workloads are in the wanted phases."""

    def reached() -> bool | None:
        return phases(api, ids) == wanted or None

    def seen() -> str:
        now = {name: api.workload(i) for name, i in ids.items()}
        return f"phases {wanted}; saw " + "; ".join(
            f"{name} {w['phase']} ({w['phaseMessage']})" for name, w in now.items()
        )

    poll(reached, timeout=timeout, what=seen)


def reasons(api: Api, workload_id: str) -> list[dict[str, Any]]:
    events = api.get(f"/api/v1/workloads/{workload_id}/events").json()["events"]
    return [e for e in events if e["reason"] in ("Reclaimed", "Preempted")]


def pending_with(api: Api, workload_id: str, reason: str) -> dict[str, Any]:
    def explained() -> dict[str, Any] | None:
        item = api.workload(workload_id)
        return item if item.get("phaseReason") == reason else None

    return poll(explained, timeout=30, what=f"{workload_id} pending with {reason}")


def test_reclaim_gives_a_project_its_deserved_share_and_survives_a_restart(
    cluster_16: LiveServer,
) -> None:
    api = cluster_16.api()
    team_a = project(api, "team-a", deserved=8)
    team_b = project(api, "team-b", deserved=8)
    ids = {}
    for i in range(4):
        ids[f"a{i}"] = submit(api, team_a, f"a{i}")
        api.wait_for(ids[f"a{i}"], {"Running"})  # started one after the other: a3 is newest
    # team-a holds all 16 GPUs: 8 deserved and 8 lent while nobody else asks.
    ids |= {"b0": submit(api, team_b, "b0"), "b1": submit(api, team_b, "b1")}
    wanted = {"a0": "Running", "a1": "Running", "a2": "Pending", "a3": "Pending"}
    settle(api, ids, {**wanted, "b0": "Running", "b1": "Running"}, timeout=90)
    # The most recently started of team-a's over-quota workloads made room, each told why.
    for victim in ("a2", "a3"):
        told = reasons(api, ids[victim])
        assert [e["reason"] for e in told] == ["Reclaimed"], told
        assert "team-b" in told[0]["message"], told
    assert reasons(api, ids["a0"]) == [] and reasons(api, ids["a1"]) == []
    first = api.workload(ids["a2"])["phaseMessage"]
    assert first.startswith("project team-a is over its GPU quota in pool default"), first
    assert api.workload(ids["a3"])["phaseMessage"] == "queued behind workload a2"
    queue = api.get("/api/v1/scheduling/queue", params={"projectId": team_a}).json()
    (only,) = queue["projects"]
    assert [w["name"] for w in only["waiting"]] == ["a2", "a3"]
    assert [w["position"] for w in only["waiting"]] == [1, 2]
    (pool,) = only["nodePools"]
    assert pool["gpu"]["deserved"] == 8 and pool["gpu"]["allocated"] == 8

    # (f) After a restart the decisions hold: nothing else is reclaimed, nobody moves.
    cluster_16.stop()
    cluster_16.start()
    api = cluster_16.api()
    settle(api, ids, {**wanted, "b0": "Running", "b1": "Running"})
    assert all(reasons(api, ids[name]) == [] for name in ("a0", "a1", "b0", "b1"))
    assert all(len(reasons(api, ids[name])) == 1 for name in ("a2", "a3"))


def test_over_quota_is_split_by_weight(cluster_12: LiveServer) -> None:
    api = cluster_12.api()
    heavy = project(api, "heavy", deserved=0, overQuotaWeight=2)
    light = project(api, "light", deserved=0, overQuotaWeight=1)
    ids = {f"h{i}": submit(api, heavy, f"h{i}") for i in range(3)}
    settle(api, ids, dict.fromkeys(ids, "Running"))
    ids |= {f"l{i}": submit(api, light, f"l{i}") for i in range(3)}

    # 12 GPUs, weights 2:1 → 8 for heavy (2 workloads), 4 for light (1 workload).
    def split() -> tuple[int, int] | None:
        now = phases(api, ids)
        running = [name[0] for name, phase in now.items() if phase == "Running"]
        counts = (running.count("h"), running.count("l"))
        return counts if counts == (2, 1) else None

    poll(split, timeout=90, what="heavy holding 8 GPUs and light 4")


def test_a_limit_holds_on_an_idle_cluster_and_a_quota_change_takes_effect(
    cluster_16: LiveServer,
) -> None:
    api = cluster_16.api()
    capped = project(api, "capped", deserved=0, limit=8)
    ids = {f"c{i}": submit(api, capped, f"c{i}") for i in range(3)}
    settle(api, ids, {"c0": "Running", "c1": "Running", "c2": "Pending"})
    waiting = pending_with(api, ids["c2"], "OverLimit")
    (message,) = waiting["pendingSchedulingMessages"]
    assert message["phaseReason"] == "OverLimit" and message["nodePool"] == "default"
    assert message["orgType"] == "project"
    assert "limit" in waiting["phaseMessage"] and "capped" in waiting["phaseMessage"]
    # (e) The limit raised at run time: the third starts at the next cycle.
    raised = [{"nodePool": default_pool(api), "gpu": {"deserved": 0, "limit": 12}}]
    response = api.put(f"/api/v1/org-unit/projects/{capped}/resources", json=raised)
    assert response.status_code == 200, response.text
    settle(api, ids, dict.fromkeys(ids, "Running"))
    assert "phaseReason" not in api.workload(ids["c2"])


def test_non_preemptible_workloads_are_held_to_deserved(cluster_16: LiveServer) -> None:
    api = cluster_16.api()
    steady = project(api, "steady", deserved=8)
    ids = {
        f"n{i}": submit(api, steady, f"n{i}", preemptibility="non-preemptible") for i in range(3)
    }
    settle(api, ids, {"n0": "Running", "n1": "Running", "n2": "Pending"})
    waiting = pending_with(api, ids["n2"], "NonPreemptibleOverQuota")
    assert waiting["pendingSchedulingMessages"][0]["phaseReason"] == "NonPreemptibleOverQuota"
    # A preemptible one of the same project may still borrow the idle GPUs.
    borrower = submit(api, steady, "borrower")
    settle(api, {"borrower": borrower}, {"borrower": "Running"})
    assert api.workload(ids["n2"])["phase"] == "Pending"
