"""Every manifest rendered from a matrix of requests validates: each framework, with the
master running the workers' spec or its own, under each scheduler, with each GPU mode and
each kind of storage, and the documentation's example request. Custom resources validate
against their CRD's openAPIV3Schema (tests/reference/k8s/crds), built-in objects and every pod
template against Kubernetes' own schemas (`kubernetes-validate`, strict); then the API
server's and the operators' rules beyond the schemas (tests/unit/k8s_schemas.py).

A combination lockstep cannot run on Kubernetes must say so: a fractional GPU without KAI, a
JAX worker-0 with a spec of its own.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.settings import SchedulerKind
from tests.unit.k8s import JOB_KEYS, Manifest, manifests_of, workload_of
from tests.unit.k8s_schemas import (
    as_pod_template,
    metadata_errors,
    object_errors,
    operator_errors,
    pod_errors,
    schema_errors,
)
from tests.unit.specs import reference_file, request_body

FRAMEWORKS = ("PyTorch", "TF", "XGBoost", "JAX", "MPI")
GPU_MODES: dict[str, dict[str, Any]] = {
    "no-gpu": {},
    "whole": {"gpuDevicesRequest": 2},
    "portion": {"gpuDevicesRequest": 1, "gpuRequestType": "portion", "gpuPortionRequest": 0.5},
    "memory": {"gpuDevicesRequest": 1, "gpuRequestType": "memory", "gpuMemoryRequest": "4Gi"},
}
STORAGE: dict[str, dict[str, Any]] = {
    "none": {},
    "pvc-existing": {"pvc": [{"path": "/data", "existingPvc": True, "claimName": "shared"}]},
    "pvc-created": {
        "pvc": [
            {
                "path": "/results",
                "claimName": "results",
                "claimInfo": {
                    "size": "10Gi",
                    "storageClass": "standard",
                    "accessModes": {"readWriteMany": True},
                    "addedAttrValues": [{"key": "backup", "value": "daily"}],
                },
            }
        ]
    },
    "pvc-ephemeral": {
        "pvc": [{"path": "/scratch", "ephemeral": True, "claimInfo": {"size": "100Gi"}}]
    },
    "pvc-block": {
        "pvc": [{"path": "/dev/xvdb", "claimInfo": {"size": "1Gi", "volumeMode": "Block"}}]
    },
    "host-path": {
        "hostPath": [{"path": "/mnt/d", "mountPath": "/d", "mountPropagation": "HostToContainer"}]
    },
    "nfs": {"nfs": [{"server": "nfs.example.com", "path": "/exports", "mountPath": "/nfs"}]},
    "config-map": {
        "configMapVolume": [
            {
                "configMap": "app",
                "mountPath": "/etc/app/a.yaml",
                "subPath": "a.yaml",
                "defaultMode": "0644",
            }
        ]
    },
    "secret": {"secretVolume": [{"secret": "tls", "mountPath": "/tls", "defaultMode": "0400"}]},
    "empty-dir": {"emptyDirVolume": [{"path": "/cache", "medium": "Memory", "sizeLimit": "1Gi"}]},
    "git-password": {
        "git": [
            {
                "repository": "https://github.com/org/repo",
                "branch": "main",
                "path": "/src",
                "secretRef": {"name": "git-creds", "authenticationMethod": "password"},
            }
        ]
    },
    "git-ssh": {
        "git": [
            {
                "repository": "git@github.com:org/repo.git",
                "revision": "0123abc",
                "path": "/src",
                "secretRef": {"name": "deploy-key", "authenticationMethod": "ssh-key"},
            }
        ]
    },
    "data-volume": {
        "dataVolume": [{"id": "123e4567-e89b-12d3-a456-426614174000", "mountPath": "/mnt/data"}]
    },
    "s3": {
        "s3": [
            {
                "bucket": "datasets",
                "path": "/s3",
                "url": "https://s3.example.com",
                "accessKeySecret": "s3-keys",
            }
        ]
    },
}
RICH_SPEC: dict[str, Any] = {
    "image": "nvcr.io/nvidia/pytorch:24.05-py3",
    "imagePullPolicy": "IfNotPresent",
    "imagePullSecrets": [{"name": "registry"}],
    "command": "python -u",
    "args": "train.py --epochs 3",
    "workingDir": "/workspace",
    "environmentVariables": [
        {"name": "MODE", "value": "fast"},
        {"name": "TOKEN", "secret": {"name": "creds", "key": "token"}},
        {"name": "LEVEL", "configMap": {"name": "settings", "key": "level"}},
        {"name": "POD_IP", "podFieldRef": {"path": "status.podIP"}},
    ],
    "labels": [{"name": "team", "value": "vision"}],
    "annotations": [{"name": "example.com/owner", "value": "Ann Smith <ann@example.com>"}],
    "tolerations": [
        {"operator": "Exists", "key": "nvidia.com/gpu", "effect": "NoSchedule"},
        {
            "operator": "Exists",
            "key": "node.kubernetes.io/unreachable",
            "effect": "NoExecute",
            "seconds": 60,
        },
        {"operator": "Exists", "effect": "Any"},
    ],
    "nodePools": ["a100", "h100"],
    "nodeType": "dgx",
    "nodeAffinityRequired": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["16"]}]}
        ]
    },
    "podAffinity": {"type": "Preferred", "key": "topology.kubernetes.io/zone"},
    "ports": [
        {"container": 6006, "serviceType": "NodePort", "external": 30606},
        {"container": 9090, "serviceType": "ClusterIP"},
    ],
    "exposedUrls": [
        {"container": 6006, "url": "https://board.example.com", "authorizedUsers": ["ann"]}
    ],
    "probes": {
        "readiness": {
            "periodSeconds": 5,
            "handler": {"httpGet": {"path": "/healthz", "port": 9090}},
        }
    },
    "security": {
        "uidGidSource": "custom",
        "runAsUid": 1000,
        "runAsGid": 1000,
        "supplementalGroups": "5,6",
        "runAsNonRoot": True,
        "seccompProfileType": "RuntimeDefault",
        "allowPrivilegeEscalation": False,
        "capabilities": ["IPC_LOCK"],
    },
    "terminationGracePeriodSeconds": 30,
    "backoffLimit": 2,
    "autoDeletionTimeAfterCompletionSeconds": 3600,
    "cleanPodPolicy": "Running",
    "terminateAfterPreemption": True,
}
MASTER_SPEC: dict[str, Any] = {
    "image": "nvcr.io/nvidia/pytorch:24.05-py3",
    "command": "python",
    "args": "coordinate.py",
    "compute": {"cpuCoreRequest": 2, "cpuMemoryRequest": "4Gi"},
    "ports": [{"container": 8888, "serviceType": "LoadBalancer", "external": 80}],
    "exposedUrls": [{"container": 8888, "authorizationType": "authenticatedUsers"}],
    "storage": {"emptyDirVolume": [{"path": "/tmp/master"}]},
    "restartPolicy": "OnFailure",
}
KIND_SPEC: dict[str, dict[str, Any]] = {
    "PyTorch": {"minReplicas": 1, "maxReplicas": 3},
    "MPI": {"slotsPerWorker": 2, "mpiLauncherCreationPolicy": "WaitForWorkersReady"},
}


@dataclass(frozen=True)
class Case:
    name: str
    body: dict[str, Any]
    scheduler: SchedulerKind
    refused: str | None = None
    """Why lockstep must refuse to render it, if it must."""
    known_error: str | None = None
    """A pattern every validation error matches: a defect of the request itself, which the
    rendering keeps rather than hides (at least one such error must be found)."""


def body_of(framework: str, *, own_master: bool, gpu: str, storage: str) -> dict[str, Any]:
    # An elastic PyTorch workload is worker pods only: with a master of its own it is fixed.
    elastic_master = framework == "PyTorch" and own_master
    spec = {
        **RICH_SPEC,
        **({} if elastic_master else KIND_SPEC.get(framework, {})),
        "distributedFramework": framework,
        "numWorkers": 2,
        "compute": {
            "cpuCoreRequest": 1.5,
            "cpuCoreLimit": 4,
            "cpuMemoryRequest": "8Gi",
            "cpuMemoryLimit": "16Gi",
            "largeShmRequest": True,
            "extendedResources": [{"resource": "rdma/ib", "quantity": "1"}],
            **GPU_MODES[gpu],
        },
        "storage": STORAGE[storage],
    }
    if not own_master:
        return request_body(spec=spec, masterSpecSameAsWorker=True)
    return request_body(spec=spec, masterSpecSameAsWorker=False, masterSpec=MASTER_SPEC)


def refusal(framework: str, *, own_master: bool, gpu: str, scheduler: SchedulerKind) -> str | None:
    if framework == "JAX" and own_master:
        return "worker-0 cannot run a masterSpec"
    if gpu in {"portion", "memory"} and scheduler is not SchedulerKind.KAI:
        return "needs KAI Scheduler's GPU sharing"
    return None


def matrix() -> list[Case]:
    """Every framework, master, scheduler and GPU mode together, each with a kind of storage
    in turn; then every framework with every kind of storage."""
    cases = []
    storages = itertools.cycle(STORAGE)
    for framework, own_master, scheduler, gpu in itertools.product(
        FRAMEWORKS, (False, True), SchedulerKind, GPU_MODES
    ):
        storage = next(storages)
        master = "own-master" if own_master else "same-master"
        cases.append(
            Case(
                name=f"{framework}-{master}-{scheduler}-{gpu}-{storage}",
                body=body_of(framework, own_master=own_master, gpu=gpu, storage=storage),
                scheduler=scheduler,
                refused=refusal(framework, own_master=own_master, gpu=gpu, scheduler=scheduler),
            )
        )
    for framework, storage in itertools.product(FRAMEWORKS, STORAGE):
        cases.append(
            Case(
                name=f"{framework}-storage-{storage}",
                body=body_of(framework, own_master=False, gpu="whole", storage=storage),
                scheduler=SchedulerKind.VOLCANO,
            )
        )
    return cases


DUPLICATE_TEXT_MOUNT = r"duplicate map entries \['\[\"text\"\]'\]|mounts twice at 'text'"


def example_cases() -> list[Case]:
    """The documentation's example (MPI), as it is and with each other framework, under each
    scheduler. It mounts a config map and a secret both at `text`, which Kubernetes refuses (a
    container's mount paths are unique): that error, and only it, must be found; with the two
    mounted apart, it validates."""
    example = json.loads(reference_file("examples/create-request.json").read_text())
    cases = []
    for framework, scheduler, apart in itertools.product(FRAMEWORKS, SchedulerKind, (False, True)):
        body = copy.deepcopy(example)
        body["spec"]["distributedFramework"] = framework
        if framework != "MPI":
            body["spec"].pop("slotsPerWorker")
        if apart:
            for spec in (body["spec"], body["masterSpec"]):
                spec["storage"]["configMapVolume"][0]["mountPath"] = "/etc/config"
                spec["storage"]["secretVolume"][0]["mountPath"] = "/etc/secret"
        cases.append(
            Case(
                name=f"example-{framework}-{scheduler}{'-mounted-apart' if apart else ''}",
                body=body,
                scheduler=scheduler,
                refused=refusal(framework, own_master=False, gpu="portion", scheduler=scheduler),
                known_error=None if apart else DUPLICATE_TEXT_MOUNT,
            )
        )
    return cases


CASES = matrix() + example_cases()


def validation_errors(manifests: list[Manifest]) -> list[str]:
    errors: list[str] = []
    for manifest in manifests:
        where = f"{manifest['kind']}/{manifest['metadata']['name']}"
        errors += [f"{where}: {e}" for e in schema_errors(manifest)]
        errors += object_errors(manifest, manifests)
        if manifest["kind"] in JOB_KEYS:
            errors += [f"{where}: {e}" for e in operator_errors(manifest)]
            replicas = manifest["spec"][JOB_KEYS[manifest["kind"]]]
            for replica_type, replica in replicas.items():
                template = replica["template"]
                pod = as_pod_template(
                    template,
                    name=f"{manifest['metadata']['name']}-{replica_type.lower()}",
                    namespace=manifest["metadata"]["namespace"],
                )
                errors += [f"{where} {replica_type}: {e}" for e in schema_errors(pod)]
                errors += pod_errors(template, f"{where} {replica_type}")
        for volume in _claim_templates(manifest):
            claim = volume["ephemeral"]["volumeClaimTemplate"]
            errors += metadata_errors(claim["metadata"], f"{where} {volume['name']}")
    return errors


def _claim_templates(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    if manifest["kind"] not in JOB_KEYS:
        return []
    replicas = manifest["spec"][JOB_KEYS[manifest["kind"]]].values()
    return [
        volume
        for replica in replicas
        for volume in replica["template"]["spec"].get("volumes", ())
        if "ephemeral" in volume
    ]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_rendered_manifests_validate(case: Case) -> None:
    workload = workload_of(case.body, name="train-x7k2q")
    if case.refused is not None:
        with pytest.raises(PodStartError, match=case.refused):
            manifests_of(workload, case.scheduler)
        return
    errors = validation_errors(manifests_of(workload, case.scheduler))
    if case.known_error is None:
        assert errors == []
    else:
        assert errors
        assert [e for e in errors if not re.search(case.known_error, e)] == []


def test_the_matrix_covers_every_dimension() -> None:
    """Each value of each dimension is rendered and validated (not only refused)."""
    rendered = [case.name for case in CASES if case.refused is None]
    for framework, master, scheduler, gpu in itertools.product(
        FRAMEWORKS, ("same-master", "own-master"), SchedulerKind, GPU_MODES
    ):
        prefix = f"{framework}-{master}-{scheduler}-{gpu}-"
        expected = refusal(
            framework, own_master=master == "own-master", gpu=gpu, scheduler=scheduler
        )
        assert any(n.startswith(prefix) for n in rendered) is (expected is None)
    for framework, storage in itertools.product(FRAMEWORKS, STORAGE):
        assert f"{framework}-storage-{storage}" in rendered
    for framework in FRAMEWORKS:
        assert f"example-{framework}-kai" in rendered


def test_the_validators_catch_what_they_should() -> None:
    """A broken manifest of each sort fails: an unknown field in a CRD, a wrong type in a
    pod template, an int32 out of range, a duplicate container port, a missing default
    container, a Service without a port name, a restartPolicy MPI refuses."""
    manifests = manifests_of(
        workload_of(body_of("MPI", own_master=False, gpu="whole", storage="none")),
        SchedulerKind.KAI,
    )
    job = next(m for m in manifests if m["kind"] == "MPIJob")
    broken = copy.deepcopy(job)
    broken["spec"]["slotsPerWorkers"] = 1
    assert any("slotsPerWorkers" in e for e in schema_errors(broken))
    broken = copy.deepcopy(job)
    broken["spec"]["slotsPerWorker"] = 2**31
    assert schema_errors(broken)
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]
    broken = copy.deepcopy(job)
    ports = broken["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    ports["ports"] = [{"containerPort": 1}, {"containerPort": 1}]
    assert any("duplicate map" in e for e in schema_errors(broken))
    pod = as_pod_template(worker["template"], name="p", namespace="n")
    pod["template"]["spec"]["containers"][0]["stdin"] = "yes"
    assert schema_errors(pod)
    broken = copy.deepcopy(job)
    broken["spec"]["mpiReplicaSpecs"]["Launcher"]["restartPolicy"] = "Always"
    assert operator_errors(broken) == ["Launcher: restartPolicy Always"]
    pytorch = next(
        m
        for m in manifests_of(
            workload_of(body_of("PyTorch", own_master=True, gpu="no-gpu", storage="none"))
        )
        if m["kind"] == "PyTorchJob"
    )
    pytorch["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0][
        "name"
    ] = "main"
    assert operator_errors(pytorch) == ["Master: no container named pytorch"]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "n"},
        "spec": {"ports": [{"port": 1}, {"port": 2}]},
    }
    assert object_errors(service, [service]) == ["Service/s: ports need unique names"]
    assert schema_errors({**service, "spec": {"ports": [{"port": "x"}]}})
