"""A pod spec as a pod template (runtimes/kubernetes/pods.py, environment.py, security.py):
the container's image, command and args split as a shell would, working directory, stdin and
tty, environment variables of every source, ports and readiness probe; the template's labels
and annotations; image pull secrets; the security contexts and host namespaces."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.environment import container_env
from lockstep.runtimes.kubernetes.security import security_contexts
from lockstep.schemas.pod import EnvironmentVariable
from lockstep.schemas.security import Security
from tests.unit.k8s import container, pod_spec, rendered, template


def test_container_basics() -> None:
    main = container(
        rendered(
            {
                "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                "imagePullPolicy": "IfNotPresent",
                "command": "torchrun --nproc-per-node 8",
                "args": "train.py --name 'my run' --lr=0.1",
                "workingDir": "/workspace",
                "stdin": True,
                "tty": False,
            }
        )
    )
    assert main["image"] == "nvcr.io/nvidia/pytorch:24.05-py3"
    assert main["imagePullPolicy"] == "IfNotPresent"
    assert main["command"] == ["torchrun", "--nproc-per-node", "8"]
    assert main["args"] == ["train.py", "--name", "my run", "--lr=0.1"]
    assert main["workingDir"] == "/workspace"
    assert main["stdin"] is True
    assert main["tty"] is False


def test_args_without_a_command_go_to_the_images_entrypoint() -> None:
    main = container(rendered({"args": "--epochs 3"}, without=("command",)))
    assert "command" not in main
    assert main["args"] == ["--epochs", "3"]


def test_an_mpi_worker_without_a_command_is_left_to_the_operators_sshd() -> None:
    manifests = rendered(
        {"distributedFramework": "MPI", "args": "ignored"},
        without=("command",),
        masterSpecSameAsWorker=False,
        masterSpec={"image": "mpi:1", "command": "mpirun", "args": "-np 2 python x.py"},
    )
    worker = container(manifests, "Worker")
    assert "command" not in worker
    assert "args" not in worker
    launcher = container(manifests, "Launcher")
    assert launcher["command"] == ["mpirun"]
    assert launcher["args"] == ["-np", "2", "python", "x.py"]


@pytest.mark.parametrize(
    ("variable", "expected"),
    [
        ({"name": "A", "value": "1"}, {"name": "A", "value": "1"}),
        ({"name": "A"}, {"name": "A", "value": ""}),
        (
            {"name": "A", "secret": {"name": "creds", "key": "token"}},
            {"name": "A", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
        ),
        (
            {"name": "A", "value": "ignored", "secret": {"name": "creds", "key": "token"}},
            {"name": "A", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
        ),
        (
            {"name": "A", "configMap": {"name": "settings", "key": "mode"}},
            {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}},
        ),
        (
            {"name": "NODE", "podFieldRef": {"path": "spec.nodeName"}},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        ),
    ],
)
def test_environment_variable_sources(variable: dict[str, Any], expected: dict[str, Any]) -> None:
    assert container_env([EnvironmentVariable.model_validate_json(json.dumps(variable))]) == [
        expected
    ]


def test_environment_honours_exclude_and_the_last_definition() -> None:
    main = container(
        rendered(
            {
                "environmentVariables": [
                    {"name": "A", "value": "1"},
                    {"name": "B", "value": "2", "exclude": True},
                    {"name": "C", "value": "3"},
                    {"name": "A", "value": "4"},
                ]
            }
        )
    )
    assert main["env"] == [{"name": "A", "value": "4"}, {"name": "C", "value": "3"}]


def test_a_user_credential_cannot_be_read_on_kubernetes() -> None:
    variable = EnvironmentVariable.model_validate(
        {"name": "A", "userCredential": {"name": "mine", "key": "k"}}
    )
    with pytest.raises(PodStartError, match="user credentials"):
        container_env([variable])


def test_ports_and_readiness_probe() -> None:
    main = container(
        rendered(
            {
                "ports": [
                    {"container": 8080, "serviceType": "ClusterIP"},
                    {"container": 8080, "serviceType": "NodePort"},
                    {"container": 6006, "exclude": True},
                ],
                "probes": {
                    "readiness": {
                        "initialDelaySeconds": 5,
                        "periodSeconds": 2,
                        "failureThreshold": 4,
                        "handler": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTPS"}},
                    }
                },
            }
        )
    )
    assert main["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert main["readinessProbe"] == {
        "httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTPS"},
        "initialDelaySeconds": 5,
        "periodSeconds": 2,
        "failureThreshold": 4,
    }


def test_labels_and_annotations_honour_exclude_and_lockstep_wins_a_clash() -> None:
    meta = template(
        rendered(
            {
                "labels": [
                    {"name": "stage", "value": "research"},
                    {"name": "dropped", "value": "x", "exclude": True},
                    {"name": "lockstep.io/role", "value": "spoofed"},
                ],
                "annotations": [
                    {"name": "billing", "value": "unit-7"},
                    {"name": "gone", "value": "y", "exclude": True},
                ],
            }
        ),
        "Master",
    )["metadata"]
    assert meta["labels"]["stage"] == "research"
    assert "dropped" not in meta["labels"]
    assert meta["labels"]["lockstep.io/role"] == "master"
    assert meta["annotations"] == {"billing": "unit-7"}


def test_image_pull_secrets_honour_exclude() -> None:
    spec = pod_spec(
        rendered(
            {
                "imagePullSecrets": [
                    {"name": "registry-a"},
                    {"name": "registry-b", "exclude": True},
                ]
            }
        )
    )
    assert spec["imagePullSecrets"] == [{"name": "registry-a"}]


def test_an_image_pull_user_credential_cannot_be_used() -> None:
    with pytest.raises(PodStartError, match="user credentials"):
        rendered({"imagePullSecrets": [{"name": "mine", "userCredential": True}]})


def test_termination_grace_period() -> None:
    assert (
        pod_spec(rendered({"terminationGracePeriodSeconds": 45}))["terminationGracePeriodSeconds"]
        == 45
    )


@pytest.mark.parametrize(
    ("security", "pod", "main"),
    [
        (
            {
                "uidGidSource": "custom",
                "runAsUid": 1000,
                "runAsGid": 100,
                "supplementalGroups": "2, 3,5",
                "runAsNonRoot": True,
                "seccompProfileType": "RuntimeDefault",
                "hostIpc": True,
                "hostNetwork": False,
            },
            {
                "securityContext": {
                    "runAsUser": 1000,
                    "runAsGroup": 100,
                    "supplementalGroups": [2, 3, 5],
                    "runAsNonRoot": True,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "hostIPC": True,
                "hostNetwork": False,
            },
            {},
        ),
        (
            {"runAsUid": 1000},
            {"securityContext": {"runAsUser": 1000}},
            {},
        ),
        (
            {"uidGidSource": "fromTheImage", "runAsUid": 1000, "supplementalGroups": "4"},
            {},
            {},
        ),
        (
            {
                "readOnlyRootFilesystem": True,
                "allowPrivilegeEscalation": False,
                "capabilities": ["NET_ADMIN", "SYS_PTRACE"],
            },
            {},
            {
                "readOnlyRootFilesystem": True,
                "allowPrivilegeEscalation": False,
                "capabilities": {"add": ["NET_ADMIN", "SYS_PTRACE"]},
            },
        ),
    ],
)
def test_security(security: dict[str, Any], pod: dict[str, Any], main: dict[str, Any]) -> None:
    contexts = security_contexts(Security.model_validate_json(json.dumps(security)))
    assert contexts.pod == pod
    assert contexts.container == main


def test_security_lands_on_the_pod_and_container() -> None:
    manifests = rendered(
        {"security": {"runAsUid": 7, "hostNetwork": True, "readOnlyRootFilesystem": True}}
    )
    spec = pod_spec(manifests)
    assert spec["securityContext"] == {"runAsUser": 7}
    assert spec["hostNetwork"] is True
    assert container(manifests)["securityContext"] == {"readOnlyRootFilesystem": True}
