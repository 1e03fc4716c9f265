"""`KubeCluster` — lockstep's interface to a cluster, on the official `kubernetes` client — driven
over real HTTP against the fake API server of `tests/support/fake_kubernetes.py`, configured
from a kubeconfig file as for a real cluster: apply, get, list, patch, delete, watch (with a
relist after 410 Gone), pod logs, retries and errors."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from lockstep.runtimes.kubernetes.cluster import (
    APPLY_PATCH,
    KubeCluster,
    Propagation,
    RetryPolicy,
    WatchEvent,
)
from lockstep.runtimes.kubernetes.cluster_errors import (
    ClusterConflict,
    ClusterError,
    ClusterForbidden,
    ClusterNotFound,
    ClusterUnavailable,
)
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.server import free_port

NAMESPACE = "runai-team"
KUBEFLOW = "kubeflow.org/v1"
JOBS = f"/apis/{KUBEFLOW}/namespaces/{NAMESPACE}/pytorchjobs"
LABELS = {"app.kubernetes.io/managed-by": "lockstep"}


@pytest.fixture
def fake() -> Iterator[FakeKubernetes]:
    with FakeKubernetes(namespaces=("default", NAMESPACE)) as server:
        yield server


@pytest.fixture
def sleeps() -> list[float]:
    """The backoff delays the cluster waited (recorded, not slept)."""
    return []


@pytest.fixture
def cluster(fake: FakeKubernetes, tmp_path: Path, sleeps: list[float]) -> Iterator[KubeCluster]:
    kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig", context="fake")
    with KubeCluster.from_config(kubeconfig, "fake", sleep=sleeps.append) as connected:
        yield connected


def pytorch_job(name: str, *, workers: int = 1, labels: dict[str, str] | None = None) -> Any:
    template = {"spec": {"containers": [{"name": "pytorch", "image": "pytorch:2"}]}}
    return {
        "apiVersion": KUBEFLOW,
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels or dict(LABELS)},
        "spec": {
            "runPolicy": {"suspend": False},
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": template},
                "Worker": {"replicas": workers, "template": template},
            },
        },
    }


def owned_by(owner: dict[str, Any], kind: str, name: str, **extra: Any) -> dict[str, Any]:
    reference = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    return {
        "apiVersion": "v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": NAMESPACE, "ownerReferences": [reference]},
        **extra,
    }


def running_pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"containers": [{"name": "pytorch", "image": "pytorch:2"}]},
        "status": {"phase": "Running"},
    }


def summary(event: WatchEvent) -> tuple[str, str]:
    return str(event.type), event.name


# ---- apply, get, list ------------------------------------------------------------------------


def test_apply_creates_then_changes_nothing_then_updates(
    cluster: KubeCluster, fake: FakeKubernetes
) -> None:
    created = cluster.apply(pytorch_job("train"))
    assert created["kind"] == "PyTorchJob"
    assert created["metadata"]["generation"] == 1
    assert created["metadata"]["uid"]

    again = cluster.apply(pytorch_job("train"))
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert again["metadata"]["generation"] == 1

    changed = cluster.apply(pytorch_job("train", workers=3, labels={"team": "a"}))
    assert changed["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    assert changed["metadata"]["generation"] == 2
    assert changed["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 3
    # A label lockstep applied before and no longer applies is gone (server-side apply).
    assert changed["metadata"]["labels"] == {"team": "a"}
    assert changed["metadata"]["uid"] == created["metadata"]["uid"]

    applies = fake.requests_to("PATCH", f"{JOBS}/train")
    assert [r.content_type for r in applies] == [APPLY_PATCH] * 3
    assert {(r.param("fieldManager"), r.param("force")) for r in applies} == {("lockstep", "true")}


def test_reapplying_keeps_the_status_the_operator_wrote(
    cluster: KubeCluster, fake: FakeKubernetes
) -> None:
    cluster.apply(pytorch_job("train"))
    running = fake.set_conditions(
        KUBEFLOW, "pytorchjobs", NAMESPACE, "train", [("Created", "True"), ("Running", "True")]
    )
    again = cluster.apply(pytorch_job("train"))
    assert again["metadata"]["resourceVersion"] == running["metadata"]["resourceVersion"]
    assert again["status"] == running["status"]


def test_apply_a_cluster_scoped_object_then_objects_in_it(cluster: KubeCluster) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "runai-new"}}
    assert cluster.apply(namespace)["metadata"]["name"] == "runai-new"
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "hostfile", "namespace": "runai-new"},
        "data": {"hostfile": "train-worker-0 slots=1\n"},
    }
    assert cluster.apply(config)["data"] == config["data"]
    assert cluster.get("v1", "Namespace", None, "runai-new") is not None


def test_apply_in_a_missing_namespace_is_not_found(cluster: KubeCluster) -> None:
    job = pytorch_job("train")
    job["metadata"]["namespace"] = "runai-nobody"
    with pytest.raises(ClusterNotFound, match='namespaces "runai-nobody" not found'):
        cluster.apply(job)


def test_get_returns_the_object_or_none(cluster: KubeCluster) -> None:
    created = cluster.apply(pytorch_job("train"))
    found = cluster.get(KUBEFLOW, "PyTorchJob", NAMESPACE, "train")
    assert found == created
    assert cluster.get(KUBEFLOW, "PyTorchJob", NAMESPACE, "absent") is None


def test_list_filters_by_labels_and_gives_a_resource_version(
    cluster: KubeCluster, fake: FakeKubernetes
) -> None:
    cluster.apply(pytorch_job("mine", labels={**LABELS, "workload": "1"}))
    cluster.apply(pytorch_job("also-mine", labels={**LABELS, "workload": "2"}))
    cluster.apply(pytorch_job("theirs", labels={"app.kubernetes.io/managed-by": "someone"}))

    items, version = cluster.list(KUBEFLOW, "PyTorchJob", NAMESPACE, labels=LABELS)
    assert sorted(item["metadata"]["name"] for item in items) == ["also-mine", "mine"]
    assert all(item["kind"] == "PyTorchJob" for item in items)
    assert version == str(fake.resource_version)

    one, _ = cluster.list(KUBEFLOW, "PyTorchJob", NAMESPACE, labels={**LABELS, "workload": "2"})
    assert [item["metadata"]["name"] for item in one] == ["also-mine"]
    everywhere, _ = cluster.list(KUBEFLOW, "PyTorchJob", None)
    assert len(everywhere) == 3


# ---- patch and delete ------------------------------------------------------------------------


def test_merge_patch_suspends_and_resumes_a_job(cluster: KubeCluster) -> None:
    cluster.apply(pytorch_job("train"))
    suspended = cluster.patch(
        KUBEFLOW, "PyTorchJob", NAMESPACE, "train", {"spec": {"runPolicy": {"suspend": True}}}
    )
    assert suspended["spec"]["runPolicy"]["suspend"] is True
    assert suspended["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 1
    assert suspended["metadata"]["generation"] == 2

    resumed = cluster.patch(
        KUBEFLOW, "PyTorchJob", NAMESPACE, "train", {"spec": {"runPolicy": {"suspend": False}}}
    )
    assert resumed["spec"]["runPolicy"]["suspend"] is False

    with pytest.raises(ClusterNotFound):
        cluster.patch(KUBEFLOW, "PyTorchJob", NAMESPACE, "absent", {"spec": {}})


def test_foreground_delete_removes_what_the_job_owns(
    cluster: KubeCluster, fake: FakeKubernetes
) -> None:
    job = cluster.apply(pytorch_job("train"))
    for name in ("train-master-0", "train-worker-0"):
        fake.create(owned_by(job, "Pod", name, status={"phase": "Running"}))
        fake.create(owned_by(job, "Service", name, spec={"clusterIP": "None"}))
    fake.create(running_pod("unrelated"))

    assert cluster.delete(KUBEFLOW, "PyTorchJob", NAMESPACE, "train") is True

    assert cluster.get(KUBEFLOW, "PyTorchJob", NAMESPACE, "train") is None
    pods, _ = cluster.list("v1", "Pod", NAMESPACE)
    assert [pod["metadata"]["name"] for pod in pods] == ["unrelated"]
    assert cluster.list("v1", "Service", NAMESPACE)[0] == []
    (request,) = fake.requests_to("DELETE")
    assert request.path == f"{JOBS}/train"

    assert cluster.delete(KUBEFLOW, "PyTorchJob", NAMESPACE, "train") is False


def test_orphan_delete_leaves_what_the_job_owns(cluster: KubeCluster, fake: FakeKubernetes) -> None:
    job = cluster.apply(pytorch_job("train"))
    fake.create(owned_by(job, "Pod", "train-master-0"))
    cluster.delete(KUBEFLOW, "PyTorchJob", NAMESPACE, "train", propagation=Propagation.ORPHAN)
    pod = cluster.get("v1", "Pod", NAMESPACE, "train-master-0")
    assert pod is not None
    assert pod["metadata"]["ownerReferences"] == []


# ---- watch -----------------------------------------------------------------------------------


def test_watch_sees_added_modified_deleted_in_order(
    cluster: KubeCluster, fake: FakeKubernetes
) -> None:
    cluster.apply(pytorch_job("before"))
    items, version = cluster.list(KUBEFLOW, "PyTorchJob", NAMESPACE, labels=LABELS)

    cluster.apply(pytorch_job("train"))
    cluster.apply(pytorch_job("other", labels={"app.kubernetes.io/managed-by": "someone"}))
    cluster.patch(
        KUBEFLOW, "PyTorchJob", NAMESPACE, "train", {"spec": {"runPolicy": {"suspend": True}}}
    )
    cluster.delete(KUBEFLOW, "PyTorchJob", NAMESPACE, "before")

    watch = cluster.watch(
        KUBEFLOW,
        "PyTorchJob",
        NAMESPACE,
        labels=LABELS,
        resource_version=version,
        known=items,
        timeout_seconds=10,
    )
    try:
        events = [next(watch) for _ in range(4)]
        assert [summary(e) for e in events] == [
            ("ADDED", "train"),
            ("MODIFIED", "train"),
            ("MODIFIED", "before"),  # foreground deletion: marked first (deletionTimestamp)
            ("DELETED", "before"),
        ]
        assert events[2].object["metadata"]["deletionTimestamp"]
        assert events[1].object["spec"]["runPolicy"]["suspend"] is True
        assert events[1].object["kind"] == "PyTorchJob"

        # The stream is open now: a change the operator makes arrives on it.
        fake.set_conditions(KUBEFLOW, "pytorchjobs", NAMESPACE, "train", [("Running", "True")])
        running = next(watch)
        assert summary(running) == ("MODIFIED", "train")
        assert running.object["status"]["conditions"][0]["reason"] == "PyTorchJobRunning"
    finally:
        watch.close()
    assert len(fake.requests_to("GET", JOBS)) == 2  # the list and one watch


def test_a_watch_by_labels_sees_an_object_leave_and_enter_them(cluster: KubeCluster) -> None:
    cluster.apply(pytorch_job("train"))
    watch = cluster.watch(KUBEFLOW, "PyTorchJob", NAMESPACE, labels=LABELS, timeout_seconds=10)
    try:
        assert summary(next(watch)) == ("ADDED", "train")
        cluster.apply(pytorch_job("train", labels={"team": "a"}))
        assert summary(next(watch)) == ("DELETED", "train")
        cluster.apply(pytorch_job("train"))
        assert summary(next(watch)) == ("ADDED", "train")
    finally:
        watch.close()


def test_watch_without_a_resource_version_starts_with_what_exists(cluster: KubeCluster) -> None:
    cluster.apply(pytorch_job("a"))
    cluster.apply(pytorch_job("b"))
    watch = cluster.watch(KUBEFLOW, "PyTorchJob", NAMESPACE, timeout_seconds=10)
    try:
        assert sorted(summary(next(watch)) for _ in range(2)) == [("ADDED", "a"), ("ADDED", "b")]
        cluster.delete(KUBEFLOW, "PyTorchJob", NAMESPACE, "a", propagation=Propagation.BACKGROUND)
        assert summary(next(watch)) == ("DELETED", "a")  # at once: no foreground marking
    finally:
        watch.close()


def test_watch_from_a_compacted_version_relists_and_loses_no_change(
    cluster: KubeCluster, fake: FakeKubernetes
) -> None:
    cluster.apply(pytorch_job("changed"))
    cluster.apply(pytorch_job("deleted"))
    cluster.apply(pytorch_job("same"))
    items, version = cluster.list(KUBEFLOW, "PyTorchJob", NAMESPACE)

    cluster.apply(pytorch_job("changed", workers=4))
    cluster.delete(KUBEFLOW, "PyTorchJob", NAMESPACE, "deleted")
    cluster.apply(pytorch_job("new"))
    fake.compact()

    watch = cluster.watch(
        KUBEFLOW, "PyTorchJob", NAMESPACE, resource_version=version, known=items, timeout_seconds=10
    )
    try:
        relisted = [next(watch) for _ in range(3)]
        assert {summary(e) for e in relisted} == {
            ("DELETED", "deleted"),
            ("MODIFIED", "changed"),
            ("ADDED", "new"),
        }
        # Only once the whole difference is taken in may a new watch start from the list.
        assert [e.resume_version for e in relisted] == ["", "", str(fake.resource_version)]
        # Then it watches on from the new list.
        cluster.apply(pytorch_job("later"))
        assert summary(next(watch)) == ("ADDED", "later")
    finally:
        watch.close()
    watches = [r for r in fake.requests_to("GET", JOBS) if r.param("watch") == "true"]
    assert watches[0].param("resourceVersion") == version
    assert len(watches) == 2


def test_a_watch_left_behind_by_compaction_relists(
    cluster: KubeCluster, fake: FakeKubernetes
) -> None:
    cluster.apply(pytorch_job("train"))
    watch = cluster.watch(KUBEFLOW, "PyTorchJob", NAMESPACE, timeout_seconds=10)
    try:
        assert summary(next(watch)) == ("ADDED", "train")  # from the list it starts with
        cluster.apply(pytorch_job("train", workers=2))
        assert summary(next(watch)) == ("MODIFIED", "train")  # on the open stream

        # A change, then a compaction before the stream could send it: the stream ends with
        # 410 Gone, and the watch relists.
        with fake.atomically():
            fake.update(
                KUBEFLOW,
                "pytorchjobs",
                NAMESPACE,
                "train",
                lambda job: job["spec"]["runPolicy"].update(suspend=True),
            )
            fake.compact()
        event = next(watch)
        assert summary(event) == ("MODIFIED", "train")
        assert event.object["spec"]["runPolicy"]["suspend"] is True
    finally:
        watch.close()
    gets = fake.requests_to("GET", JOBS)
    assert [r.param("watch") for r in gets] == [None, "true", None]  # list, watch, relist


def test_a_watch_resumes_where_the_server_ended_its_stream(
    cluster: KubeCluster, fake: FakeKubernetes, sleeps: list[float]
) -> None:
    cluster.apply(pytorch_job("train"))
    watch = cluster.watch(KUBEFLOW, "PyTorchJob", NAMESPACE, timeout_seconds=10)
    try:
        assert summary(next(watch)) == ("ADDED", "train")
        seen = cluster.apply(pytorch_job("train", workers=2))
        assert summary(next(watch)) == ("MODIFIED", "train")
        with fake.atomically():  # the stream ends before it could send the change
            fake.end_watches()
            fake.set_status(KUBEFLOW, "pytorchjobs", NAMESPACE, "train", {"startTime": "now"})
        event = next(watch)
        assert summary(event) == ("MODIFIED", "train")
        assert event.object["status"] == {"startTime": "now"}
        assert event.resume_version == event.resource_version
    finally:
        watch.close()
    watches = [r for r in fake.requests_to("GET", JOBS) if r.param("watch") == "true"]
    assert len(watches) == 2
    assert watches[1].param("resourceVersion") == seen["metadata"]["resourceVersion"]
    assert sleeps == []  # the first stream carried events: no backoff


def test_a_watch_ends_at_its_timeout(cluster: KubeCluster, fake: FakeKubernetes) -> None:
    cluster.apply(pytorch_job("train"))
    events = list(cluster.watch(KUBEFLOW, "PyTorchJob", NAMESPACE, timeout_seconds=1))
    assert [summary(e) for e in events] == [("ADDED", "train")]
    (request,) = [r for r in fake.requests_to("GET", JOBS) if r.param("watch") == "true"]
    assert request.param("timeoutSeconds") == "1"


# ---- pod logs --------------------------------------------------------------------------------


def test_pod_log_tail_since_and_timestamps(cluster: KubeCluster, fake: FakeKubernetes) -> None:
    fake.create(running_pod("train-master-0"))
    an_hour_ago = datetime.now(UTC) - timedelta(hours=1)
    fake.append_log(NAMESPACE, "train-master-0", "old", at=an_hour_ago)
    fake.append_log(NAMESPACE, "train-master-0", "epoch 1", "epoch 2", "epoch 3")

    everything = list(cluster.pod_log(NAMESPACE, "train-master-0"))
    assert everything == ["old\n", "epoch 1\n", "epoch 2\n", "epoch 3\n"]
    assert list(cluster.pod_log(NAMESPACE, "train-master-0", tail_lines=2)) == [
        "epoch 2\n",
        "epoch 3\n",
    ]
    recent = list(cluster.pod_log(NAMESPACE, "train-master-0", since_seconds=60))
    assert recent == ["epoch 1\n", "epoch 2\n", "epoch 3\n"]

    (stamped,) = cluster.pod_log(NAMESPACE, "train-master-0", tail_lines=1, timestamps=True)
    stamp, _, text = stamped.partition(" ")
    assert text == "epoch 3\n"
    assert datetime.fromisoformat(stamp[:26] + "+00:00") <= datetime.now(UTC)

    assert list(cluster.pod_log(NAMESPACE, "absent")) == []


def test_pod_log_follow_streams_new_lines_until_the_pod_ends(
    cluster: KubeCluster, fake: FakeKubernetes
) -> None:
    fake.create(running_pod("train-master-0"))
    fake.append_log(NAMESPACE, "train-master-0", "starting")
    lines = cluster.pod_log(NAMESPACE, "train-master-0", follow=True)
    try:
        assert next(lines) == "starting\n"
        # The stream is open: a line printed now arrives on it.
        fake.append_log(NAMESPACE, "train-master-0", "epoch 1")
        assert next(lines) == "epoch 1\n"
        fake.append_log(NAMESPACE, "train-master-0", "done")
        fake.set_status("v1", "pods", NAMESPACE, "train-master-0", {"phase": "Succeeded"})
        assert list(lines) == ["done\n"]
    finally:
        lines.close()


# ---- retries and errors ----------------------------------------------------------------------


def test_retries_429_and_500_then_succeeds(
    cluster: KubeCluster, fake: FakeKubernetes, sleeps: list[float]
) -> None:
    fake.fail(JOBS, 429, retry_after=3)
    fake.fail(JOBS, 500, times=2)
    assert cluster.apply(pytorch_job("train"))["metadata"]["name"] == "train"
    assert sleeps == [3.0, 0.4, 0.8]  # Retry-After honoured, then exponential backoff
    assert [r.status for r in fake.requests_to("PATCH", JOBS)] == [429, 500, 500, 201]

    sleeps.clear()
    fake.fail(JOBS, 503)
    assert cluster.get(KUBEFLOW, "PyTorchJob", NAMESPACE, "train") is not None
    assert sleeps == [0.2]


def test_apply_retries_conflicts_and_a_merge_patch_does_not(
    cluster: KubeCluster, fake: FakeKubernetes, sleeps: list[float]
) -> None:
    fake.fail(JOBS, 409, times=2, method="PATCH")
    assert cluster.apply(pytorch_job("train"))["metadata"]["generation"] == 1
    assert len(sleeps) == 2

    fake.fail(JOBS, 409, method="PATCH")
    with pytest.raises(ClusterConflict, match="the object has been modified"):
        cluster.patch(KUBEFLOW, "PyTorchJob", NAMESPACE, "train", {"spec": {}})
    assert len(sleeps) == 2


def test_a_server_failing_every_retry_is_unavailable(
    fake: FakeKubernetes, tmp_path: Path, sleeps: list[float]
) -> None:
    kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
    retry = RetryPolicy(attempts=3)
    with KubeCluster.from_config(kubeconfig, None, retry=retry, sleep=sleeps.append) as cluster:
        fake.fail(JOBS, 500, times=5)
        with pytest.raises(ClusterUnavailable) as raised:
            cluster.list(KUBEFLOW, "PyTorchJob", NAMESPACE)
    assert raised.value.transient is True
    assert raised.value.status == 500
    assert isinstance(raised.value.__cause__, ApiException)
    assert sleeps == [0.2, 0.4]


def test_an_unreachable_server_is_unavailable(tmp_path: Path, sleeps: list[float]) -> None:
    with FakeKubernetes() as fake:
        kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
    kubeconfig.write_text(kubeconfig.read_text().replace(f":{fake.port}", f":{free_port()}"))
    retry = RetryPolicy(attempts=2)
    with (
        KubeCluster.from_config(kubeconfig, None, retry=retry, sleep=sleeps.append) as cluster,
        pytest.raises(ClusterUnavailable, match="cannot reach the Kubernetes API server"),
    ):
        cluster.nodes()
    assert sleeps == [0.2]


def test_forbidden_carries_the_server_message(
    cluster: KubeCluster, fake: FakeKubernetes, sleeps: list[float]
) -> None:
    message = (
        'pytorchjobs.kubeflow.org "train" is forbidden: User '
        '"system:serviceaccount:lockstep:lockstep" cannot patch resource "pytorchjobs" in API '
        f'group "kubeflow.org" in the namespace "{NAMESPACE}"'
    )
    fake.fail(f"{JOBS}/train", 403, message=message)
    with pytest.raises(ClusterForbidden) as raised:
        cluster.apply(pytorch_job("train"))
    assert str(raised.value) == message
    assert raised.value.message == message
    assert (raised.value.status, raised.value.reason) == (403, "Forbidden")
    assert isinstance(raised.value.__cause__, ApiException)
    assert sleeps == []


def test_a_wrong_token_is_forbidden(fake: FakeKubernetes, tmp_path: Path) -> None:
    kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
    kubeconfig.write_text(kubeconfig.read_text().replace(fake.token, "not-the-token"))
    with KubeCluster.from_config(kubeconfig, None) as cluster, pytest.raises(ClusterForbidden):
        cluster.nodes()


def test_a_missing_kubeconfig_is_a_cluster_error(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match="cannot load kubeconfig"):
        KubeCluster.from_config(tmp_path / "absent", None)


# ---- nodes, and the import boundary ----------------------------------------------------------


def test_nodes(cluster: KubeCluster, fake: FakeKubernetes) -> None:
    for index in range(2):
        fake.create(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"gpu-{index}",
                    "labels": {"kai.scheduler/node-pool": "a100"},
                },
                "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"}},
            }
        )
    nodes = cluster.nodes()
    assert [node["metadata"]["name"] for node in nodes] == ["gpu-0", "gpu-1"]
    assert nodes[0]["kind"] == "Node"
    assert nodes[0]["status"]["allocatable"]["nvidia.com/gpu"] == "8"


def test_importing_lockstep_does_not_import_kubernetes() -> None:
    code = (
        "import sys, lockstep, lockstep.runtimes.kubernetes.cluster; "
        "sys.exit('kubernetes' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
