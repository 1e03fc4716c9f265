"""What is left of a finished workload: it is deleted once its
autoDeletionTimeAfterCompletionSeconds pass, and cleanPodPolicy All removes its pods (their
logs stay readable until the workload is deleted) where the default keeps them listed."""

from __future__ import annotations

from tests.support.api import Api, poll
from tests.support.pods import pod_log
from tests.support.requests import distributed, python


def test_a_finished_workload_is_deleted_after_its_auto_deletion_time(api: Api) -> None:
    body = distributed(api.cluster_id(), name="ephemeral", workers=1)
    body["spec"]["autoDeletionTimeAfterCompletionSeconds"] = 1
    workload_id = api.create(body)["workloadId"]
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    api.wait_gone(workload_id, timeout=30)
    deleted = api.get("/api/v1/workloads", params={"deleted": "true"}).json()["workloads"]
    assert [w["id"] for w in deleted] == [workload_id]
    assert deleted[0]["phase"] == "Completed"


def test_without_an_auto_deletion_time_a_finished_workload_stays(api: Api) -> None:
    workload_id = api.create(distributed(api.cluster_id(), name="lasting", workers=1))["workloadId"]
    completed = api.wait_for(workload_id, {"Completed", "Failed"})
    assert completed["phase"] == "Completed"
    assert api.workload(workload_id)["deletedAt"] is None


def pods_of(api: Api, workload_id: str) -> list[str]:
    return [p["name"] for p in api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]]


def test_clean_pod_policy_all_removes_the_pods_but_keeps_their_logs(api: Api) -> None:
    body = distributed(api.cluster_id(), name="tidy", workers=1, args=python("print('done')"))
    body["spec"]["cleanPodPolicy"] = "All"
    workload_id = api.create(body)["workloadId"]
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    poll(lambda: pods_of(api, workload_id) == [] or None, timeout=30, what="pods removed")
    assert pod_log(api, workload_id, "tidy-master-0") == "done\n"


def test_clean_pod_policy_none_keeps_finished_pods_listed(api: Api) -> None:
    body = distributed(api.cluster_id(), name="kept", workers=1)
    body["spec"]["cleanPodPolicy"] = "None"
    workload_id = api.create(body)["workloadId"]
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    poll(
        lambda: sorted(pods_of(api, workload_id)) == ["kept-master-0", "kept-worker-0"] or None,
        timeout=30,
        what="both pods listed",
    )
