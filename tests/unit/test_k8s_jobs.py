"""The job a workload renders to (runtimes/kubernetes/render.py, kinds.py): the kind of each
framework, its replica types, counts, container names and restart policies, the kind-specific
fields (elasticPolicy, MPI's), runPolicy, the workload's identity on every object, the apply
order, and what cannot be rendered."""

from __future__ import annotations

from typing import Any

import pytest

from lockstep.domain.labels import WORKLOAD_ID as WORKLOAD_ID_LABEL
from lockstep.domain.phases import DesiredPhase
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.kinds import JOB_KINDS
from lockstep.runtimes.kubernetes.names import MAX_NAME_LENGTH, child_name
from lockstep.runtimes.kubernetes.settings import MpiImplementation, SchedulerKind
from lockstep.schemas.distributed import DistributedFramework
from tests.unit.k8s import (
    WORKLOAD_ID,
    container,
    job_of,
    manifests_of,
    rendered,
    replica_specs,
    template,
    workload_of,
)
from tests.unit.specs import request_body


@pytest.mark.parametrize(
    ("framework", "api_version", "kind", "replicas", "container_name"),
    [
        ("PyTorch", "kubeflow.org/v1", "PyTorchJob", {"Master": 1, "Worker": 3}, "pytorch"),
        ("TF", "kubeflow.org/v1", "TFJob", {"Chief": 1, "Worker": 3}, "tensorflow"),
        ("XGBoost", "kubeflow.org/v1", "XGBoostJob", {"Master": 1, "Worker": 3}, "xgboost"),
        ("JAX", "kubeflow.org/v1", "JAXJob", {"Worker": 4}, "jax"),
        ("MPI", "kubeflow.org/v2beta1", "MPIJob", {"Launcher": 1, "Worker": 3}, "mpi"),
    ],
)
def test_each_framework_renders_its_kind_with_the_operators_container_name(
    framework: str, api_version: str, kind: str, replicas: dict[str, int], container_name: str
) -> None:
    manifests = rendered({"distributedFramework": framework, "numWorkers": 3})
    job = job_of(manifests)
    assert (job["apiVersion"], job["kind"]) == (api_version, kind)
    assert job["metadata"]["name"] == "train"
    assert job["metadata"]["namespace"] == "runai-team-a"
    specs = replica_specs(manifests)
    assert {name: spec["replicas"] for name, spec in specs.items()} == replicas
    for name in specs:
        assert container(manifests, name)["name"] == container_name


@pytest.mark.parametrize(
    ("framework", "port_name", "port"),
    [
        (DistributedFramework.PYTORCH, "pytorchjob-port", 23456),
        (DistributedFramework.TF, "tfjob-port", 2222),
        (DistributedFramework.XGBOOST, "xgboostjob-port", 9999),
        (DistributedFramework.JAX, "jaxjob-port", 6666),
        (DistributedFramework.MPI, None, None),
    ],
)
def test_the_operators_default_ports(
    framework: DistributedFramework, port_name: str | None, port: int | None
) -> None:
    assert (JOB_KINDS[framework].port_name, JOB_KINDS[framework].port) == (port_name, port)


@pytest.mark.parametrize(
    ("framework", "restart_policy", "expected"),
    [
        ("PyTorch", None, "OnFailure"),
        ("TF", None, "Never"),
        ("XGBoost", None, "Never"),
        ("JAX", None, "Never"),
        ("MPI", None, "Never"),
        ("PyTorch", "Always", "Always"),
        ("TF", "OnFailure", "OnFailure"),
        ("MPI", "OnFailure", "OnFailure"),
        ("MPI", "Always", "OnFailure"),  # mpi-operator accepts only Never and OnFailure
    ],
)
def test_restart_policy_per_replica_type(
    framework: str, restart_policy: str | None, expected: str
) -> None:
    spec: dict[str, Any] = {"distributedFramework": framework}
    if restart_policy is not None:
        spec["restartPolicy"] = restart_policy
    for replica in replica_specs(rendered(spec)).values():
        assert replica["restartPolicy"] == expected
        assert "restartPolicy" not in replica["template"]["spec"]


def test_a_master_with_its_own_spec_has_its_own_template_and_restart_policy() -> None:
    master = {
        "image": "trainer:2",
        "command": "python",
        "args": "lead.py",
        "restartPolicy": "Never",
    }
    manifests = rendered(
        {"restartPolicy": "OnFailure"}, masterSpecSameAsWorker=False, masterSpec=master
    )
    specs = replica_specs(manifests)
    assert specs["Master"]["restartPolicy"] == "Never"
    assert specs["Worker"]["restartPolicy"] == "OnFailure"
    assert container(manifests, "Master")["image"] == "trainer:2"
    assert container(manifests, "Master")["args"] == ["lead.py"]
    assert container(manifests, "Worker")["image"] == "python:3.11"


def test_jax_runs_every_worker_from_one_template_without_a_role_label() -> None:
    manifests = rendered({"distributedFramework": "JAX", "numWorkers": 2})
    assert replica_specs(manifests)["Worker"]["replicas"] == 3
    assert "lockstep.io/role" not in template(manifests)["metadata"]["labels"]


def test_jax_cannot_give_worker_0_a_spec_of_its_own() -> None:
    body = request_body(
        spec={"distributedFramework": "JAX"},
        masterSpecSameAsWorker=False,
        masterSpec={"image": "other:1", "command": "python"},
    )
    workload = workload_of(body)
    with pytest.raises(PodStartError, match="worker-0 cannot run a masterSpec"):
        manifests_of(workload)


def test_jax_accepts_a_master_spec_equal_to_the_workers() -> None:
    body = request_body(spec={"distributedFramework": "JAX"}, masterSpecSameAsWorker=True)
    assert replica_specs(manifests_of(workload_of(body)))["Worker"]["replicas"] == 3


@pytest.mark.parametrize(
    ("elastic", "policy"),
    [
        ({"minReplicas": 1, "maxReplicas": 4}, {"minReplicas": 1, "maxReplicas": 4}),
        ({"minReplicas": 2}, {"minReplicas": 2, "maxReplicas": 2}),
        ({"maxReplicas": 3}, {"minReplicas": 3, "maxReplicas": 3}),
    ],
)
def test_pytorch_elastic_policy_from_min_and_max_replicas(
    elastic: dict[str, int], policy: dict[str, int]
) -> None:
    job = job_of(rendered({"numWorkers": 2 if "maxReplicas" not in elastic else 3, **elastic}))
    assert job["spec"]["elasticPolicy"] == {**policy, "rdzvBackend": "c10d"}


@pytest.mark.parametrize(
    ("workers", "elastic", "min_available"),
    [
        (2, {"minReplicas": 2, "maxReplicas": 2}, 2),
        (3, {"minReplicas": 1, "maxReplicas": 4}, 1),
        (1, {"minReplicas": 1}, 1),
    ],
)
def test_an_elastic_pytorch_job_is_workers_only(
    workers: int, elastic: dict[str, int], min_available: int
) -> None:
    """As Kubeflow's elastic PyTorchJobs: one Worker replica spec of numWorkers pods, no
    Master, so elasticPolicy's bounds count exactly the nodes of the rendezvous (the operator
    puts it on worker-0); KAI gangs the minimum."""
    manifests = rendered({"numWorkers": workers, **elastic}, masterSpecSameAsWorker=True)
    specs = replica_specs(manifests)
    assert list(specs) == ["Worker"]
    assert specs["Worker"]["replicas"] == workers
    job = job_of(manifests)
    policy = job["spec"]["elasticPolicy"]
    assert policy["minReplicas"] <= workers <= policy["maxReplicas"]
    assert job["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] == min_available


def test_no_elastic_policy_without_min_or_max_replicas() -> None:
    assert "elasticPolicy" not in job_of(rendered())["spec"]


def test_mpi_fields() -> None:
    job = job_of(
        rendered(
            {
                "distributedFramework": "MPI",
                "slotsPerWorker": 4,
                "sshAuthMountPath": "/home/mpiuser/.ssh",
                "mpiLauncherCreationPolicy": "WaitForWorkersReady",
            },
            settings={"mpi_implementation": MpiImplementation.INTEL},
        )
    )
    spec = job["spec"]
    assert spec["slotsPerWorker"] == 4
    assert spec["sshAuthMountPath"] == "/home/mpiuser/.ssh"
    assert spec["launcherCreationPolicy"] == "WaitForWorkersReady"
    assert spec["mpiImplementation"] == "Intel"


def test_mpi_defaults() -> None:
    spec = job_of(rendered({"distributedFramework": "MPI"}))["spec"]
    assert spec["slotsPerWorker"] == 1
    assert spec["sshAuthMountPath"] == "/root/.ssh"
    assert spec["mpiImplementation"] == "OpenMPI"
    assert "launcherCreationPolicy" not in spec


def test_run_policy() -> None:
    job = job_of(
        rendered(
            {
                "backoffLimit": 2,
                "autoDeletionTimeAfterCompletionSeconds": 600,
                "cleanPodPolicy": "All",
            },
            scheduler=SchedulerKind.DEFAULT,
        )
    )
    assert job["spec"]["runPolicy"] == {
        "cleanPodPolicy": "All",
        "backoffLimit": 2,
        "suspend": False,
        "ttlSecondsAfterFinished": 600,
    }


def test_run_policy_defaults() -> None:
    policy = job_of(rendered(scheduler=SchedulerKind.DEFAULT))["spec"]["runPolicy"]
    assert policy == {"cleanPodPolicy": "None", "backoffLimit": 6, "suspend": False}


@pytest.mark.parametrize(
    ("desired", "suspend"),
    [(DesiredPhase.RUNNING, False), (DesiredPhase.STOPPED, True)],
)
def test_a_stopped_workload_renders_suspended(desired: DesiredPhase, suspend: bool) -> None:
    workload = workload_of(request_body(), desired=desired)
    assert job_of(manifests_of(workload))["spec"]["runPolicy"]["suspend"] is suspend


def test_every_object_carries_the_workloads_identity_and_namespace() -> None:
    body = request_body(
        spec={
            "ports": [{"container": 8080, "serviceType": "NodePort"}],
            "exposedUrls": [{"container": 8080, "url": "https://a.example.com/x"}],
            "storage": {"pvc": [{"path": "/data", "claimInfo": {"size": "1Gi"}}]},
        }
    )
    manifests = manifests_of(workload_of(body), SchedulerKind.VOLCANO)
    assert [m["kind"] for m in manifests] == [
        "PersistentVolumeClaim",
        "PodGroup",
        "PyTorchJob",
        "Service",
        "Service",
        "Ingress",
    ]
    for manifest in manifests:
        labels = manifest["metadata"]["labels"]
        assert labels[WORKLOAD_ID_LABEL] == WORKLOAD_ID
        assert labels["lockstep.io/workload-name"] == "train"
        assert labels["lockstep.io/project-id"] == "7"
        assert labels["app.kubernetes.io/managed-by"] == "lockstep"
        assert manifest["metadata"]["namespace"] == "runai-team-a"
    for replica in replica_specs(manifests).values():
        assert replica["template"]["metadata"]["labels"][WORKLOAD_ID_LABEL] == WORKLOAD_ID


def test_the_job_is_named_after_the_stored_workload() -> None:
    workload = workload_of(request_body(name="train"), name="train-x7k2q")
    job = job_of(manifests_of(workload))
    assert job["metadata"]["name"] == "train-x7k2q"


def test_render_is_pure_and_repeatable() -> None:
    workload = workload_of(request_body())
    assert manifests_of(workload) == manifests_of(workload)


@pytest.mark.parametrize(
    ("job", "suffixes", "expected"),
    [
        ("train", ("worker", "nodeport"), "train-worker-nodeport"),
        ("a" * 50, ("clusterip",), f"{'a' * 50}-clusterip"),
    ],
)
def test_child_names(job: str, suffixes: tuple[str, ...], expected: str) -> None:
    assert child_name(job, *suffixes) == expected


def test_a_long_child_name_is_cut_and_hashed_within_a_dns_label() -> None:
    first = child_name("a" * 60, "worker", "loadbalancer")
    second = child_name("a" * 60, "launcher", "loadbalancer")
    assert len(first) == MAX_NAME_LENGTH
    assert first != second
    assert first.startswith("a" * 50)


def test_a_name_must_start_with_a_letter_on_kubernetes() -> None:
    """lockstep's rule is a DNS-1123 label; the operators name Services after the job."""
    workload = workload_of(request_body(name="1st-run"))
    with pytest.raises(PodStartError, match="'1st-run' must start with a letter"):
        manifests_of(workload)
