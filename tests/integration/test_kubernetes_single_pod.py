"""Trainings and workspaces on the Kubernetes runtime, through the API, against the fake API
server over real HTTP: a training becomes an Indexed Job, a workspace a StatefulSet and its
headless Service; the test acts as the Job and StatefulSet controllers and the kubelet (pods
owned by their object, conditions, container states) and sees the phases in the API; suspend
and resume flip the Job's `suspend` and the StatefulSet's replicas; delete removes the object,
its Services and its pods."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockstep.config import RuntimeKind, Settings
from tests.conftest import in_process, make_settings
from tests.support.api import Api, poll
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.requests import single_pod

NAMESPACE = "runai-default"
JOBS = ("batch/v1", "jobs")
STATEFUL_SETS = ("apps/v1", "statefulsets")
SERVICES = ("v1", "services")
PODS = ("v1", "pods")


@pytest.fixture
def cluster() -> Iterator[FakeKubernetes]:
    with FakeKubernetes() as fake:
        yield fake


@pytest.fixture
def api(tmp_path: Path, database_url: str, cluster: FakeKubernetes) -> Iterator[Api]:
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    settings: Settings = make_settings(tmp_path / "data", database_url).model_copy(
        update={"runtime": RuntimeKind.KUBERNETES, "kubeconfig": kubeconfig}
    )
    with in_process(settings) as client:
        yield Api.login(client)


def stored(cluster: FakeKubernetes, resource: tuple[str, str], name: str) -> dict[str, Any]:
    return poll(
        lambda: cluster.get(*resource, NAMESPACE, name),
        what=f"{resource[1]}/{name} on the cluster",
        timeout=20,
    )


def running_container(**fields: Any) -> dict[str, Any]:
    return {"restartCount": 0, "state": {"running": {}}, **fields}


def create_pod(
    cluster: FakeKubernetes,
    owner: dict[str, Any],
    *,
    name: str,
    index_label: tuple[str, str],
    container: dict[str, Any],
) -> None:
    """What the owner's controller and the kubelet do: a pod of its template, owned by it."""
    template = copy.deepcopy(owner["spec"]["template"])
    reference = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }
    cluster.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": NAMESPACE,
                "labels": {**template["metadata"]["labels"], index_label[0]: index_label[1]},
                "ownerReferences": [reference],
            },
            "spec": {**template["spec"], "nodeName": "node-a"},
            "status": {
                "phase": "Running",
                "startTime": "2026-11-30T12:00:00Z",
                "conditions": [
                    {"type": "PodScheduled", "status": "True"},
                    {"type": "Ready", "status": "True"},
                ],
                "containerStatuses": [container],
            },
        }
    )


def start_job_pods(cluster: FakeKubernetes, job: dict[str, Any]) -> list[str]:
    names = []
    for index in range(job["spec"]["parallelism"]):
        name = f"{job['metadata']['name']}-{index}-x7k2{index}"
        label = ("batch.kubernetes.io/job-completion-index", str(index))
        create_pod(cluster, job, name=name, index_label=label, container=running_container())
        names.append(name)
    return names


def start_workspace_pod(cluster: FakeKubernetes, stateful_set: dict[str, Any]) -> str:
    name = f"{stateful_set['metadata']['name']}-0"
    label = ("apps.kubernetes.io/pod-index", "0")
    create_pod(cluster, stateful_set, name=name, index_label=label, container=running_container())
    return name


def set_job_condition(
    cluster: FakeKubernetes, name: str, kind: str, *, reason: str, message: str
) -> None:
    condition = {"type": kind, "status": "True", "reason": reason, "message": message}
    cluster.set_status(*JOBS, NAMESPACE, name, {"conditions": [condition]})


def restart_container(cluster: FakeKubernetes, pod: str, *, exit_code: int) -> None:
    """The kubelet runs the StatefulSet's container again after it ended with `exit_code`."""
    ended = {"terminated": {"exitCode": exit_code, "reason": "Error" if exit_code else "Completed"}}
    container = running_container(restartCount=1, lastState=ended)
    cluster.set_status(*PODS, NAMESPACE, pod, {"containerStatuses": [container]})


def pod_names(api: Api, workload_id: str) -> list[str]:
    pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
    return sorted(pod["name"] for pod in pods)


def test_a_training_runs_as_an_indexed_job_until_its_job_completes(
    api: Api, cluster: FakeKubernetes
) -> None:
    body = single_pod(api.cluster_id(), name="sweep", completions=3, parallelism=2, backoffLimit=2)
    workload_id = api.create(body, kind="trainings")["workloadId"]
    job = stored(cluster, JOBS, "sweep")
    assert {key: job["spec"][key] for key in ("completionMode", "completions", "parallelism")} == {
        "completionMode": "Indexed",
        "completions": 3,
        "parallelism": 2,
    }
    assert (job["spec"]["backoffLimit"], job["spec"]["suspend"]) == (2, False)
    template = job["spec"]["template"]
    assert template["spec"]["restartPolicy"] == "Never"
    assert template["spec"]["schedulerName"] == "kai-scheduler"
    assert template["spec"]["priorityClassName"] == "train"
    assert job["metadata"]["labels"]["kai.scheduler/queue"] == "default"
    api.wait_for(workload_id, ["Pending"], timeout=20)

    names = start_job_pods(cluster, job)
    api.wait_for(workload_id, ["Running"], timeout=20)
    poll(
        lambda: pod_names(api, workload_id) == sorted(names) or None,
        what="the Job's pods in the workload's pods",
        timeout=20,
    )

    set_job_condition(
        cluster,
        "sweep",
        "Complete",
        reason="CompletionsReached",
        message="Reached expected number of succeeded pods",
    )
    done = api.wait_for(workload_id, ["Completed"], timeout=20)
    assert done["phaseMessage"] == "CompletionsReached: Reached expected number of succeeded pods"


def test_a_training_whose_job_fails_fails_with_the_jobs_reason(
    api: Api, cluster: FakeKubernetes
) -> None:
    workload_id = api.create(single_pod(api.cluster_id(), name="flaky"), kind="trainings")[
        "workloadId"
    ]
    start_job_pods(cluster, stored(cluster, JOBS, "flaky"))
    api.wait_for(workload_id, ["Running"], timeout=20)
    set_job_condition(
        cluster,
        "flaky",
        "Failed",
        reason="BackoffLimitExceeded",
        message="Job has reached the specified backoff limit",
    )
    failed = api.wait_for(workload_id, ["Failed"], timeout=20)
    assert failed["phaseMessage"] == (
        "BackoffLimitExceeded: Job has reached the specified backoff limit"
    )


def test_a_training_is_suspended_resumed_and_deleted_with_its_pods(
    api: Api, cluster: FakeKubernetes
) -> None:
    body = single_pod(
        api.cluster_id(), name="paused", ports=[{"container": 6006, "serviceType": "ClusterIP"}]
    )
    workload_id = api.create(body, kind="trainings")["workloadId"]
    (pod,) = start_job_pods(cluster, stored(cluster, JOBS, "paused"))
    api.wait_for(workload_id, ["Running"], timeout=20)
    assert stored(cluster, SERVICES, "paused-clusterip")["spec"]["ports"][0]["port"] == 6006

    assert api.post(f"/api/v1/workloads/trainings/{workload_id}/suspend").status_code == 202
    poll(
        lambda: (cluster.get(*JOBS, NAMESPACE, "paused") or {})["spec"]["suspend"] or None,
        what="the Job suspended on the cluster",
        timeout=20,
    )
    cluster.delete(*PODS, NAMESPACE, pod)
    set_job_condition(cluster, "paused", "Suspended", reason="JobSuspended", message="suspended")
    api.wait_for(workload_id, ["Stopped"], timeout=20)
    assert pod_names(api, workload_id) == []

    assert api.post(f"/api/v1/workloads/trainings/{workload_id}/resume").status_code == 202
    poll(
        lambda: not (cluster.get(*JOBS, NAMESPACE, "paused") or {})["spec"]["suspend"] or None,
        what="the Job resumed on the cluster",
        timeout=20,
    )
    (pod,) = start_job_pods(cluster, stored(cluster, JOBS, "paused"))

    assert api.delete(f"/api/v1/workloads/trainings/{workload_id}").status_code == 202
    api.wait_gone(workload_id, timeout=20)
    assert cluster.get(*JOBS, NAMESPACE, "paused") is None
    assert cluster.get(*SERVICES, NAMESPACE, "paused-clusterip") is None
    assert cluster.get(*PODS, NAMESPACE, pod) is None


def test_a_workspace_runs_as_a_stateful_set_and_completes_when_its_pod_exits_0(
    api: Api, cluster: FakeKubernetes
) -> None:
    body = single_pod(
        api.cluster_id(), name="lab", ports=[{"container": 8888, "serviceType": "ClusterIP"}]
    )
    workload_id = api.create(body, kind="workspaces")["workloadId"]
    stateful_set = stored(cluster, STATEFUL_SETS, "lab")
    assert (stateful_set["spec"]["replicas"], stateful_set["spec"]["serviceName"]) == (1, "lab")
    template = stateful_set["spec"]["template"]
    assert template["spec"]["restartPolicy"] == "Always"
    assert template["spec"]["priorityClassName"] == "build"
    assert stored(cluster, SERVICES, "lab")["spec"]["clusterIP"] == "None"
    assert stored(cluster, SERVICES, "lab-clusterip")["spec"]["ports"][0]["port"] == 8888

    pod = start_workspace_pod(cluster, stateful_set)
    api.wait_for(workload_id, ["Running"], timeout=20)
    assert pod_names(api, workload_id) == ["lab-0"]

    restart_container(cluster, pod, exit_code=0)
    done = api.wait_for(workload_id, ["Completed"], timeout=20)
    assert done["phaseMessage"] == "lab-0 completed"
    # Scaled to none, so the kubelet does not run the ended workspace again; how it ended is
    # kept on it, so that a lost write of the phase cannot run it again either.
    ended = cluster.get(*STATEFUL_SETS, NAMESPACE, "lab") or {}
    assert ended["spec"]["replicas"] == 0
    assert ended["metadata"]["annotations"]["lockstep.io/ended-phase"] == "Completed"
    assert ended["metadata"]["annotations"]["lockstep.io/ended-message"] == "lab-0 completed"


def test_a_workspace_whose_pod_exits_otherwise_fails_naming_the_exit_code(
    api: Api, cluster: FakeKubernetes
) -> None:
    workload_id = api.create(single_pod(api.cluster_id(), name="broken"), kind="workspaces")[
        "workloadId"
    ]
    pod = start_workspace_pod(cluster, stored(cluster, STATEFUL_SETS, "broken"))
    api.wait_for(workload_id, ["Running"], timeout=20)
    restart_container(cluster, pod, exit_code=2)
    failed = api.wait_for(workload_id, ["Failed"], timeout=20)
    assert failed["phaseMessage"] == "pod broken-0 exited with code 2"
    assert (cluster.get(*STATEFUL_SETS, NAMESPACE, "broken") or {})["spec"]["replicas"] == 0


def test_a_workspace_is_scaled_down_up_and_deleted_with_its_services(
    api: Api, cluster: FakeKubernetes
) -> None:
    workload_id = api.create(single_pod(api.cluster_id(), name="desk"), kind="workspaces")[
        "workloadId"
    ]
    pod = start_workspace_pod(cluster, stored(cluster, STATEFUL_SETS, "desk"))
    api.wait_for(workload_id, ["Running"], timeout=20)

    def replicas() -> int:
        return int((cluster.get(*STATEFUL_SETS, NAMESPACE, "desk") or {})["spec"]["replicas"])

    assert api.post(f"/api/v1/workloads/workspaces/{workload_id}/suspend").status_code == 202
    poll(lambda: replicas() == 0 or None, what="the StatefulSet scaled to none", timeout=20)
    api.wait_for(workload_id, ["Stopping"], timeout=20)
    cluster.delete(*PODS, NAMESPACE, pod)  # as the StatefulSet controller does
    api.wait_for(workload_id, ["Stopped"], timeout=20)

    assert api.post(f"/api/v1/workloads/workspaces/{workload_id}/resume").status_code == 202
    poll(lambda: replicas() == 1 or None, what="the StatefulSet scaled up again", timeout=20)
    pod = start_workspace_pod(cluster, stored(cluster, STATEFUL_SETS, "desk"))

    assert api.delete(f"/api/v1/workloads/workspaces/{workload_id}").status_code == 202
    api.wait_gone(workload_id, timeout=20)
    assert cluster.get(*STATEFUL_SETS, NAMESPACE, "desk") is None
    assert cluster.get(*SERVICES, NAMESPACE, "desk") is None
    assert cluster.get(*PODS, NAMESPACE, pod) is None


@pytest.mark.parametrize(("path", "kind"), [("trainings", "Job"), ("workspaces", "StatefulSet")])
def test_the_dry_run_shows_the_manifests_and_creates_nothing(
    api: Api, cluster: FakeKubernetes, path: str, kind: str
) -> None:
    body = single_pod(api.cluster_id(), name="preview")
    rendered = api.post(f"/api/v1/workloads/{path}", params={"dryRun": "true"}, json=body)
    assert rendered.status_code == 200, rendered.text
    manifests = rendered.json()["manifests"]
    (owner,) = [m for m in manifests if m["kind"] == kind]
    assert (owner["metadata"]["name"], owner["metadata"]["namespace"]) == ("preview", NAMESPACE)
    assert api.get("/api/v1/workloads").json()["workloads"] == []
    assert cluster.objects(*JOBS) == [] and cluster.objects(*STATEFUL_SETS) == []
