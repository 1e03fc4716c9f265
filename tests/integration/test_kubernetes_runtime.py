"""The Kubernetes runtime end to end through the API, against the fake API server over real
HTTP (Kubernetes cannot run here): a submitted workload becomes a Kubeflow job in its
project's namespace; the test then acts as the operator and the kubelet (pods, conditions,
events) and sees the phase, pods and events in the API; suspend, resume and delete reach the
cluster; a refusal by the cluster (403) is shown as the workload's condition."""

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
from tests.support.requests import distributed

NAMESPACE = "runai-default"
PYTORCH = ("kubeflow.org/v1", "pytorchjobs")


@pytest.fixture
def cluster() -> Iterator[FakeKubernetes]:
    with FakeKubernetes() as fake:
        yield fake


@pytest.fixture
def kube_settings(tmp_path: Path, database_url: str, cluster: FakeKubernetes) -> Settings:
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    return make_settings(tmp_path / "data", database_url).model_copy(
        update={"runtime": RuntimeKind.KUBERNETES, "kubeconfig": kubeconfig}
    )


@pytest.fixture
def api(kube_settings: Settings) -> Iterator[Api]:
    with in_process(kube_settings) as client:
        yield Api.login(client)


def job_of(cluster: FakeKubernetes, name: str) -> dict[str, Any]:
    return poll(
        lambda: cluster.get(*PYTORCH, NAMESPACE, name),
        what=f"the PyTorchJob {name} on the cluster",
        timeout=20,
    )


def start_pods(cluster: FakeKubernetes, job: dict[str, Any], *, node: str = "node-a") -> None:
    """What the operator and the kubelet do: a running pod for every replica."""
    for replica_type, replica in job["spec"]["pytorchReplicaSpecs"].items():
        for index in range(replica["replicas"]):
            template = copy.deepcopy(replica["template"])
            name = f"{job['metadata']['name']}-{replica_type.lower()}-{index}"
            labels = {
                **template["metadata"].get("labels", {}),
                "training.kubeflow.org/replica-type": replica_type.lower(),
                "training.kubeflow.org/replica-index": str(index),
            }
            cluster.create(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
                    "spec": {**template["spec"], "nodeName": node},
                    "status": {
                        "phase": "Running",
                        "podIP": f"10.0.0.{10 + index}",
                        "startTime": "2026-11-30T12:00:00Z",
                        "conditions": [
                            {"type": "PodScheduled", "status": "True"},
                            {"type": "Ready", "status": "True"},
                        ],
                        "containerStatuses": [{"restartCount": 0, "state": {"running": {}}}],
                    },
                }
            )


def phase(api: Api, workload_id: str) -> str:
    return str(api.workload(workload_id)["phase"])


def test_a_workload_runs_as_a_job_and_its_pods_and_events_are_reported(
    api: Api, cluster: FakeKubernetes
) -> None:
    created = api.create(distributed(api.cluster_id(), name="train", workers=2))
    workload_id = created["workloadId"]
    job = job_of(cluster, "train")
    assert job["spec"]["runPolicy"].get("suspend") in (None, False)
    namespace = cluster.get("v1", "namespaces", None, NAMESPACE)
    assert namespace is not None  # enforcing the project's Pod Security level, baseline
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    assert api.wait_for(workload_id, ["Pending"], timeout=20)

    start_pods(cluster, job)
    cluster.set_conditions(*PYTORCH, NAMESPACE, "train", [("Created", "True"), ("Running", "True")])
    master = cluster.get("v1", "pods", NAMESPACE, "train-master-0")
    assert master is not None
    cluster.add_event(master, reason="Pulled", message="pulled image python:3.11")
    api.wait_for(workload_id, ["Running"], timeout=20)

    pods = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
    assert sorted(p["name"] for p in pods) == ["train-master-0", "train-worker-0", "train-worker-1"]
    assert {p["nodeName"] for p in pods} == {"node-a"}
    events = poll(
        lambda: (
            [
                e
                for e in api.get(f"/api/v1/workloads/{workload_id}/events").json()["events"]
                if e["reason"] == "Pulled"
            ]
            or None
        ),
        what="the cluster's event in the workload's events",
        timeout=20,
    )
    assert len(events) == 1 and events[0]["message"] == "pulled image python:3.11"

    cluster.set_conditions(
        *PYTORCH,
        NAMESPACE,
        "train",
        [("Created", "True"), ("Running", "False"), ("Succeeded", "True")],
    )
    api.wait_for(workload_id, ["Completed"], timeout=20)
    records = api.get(f"/api/v1/workloads/{workload_id}/history").json()["records"]
    phases = [r["spec"]["phaseUpdate"]["phase"] for r in records if "phaseUpdate" in r["spec"]]
    # The cluster went from created to running between two looks: each step is recorded.
    assert phases == ["Creating", "Pending", "Initializing", "Running", "Completed"]


def test_suspend_resume_and_delete_reach_the_cluster(api: Api, cluster: FakeKubernetes) -> None:
    created = api.create(distributed(api.cluster_id(), name="paused", workers=1))
    workload_id = created["workloadId"]
    job = job_of(cluster, "paused")
    start_pods(cluster, job)
    cluster.set_conditions(
        *PYTORCH, NAMESPACE, "paused", [("Created", "True"), ("Running", "True")]
    )
    api.wait_for(workload_id, ["Running"], timeout=20)

    assert api.post(f"/api/v1/workloads/distributed/{workload_id}/suspend").status_code == 202
    poll(
        lambda: (
            (cluster.get(*PYTORCH, NAMESPACE, "paused") or {})["spec"]["runPolicy"].get("suspend")
            or None
        ),
        what="the job suspended on the cluster",
        timeout=20,
    )
    for pod in ("paused-master-0", "paused-worker-0"):
        cluster.delete("v1", "pods", NAMESPACE, pod)
    cluster.set_conditions(
        *PYTORCH, NAMESPACE, "paused", [("Created", "True"), ("Suspended", "True")]
    )
    api.wait_for(workload_id, ["Stopped"], timeout=20)
    assert api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"] == []

    assert api.post(f"/api/v1/workloads/distributed/{workload_id}/resume").status_code == 202
    poll(
        lambda: (
            not (cluster.get(*PYTORCH, NAMESPACE, "paused") or {})["spec"]["runPolicy"].get(
                "suspend"
            )
            or None
        ),
        what="the job resumed on the cluster",
        timeout=20,
    )

    assert api.delete(f"/api/v1/workloads/distributed/{workload_id}").status_code == 202
    api.wait_gone(workload_id, timeout=20)
    assert cluster.get(*PYTORCH, NAMESPACE, "paused") is None


def test_a_refusal_by_the_cluster_is_the_workloads_condition(
    api: Api, cluster: FakeKubernetes
) -> None:
    cluster.fail(
        f"/apis/kubeflow.org/v1/namespaces/{NAMESPACE}/pytorchjobs",
        403,
        times=100,
        method="PATCH",
        message='pytorchjobs.kubeflow.org "denied" is forbidden: User "lockstep" cannot patch',
    )
    created = api.create(distributed(api.cluster_id(), name="denied", workers=1))

    def refused() -> dict[str, Any] | None:
        workload = api.workload(created["workloadId"])
        return workload if workload["phaseMessage"] else None

    workload = poll(refused, what="the cluster's refusal as the phase message", timeout=20)
    assert workload["phase"] == "Pending"
    assert "forbidden" in workload["phaseMessage"] and "cannot patch" in workload["phaseMessage"]


def test_pod_logs_come_from_the_cluster(api: Api, cluster: FakeKubernetes) -> None:
    created = api.create(distributed(api.cluster_id(), name="talk", workers=1))
    workload_id = created["workloadId"]
    start_pods(cluster, job_of(cluster, "talk"))
    cluster.set_conditions(*PYTORCH, NAMESPACE, "talk", [("Created", "True"), ("Running", "True")])
    api.wait_for(workload_id, ["Running"], timeout=20)
    cluster.append_log(NAMESPACE, "talk-master-0", "step 0", "step 1", "step 2")
    path = f"/api/v1/workloads/{workload_id}/pods/talk-master-0/logs"
    assert api.get(path).text == "step 0\nstep 1\nstep 2\n"
    assert api.get(path, params={"tailLines": 1}).text == "step 2\n"
    stamped = api.get(path, params={"timestamps": "true", "tailLines": 1}).text
    assert stamped.endswith(" step 2\n") and stamped[:4] == "2026"


def test_nodes_are_the_clusters_with_what_lockstep_pods_hold(
    api: Api, cluster: FakeKubernetes
) -> None:
    for name, pool, gpus in (("gpu-a", "a100", "4"), ("cpu-b", "default", "0")):
        cluster.create(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"kai.scheduler/node-pool": pool}},
                "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}] if gpus != "0" else []},
                "status": {
                    "allocatable": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": gpus},
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        )
    request = distributed(
        api.cluster_id(),
        name="held",
        workers=1,
        compute={"gpuDevicesRequest": 2, "cpuCoreRequest": 4},
    )
    created = api.create(request)
    start_pods(cluster, job_of(cluster, "held"), node="gpu-a")
    api.wait_for(created["workloadId"], ["Initializing", "Pending"], timeout=20)
    listed = api.get(f"/api/v1/clusters/{api.cluster_id()}/nodes").json()["nodes"]
    nodes = {n["name"]: n for n in listed}
    gpu = nodes["gpu-a"]
    assert gpu["nodePool"] == "a100" and gpu["status"] == "Ready"
    assert gpu["capacity"] == {"cpuCores": "32", "memory": "256Gi", "gpus": 4}
    assert gpu["taints"] == [{"key": "gpu", "value": "", "effect": "NoSchedule"}]
    # master and worker, 2 GPUs and 4 cores each
    assert gpu["allocated"]["gpus"] == "4" and gpu["allocated"]["cpuCores"] == "8"
    assert nodes["cpu-b"]["allocated"]["gpus"] == "0" and nodes["cpu-b"]["capacity"]["gpus"] == 0


def test_an_event_alone_reaches_the_workload(api: Api, cluster: FakeKubernetes) -> None:
    """Nothing else changes: the watch of events wakes the reconciler (its resync is 30 s)."""
    created = api.create(distributed(api.cluster_id(), name="quiet", workers=1))
    workload_id = created["workloadId"]
    start_pods(cluster, job_of(cluster, "quiet"))
    cluster.set_conditions(*PYTORCH, NAMESPACE, "quiet", [("Created", "True"), ("Running", "True")])
    api.wait_for(workload_id, ["Running"], timeout=20)
    worker = cluster.get("v1", "pods", NAMESPACE, "quiet-worker-0")
    assert worker is not None
    cluster.add_event(worker, reason="Unhealthy", message="readiness probe failed", type_="Warning")

    def warned() -> list[dict[str, Any]] | None:
        listed = api.get(f"/api/v1/workloads/{workload_id}/events").json()["events"]
        return [e for e in listed if e["reason"] == "Unhealthy"] or None

    (seen,) = poll(warned, what="the event in the workload's events", timeout=10)
    assert seen["type"] == "Warning" and seen["involvedObject"]["name"] == "quiet-worker-0"


def test_the_runtime_rides_out_throttling_conflicts_and_a_compacted_history(
    api: Api, cluster: FakeKubernetes
) -> None:
    """Apply answered 429 then 409 (retried with backoff), and the watches' history compacted
    away (410 Gone: they list again): the workload still starts and its changes still arrive."""
    jobs = f"/apis/kubeflow.org/v1/namespaces/{NAMESPACE}/pytorchjobs"
    cluster.fail(jobs, 429, times=1, method="PATCH", retry_after=0.1)
    cluster.fail(jobs, 409, times=1, method="PATCH")
    created = api.create(distributed(api.cluster_id(), name="bumpy", workers=1))
    job = job_of(cluster, "bumpy")
    before = len(cluster.requests)
    cluster.compact()
    cluster.end_watches()  # they come back from a version compacted away: 410 Gone
    start_pods(cluster, job)
    cluster.set_conditions(*PYTORCH, NAMESPACE, "bumpy", [("Created", "True"), ("Running", "True")])
    api.wait_for(created["workloadId"], ["Running"], timeout=20)

    def relisted() -> bool | None:
        return (
            any(
                r.method == "GET" and r.path == "/api/v1/pods" and r.param("watch") is None
                for r in cluster.requests[before:]
            )
            or None
        )

    poll(relisted, what="the pod watch to list again after its history was compacted", timeout=20)
    applies = [r.status for r in cluster.requests_to("PATCH", f"{jobs}/bumpy")]
    assert applies == [429, 409, 201]  # retried, then created: applied once


def test_a_workload_the_cluster_rejects_fails_with_its_reason(
    api: Api, cluster: FakeKubernetes
) -> None:
    jobs = f"/apis/kubeflow.org/v1/namespaces/{NAMESPACE}/pytorchjobs"
    cluster.fail(
        jobs, 422, times=100, method="PATCH", message='admission webhook "validate" denied it'
    )
    created = api.create(distributed(api.cluster_id(), name="rejected", workers=1))
    failed = api.wait_for(created["workloadId"], ["Failed"], timeout=20)
    assert "denied it" in failed["phaseMessage"]
    assert len(cluster.requests_to("PATCH", f"{jobs}/rejected")) == 1  # not retried


def test_claims_are_the_clusters_own(api: Api) -> None:
    """The claims API manages the local runtime's directories; on a cluster it says where."""
    listed = api.get("/api/v1/org-unit/projects/1/claims")
    assert listed.status_code == 400
    assert "PersistentVolumeClaim of the cluster" in listed.json()["message"]


def test_pod_security_holds_on_kubernetes_too(api: Api, cluster: FakeKubernetes) -> None:
    """Refused at submission whatever the runtime; a restricted project's namespace carries its
    level and its pods what the level requires."""
    body = distributed(api.cluster_id(), name="escape")
    body["spec"]["storage"] = {"hostPath": [{"path": "/", "mountPath": "/host"}]}
    refused = api.post("/api/v1/workloads/distributed", json=body)
    assert refused.status_code == 400
    assert "spec.storage.hostPath[0].path" in refused.json()["message"]
    assert cluster.get("kubeflow.org/v1", "pytorchjobs", NAMESPACE, "escape") is None
    locked = api.post(
        "/api/v1/org-unit/projects",
        json={
            "name": "locked",
            "clusterId": api.cluster_id(),
            "resources": [],
            "podSecurityLevel": "restricted",
        },
    ).json()
    body = distributed(api.cluster_id(), name="locked-job", project_id=locked["id"])
    body["spec"]["security"] = {"runAsNonRoot": True, "runAsUid": 1000}
    api.create(body)
    job = poll(
        lambda: cluster.get("kubeflow.org/v1", "pytorchjobs", "runai-locked", "locked-job"),
        timeout=20,
        what="the restricted project's job",
    )
    namespace = cluster.get("v1", "namespaces", None, "runai-locked")
    assert namespace is not None
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        container = replica["template"]["spec"]["containers"][0]
        assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
