"""Trainings and workspaces on shared quotas, end to end (virtual GPU nodes, real processes):
a workspace is not preemptible, so it runs only within its project's deserved GPUs — and there
it reclaims what another project's over-quota training borrowed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import running
from tests.e2e.test_fair_share import nodes, pending_with, phases, project, reasons, settle
from tests.support.api import Api, poll
from tests.support.requests import python, single_pod
from tests.support.server import LiveServer

SLEEP = python("import time; time.sleep(600)")


@pytest.fixture
def cluster_8(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    """One virtual node of 8 GPUs."""
    settings = {"NODES": nodes(1, 8)}
    with running(LiveServer(tmp_path / "data", sqlite_url, settings=settings)) as server:
        yield server


def submit(api: Api, kind: str, project_id: str, name: str, gpus: int) -> str:
    body = single_pod(
        api.cluster_id(),
        name=name,
        project_id=project_id,
        args=SLEEP,
        compute={"gpuDevicesRequest": gpus},
        terminationGracePeriodSeconds=1,
    )
    return str(api.create(body, kind=kind)["workloadId"])


def test_a_workspace_runs_within_deserved_and_reclaims_a_borrowed_share(
    cluster_8: LiveServer,
) -> None:
    api = cluster_8.api()
    team = project(api, "team", deserved=4, limit=-1, overQuotaWeight=1)
    lab = project(api, "lab", deserved=4, limit=-1, overQuotaWeight=1)
    ids = {
        "fit-a": submit(api, "trainings", team, "fit-a", 4),
        "fit-b": submit(api, "trainings", team, "fit-b", 4),  # borrows lab's idle share
    }
    settle(api, ids, {"fit-a": "Running", "fit-b": "Running"})

    # Beyond its project's deserved GPUs a workspace waits, whatever room there is.
    ids["desk-team"] = submit(api, "workspaces", team, "desk-team", 6)
    waiting = pending_with(api, ids["desk-team"], "NonPreemptibleOverQuota")
    assert waiting["phase"] == "Pending"

    # Within lab's deserved GPUs, lab's workspace takes back what team's trainings borrowed:
    # one of them (which one is the scheduler's choice between equals) waits again.
    ids["desk-lab"] = submit(api, "workspaces", lab, "desk-lab", 4)

    def reclaimed() -> str | None:
        now = phases(api, ids)
        trainings = sorted(now[name] for name in ("fit-a", "fit-b"))
        settled = (now["desk-lab"], now["desk-team"], trainings)
        if settled != ("Running", "Pending", ["Pending", "Running"]):
            return None
        return "fit-a" if now["fit-a"] == "Pending" else "fit-b"

    waiting_again = poll(reclaimed, timeout=60, what=lambda: f"a reclaim; saw {phases(api, ids)}")
    events = reasons(api, ids[waiting_again])
    assert [e["reason"] for e in events] == ["Reclaimed"], events
    assert api.workload(ids["desk-lab"])["preemptible"] is False
