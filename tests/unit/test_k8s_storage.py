"""A pod spec's `storage` on Kubernetes (runtimes/kubernetes/storage.py): each kind's volume
and mount, the PVCs lockstep creates (persistent or pod-ephemeral), Block-mode claims as
devices, the git-sync init container and its credentials, data volumes through their claims,
and S3 through the configured CSI driver."""

from __future__ import annotations

from typing import Any

import pytest

from lockstep.domain.labels import WORKLOAD_ID
from lockstep.runtimes.kubernetes.identity import KEEP_ON_DELETE
from tests.unit.k8s import container, of_kind, pod_spec, rendered

Manifest = dict[str, Any]


def storage(entries: dict[str, Any], **settings: Any) -> list[Manifest]:
    return rendered({"storage": entries}, settings=settings)


def volumes(manifests: list[Manifest]) -> dict[str, Manifest]:
    return {volume["name"]: volume for volume in pod_spec(manifests)["volumes"]}


def mounts(manifests: list[Manifest]) -> dict[str, Manifest]:
    return {mount["name"]: mount for mount in container(manifests)["volumeMounts"]}


def test_an_existing_pvc_is_mounted_by_name() -> None:
    manifests = storage(
        {"pvc": [{"path": "/data", "existingPvc": True, "claimName": "shared", "readOnly": True}]}
    )
    assert of_kind(manifests, "PersistentVolumeClaim") == []
    assert volumes(manifests)["pvc-0"] == {
        "name": "pvc-0",
        "persistentVolumeClaim": {"claimName": "shared", "readOnly": True},
    }
    assert mounts(manifests)["pvc-0"] == {"name": "pvc-0", "mountPath": "/data", "readOnly": True}


def test_a_claim_created_from_claim_info_outlives_the_workload() -> None:
    manifests = storage(
        {
            "pvc": [
                {
                    "path": "/data",
                    "claimName": "results",
                    "claimInfo": {
                        "size": "50Gi",
                        "storageClass": "fast-ssd",
                        "accessModes": {"readWriteMany": True, "readOnlyMany": True},
                        "volumeMode": "Filesystem",
                        "addedAttrValues": [{"key": "backup", "value": "daily"}],
                    },
                }
            ]
        }
    )
    (claim,) = of_kind(manifests, "PersistentVolumeClaim")
    assert claim["metadata"]["name"] == "results"
    assert claim["metadata"]["labels"][KEEP_ON_DELETE] == "true"
    assert claim["metadata"]["annotations"] == {"backup": "daily"}
    assert claim["spec"] == {
        "accessModes": ["ReadOnlyMany", "ReadWriteMany"],
        "resources": {"requests": {"storage": "50Gi"}},
        "storageClassName": "fast-ssd",
        "volumeMode": "Filesystem",
    }
    assert volumes(manifests)["pvc-0"]["persistentVolumeClaim"]["claimName"] == "results"
    assert manifests.index(claim) < [m["kind"] for m in manifests].index("PyTorchJob")


def test_a_created_claim_without_a_name_or_size_gets_the_workloads_name_and_default_size() -> None:
    manifests = storage({"pvc": [{"path": "/data"}]}, default_claim_size="5Gi")
    (claim,) = of_kind(manifests, "PersistentVolumeClaim")
    assert claim["metadata"]["name"] == "train-pvc-0"
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert claim["spec"]["resources"] == {"requests": {"storage": "5Gi"}}


def test_a_claim_shared_by_master_and_workers_is_created_once() -> None:
    manifests = rendered(
        {"storage": {"pvc": [{"path": "/data", "claimName": "c", "claimInfo": {"size": "1Gi"}}]}},
        masterSpecSameAsWorker=False,
        masterSpec={
            "image": "x:1",
            "command": "python",
            "storage": {"pvc": [{"path": "/d", "claimName": "c", "claimInfo": {"size": "1Gi"}}]},
        },
    )
    assert [c["metadata"]["name"] for c in of_kind(manifests, "PersistentVolumeClaim")] == ["c"]


def test_an_ephemeral_claim_is_a_pod_ephemeral_volume() -> None:
    manifests = storage(
        {"pvc": [{"path": "/scratch", "ephemeral": True, "claimInfo": {"size": "100Gi"}}]}
    )
    assert of_kind(manifests, "PersistentVolumeClaim") == []
    template = volumes(manifests)["pvc-0"]["ephemeral"]["volumeClaimTemplate"]
    assert template["metadata"]["labels"][WORKLOAD_ID] == "6f1c1f0e-8a5e-4c1b-9d7e-2f0a7d1b3c4e"
    assert template["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "100Gi"}},
    }
    assert mounts(manifests)["pvc-0"] == {"name": "pvc-0", "mountPath": "/scratch"}


def test_a_block_claim_is_a_device_at_its_path() -> None:
    manifests = storage(
        {"pvc": [{"path": "/dev/xvda", "claimInfo": {"size": "1Gi", "volumeMode": "Block"}}]}
    )
    main = container(manifests)
    assert main["volumeDevices"] == [{"name": "pvc-0", "devicePath": "/dev/xvda"}]
    assert "volumeMounts" not in main


@pytest.mark.parametrize(
    ("entry", "volume", "mount"),
    [
        (
            {
                "hostPath": [
                    {
                        "path": "/mnt/datasets",
                        "mountPath": "/data",
                        "readOnly": False,
                        "mountPropagation": "HostToContainer",
                    }
                ]
            },
            {"name": "host-path-0", "hostPath": {"path": "/mnt/datasets"}},
            {"name": "host-path-0", "mountPath": "/data", "mountPropagation": "HostToContainer"},
        ),
        (
            # read-only is the document's default
            {"hostPath": [{"path": "/mnt/datasets", "mountPath": "/data"}]},
            {"name": "host-path-0", "hostPath": {"path": "/mnt/datasets"}},
            {"name": "host-path-0", "mountPath": "/data", "readOnly": True},
        ),
        (
            {
                "nfs": [
                    {
                        "server": "nfs.example.com",
                        "path": "/exports/a",
                        "mountPath": "/a",
                        "readOnly": False,
                    }
                ]
            },
            {
                "name": "nfs-0",
                "nfs": {"server": "nfs.example.com", "path": "/exports/a", "readOnly": False},
            },
            {"name": "nfs-0", "mountPath": "/a"},
        ),
        (
            {
                "configMapVolume": [
                    {
                        "configMap": "settings",
                        "mountPath": "/etc/app/app.yaml",
                        "subPath": "app.yaml",
                        "defaultMode": "0644",
                    }
                ]
            },
            {"name": "config-map-0", "configMap": {"name": "settings", "defaultMode": 0o644}},
            {"name": "config-map-0", "mountPath": "/etc/app/app.yaml", "subPath": "app.yaml"},
        ),
        (
            {"secretVolume": [{"secret": "tls", "mountPath": "/etc/tls", "defaultMode": "0400"}]},
            {"name": "secret-0", "secret": {"secretName": "tls", "defaultMode": 0o400}},
            {"name": "secret-0", "mountPath": "/etc/tls"},
        ),
        (
            {"emptyDirVolume": [{"path": "/cache", "medium": "Memory", "sizeLimit": "2Gi"}]},
            {"name": "empty-dir-0", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}},
            {"name": "empty-dir-0", "mountPath": "/cache"},
        ),
        (
            {"emptyDirVolume": [{"path": "/cache"}]},
            {"name": "empty-dir-0", "emptyDir": {}},
            {"name": "empty-dir-0", "mountPath": "/cache"},
        ),
        (
            {
                "dataVolume": [
                    {"id": "123e4567-e89b-12d3-a456-426614174000", "mountPath": "/mnt/data"}
                ]
            },
            {
                "name": "data-volume-0",
                "persistentVolumeClaim": {
                    "claimName": "data-volume-123e4567-e89b-12d3-a456-426614174000"
                },
            },
            {"name": "data-volume-0", "mountPath": "/mnt/data"},
        ),
        (
            {
                "s3": [
                    {
                        "bucket": "datasets",
                        "path": "/s3",
                        "url": "https://s3.example.com",
                        "accessKeySecret": "s3-keys",
                    }
                ]
            },
            {
                "name": "s3-0",
                "csi": {
                    "driver": "ru.yandex.s3.csi",
                    "volumeAttributes": {
                        "bucket": "datasets",
                        "endpoint": "https://s3.example.com",
                    },
                    "nodePublishSecretRef": {"name": "s3-keys"},
                },
            },
            {"name": "s3-0", "mountPath": "/s3"},
        ),
    ],
)
def test_volume_kinds(entry: dict[str, Any], volume: Manifest, mount: Manifest) -> None:
    manifests = storage(entry)
    assert volumes(manifests) == {volume["name"]: volume}
    assert mounts(manifests) == {mount["name"]: mount}


def test_the_s3_driver_is_configurable() -> None:
    manifests = storage({"s3": [{"bucket": "b", "path": "/s3"}]}, s3_csi_driver="s3.csi.aws.com")
    assert volumes(manifests)["s3-0"]["csi"] == {
        "driver": "s3.csi.aws.com",
        "volumeAttributes": {"bucket": "b"},
    }


def test_volume_names_are_unique_whatever_the_entries_are_named() -> None:
    manifests = storage(
        {
            "emptyDirVolume": [
                {"name": "Same Name", "path": "/a"},
                {"name": "Same Name", "path": "/b", "exclude": True},
                {"name": "Same Name", "path": "/c"},
            ],
            "hostPath": [{"name": "Same Name", "path": "/h", "mountPath": "/d"}],
        }
    )
    assert list(volumes(manifests)) == ["host-path-0", "empty-dir-0", "empty-dir-1"]
    assert [m["mountPath"] for m in container(manifests)["volumeMounts"]] == ["/d", "/a", "/c"]


def env_of(init: Manifest) -> dict[str, Any]:
    return {v["name"]: v.get("value", v.get("valueFrom")) for v in init["env"]}


def test_git_clones_once_into_an_empty_dir_before_the_containers_start() -> None:
    manifests = storage(
        {"git": [{"repository": "https://github.com/org/repo", "branch": "main", "path": "/src"}]},
        git_sync_image="git-sync:test",
    )
    (init,) = pod_spec(manifests)["initContainers"]
    assert init["name"] == "git-0-sync"
    assert init["image"] == "git-sync:test"
    assert env_of(init) == {
        "GITSYNC_REPO": "https://github.com/org/repo",
        "GITSYNC_ROOT": "/git",
        "GITSYNC_LINK": "current",
        "GITSYNC_ONE_TIME": "true",
        "GITSYNC_REF": "main",
    }
    assert init["volumeMounts"] == [{"name": "git-0", "mountPath": "/git"}]
    assert volumes(manifests) == {"git-0": {"name": "git-0", "emptyDir": {}}}
    assert mounts(manifests)["git-0"] == {
        "name": "git-0",
        "mountPath": "/src",
        "subPath": "current",
    }


def test_git_revision_wins_over_branch() -> None:
    manifests = storage(
        {"git": [{"repository": "r", "branch": "main", "revision": "abc123", "path": "/src"}]}
    )
    assert env_of(pod_spec(manifests)["initContainers"][0])["GITSYNC_REF"] == "abc123"


@pytest.mark.parametrize(
    ("entry", "user", "password"),
    [
        ({"passwordSecret": "creds"}, ("creds", "User"), ("creds", "Password")),
        (
            {"passwordSecret": "creds", "secretKeyOfUser": "u", "secretKeyOfPassword": "p"},
            ("creds", "u"),
            ("creds", "p"),
        ),
        (
            {
                "secretRef": {
                    "name": "git",
                    "authenticationMethod": "password",
                    "secretKeyOfUser": "login",
                }
            },
            ("git", "login"),
            ("git", "Password"),
        ),
    ],
)
def test_git_password_credentials_come_from_the_secret(
    entry: dict[str, Any], user: tuple[str, str], password: tuple[str, str]
) -> None:
    manifests = storage({"git": [{"repository": "r", "path": "/src", **entry}]})
    env = env_of(pod_spec(manifests)["initContainers"][0])
    assert env["GITSYNC_USERNAME"] == {"secretKeyRef": {"name": user[0], "key": user[1]}}
    assert env["GITSYNC_PASSWORD"] == {"secretKeyRef": {"name": password[0], "key": password[1]}}


def test_git_ssh_key_is_mounted_into_the_init_container_only() -> None:
    manifests = storage(
        {
            "git": [
                {
                    "repository": "git@github.com:org/repo.git",
                    "path": "/src",
                    "secretRef": {"name": "deploy-key", "authenticationMethod": "ssh-key"},
                }
            ]
        }
    )
    (init,) = pod_spec(manifests)["initContainers"]
    env = env_of(init)
    assert env["GITSYNC_SSH_KEY_FILE"] == "/etc/git-secret/ssh-privatekey"
    assert "GITSYNC_PASSWORD" not in env
    assert {"name": "git-0-ssh", "mountPath": "/etc/git-secret", "readOnly": True} in init[
        "volumeMounts"
    ]
    assert volumes(manifests)["git-0-ssh"] == {
        "name": "git-0-ssh",
        "secret": {"secretName": "deploy-key", "defaultMode": 0o444},
    }
    assert "git-0-ssh" not in mounts(manifests)
