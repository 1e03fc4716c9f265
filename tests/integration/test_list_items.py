"""The workload list's items, each rendered once per version of its workload and remembered
(services/workload_list.py): an item follows every change of its workload, its times grow
with no write, and a list that can remember only a few items answers exactly as one that
would remember them all."""

from __future__ import annotations

from typing import Any

from lockstep.config import Settings
from tests.conftest import in_process
from tests.support.api import Api, poll
from tests.support.requests import distributed, sleeping


def listed(api: Api, **params: Any) -> dict[str, Any]:
    response = api.get("/api/v1/workloads", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def item_of(api: Api, workload_id: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [w for w in listed(api)["workloads"] if w["id"] == workload_id]
    assert len(found) == 1, found
    return found[0]


def test_an_item_follows_each_change_of_its_workload(api: Api) -> None:
    workload_id = api.create(sleeping(api.cluster_id(), name="follows", workers=1))["workloadId"]
    first = item_of(api, workload_id)
    assert first["phase"] in {"Creating", "Pending", "Initializing", "Running"}

    def running() -> dict[str, Any] | None:
        item = item_of(api, workload_id)
        return item if item["phase"] == "Running" and item["runningPods"] == 2 else None

    shown = poll(running, timeout=60, what="the list to show the workload Running")
    assert shown["phaseUpdatedAt"] >= first["phaseUpdatedAt"]
    assert shown["actionsSupport"] == {"delete": True, "suspend": True}
    assert api.post(f"/api/v1/workloads/distributed/{workload_id}/suspend").status_code == 202

    def stopped() -> dict[str, Any] | None:
        item = item_of(api, workload_id)
        return item if item["phase"] == "Stopped" else None

    suspended = poll(stopped, timeout=60, what="the list to show the workload Stopped")
    assert suspended["runningPods"] == 0
    assert suspended["phase"] == api.workload(workload_id)["phase"]
    assert api.delete(f"/api/v1/workloads/distributed/{workload_id}").status_code == 202
    api.wait_gone(workload_id)
    assert workload_id not in {w["id"] for w in listed(api)["workloads"]}
    assert workload_id in {w["id"] for w in listed(api, deleted="true")["workloads"]}


def test_the_time_pending_grows_with_no_write(api: Api) -> None:
    waiting = distributed(api.cluster_id(), name="waits", compute={"cpuCoreRequest": 100000})
    workload_id = api.create(waiting)["workloadId"]
    parked = poll(
        lambda: ((item := item_of(api, workload_id))["phase"] == "Pending" and item) or None,
        timeout=30,
        what="the workload to be Pending",
    )

    def later() -> dict[str, Any] | None:
        item = item_of(api, workload_id)
        grown = item["totalPendingTimeSeconds"] >= parked["totalPendingTimeSeconds"] + 2
        return item if grown else None

    grown = poll(later, timeout=30, what="the time Pending to grow")
    figures = {"totalPendingTimeSeconds", "totalRunningTimeSeconds", "idleGpus"}
    assert {k: v for k, v in grown.items() if k not in figures} == {
        k: v for k, v in parked.items() if k not in figures
    }
    assert grown["totalRunningTimeSeconds"] == 0
    assert grown["idleGpus"] is None


def test_a_list_that_remembers_two_items_shows_every_item_as_it_is(settings: Settings) -> None:
    few = settings.model_copy(update={"list_items_remembered": 2})
    with in_process(few) as client:
        api = Api.login(client)
        cluster = api.cluster_id()
        for index in range(5):
            api.create(
                distributed(cluster, name=f"page-{index}", compute={"cpuCoreRequest": 100000})
            )
        poll(
            lambda: all(w["phase"] == "Pending" for w in listed(api)["workloads"]) or None,
            timeout=30,
            what="every workload to be Pending",
        )
        pages = [{"limit": 2, "offset": offset, "sortBy": "name"} for offset in (0, 2, 4)]
        rounds = [[listed(api, **page) for page in pages] for _ in range(3)]
        for shown in rounds:  # each round renders again what the one before forgot
            assert [w["name"] for page in shown for w in page["workloads"]] == [
                f"page-{index}" for index in range(5)
            ]
            assert [page.get("next") for page in shown] == [2, 4, None]
            for item in (w for page in shown for w in page["workloads"]):
                stored = api.workload(item["id"])
                figures = ("totalPendingTimeSeconds", "totalRunningTimeSeconds")
                shown_fields = [k for k in item if k not in figures]  # GET tells more
                assert {k: item[k] for k in shown_fields} == {k: stored[k] for k in shown_fields}
