"""A pod spec's `storage` as volumes, the main container's mounts, and what else they need:
the PVCs lockstep creates, and the init container that clones a git repository.

Called by `pods` (volumes, mounts, init containers) and `render` (the claims, applied before
the job). Each kind of storage is one row of `_KINDS`, whose volumes are named `<kind>-<i>`
(the entries' own names need not be unique or DNS labels).

- pvc: an existing claim by name; or one created from `claimInfo`: an `ephemeral` one as a
  pod-ephemeral volume (a claim per pod, deleted with the pod, so with the workload and when it
  is suspended), any other as a PVC object that outlives the workload (`keep-on-delete`).
  A Block-mode claim is a device at `path`, not a mount.
- hostPath, nfs, configMap (with subPath and defaultMode), secret (defaultMode), emptyDir.
- git: git-sync clones the repository once into an emptyDir before the containers start;
  credentials come from the secret named (user and password keys, or `ssh-privatekey`).
- dataVolume: the PVC `<data_volume_claim_prefix><id>` of the project's namespace.
- s3: an inline CSI volume of the configured driver, with the bucket and endpoint as volume
  attributes and the access-key secret as its node-publish secret (the driver reads the keys
  under its own names).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lockstep.domain.workload import Workload
from lockstep.runtimes.kubernetes.identity import KEEP_ON_DELETE, metadata, workload_labels
from lockstep.runtimes.kubernetes.names import child_name
from lockstep.runtimes.kubernetes.settings import KubernetesSettings
from lockstep.schemas.storage import (
    S3,
    ClaimInfo,
    ConfigMapVolume,
    DataVolume,
    EmptyDirVolume,
    Git,
    GitAuthenticationMethod,
    HostPath,
    Nfs,
    Pvc,
    PvcVolumeMode,
    SecretVolume,
    Storage,
)

GIT_ROOT = "/git"
GIT_LINK = "current"
"""git-sync links the checked-out tree here, relative to its root; the main container mounts
that link (as a subPath) at the entry's path."""
GIT_SSH_DIR = "/etc/git-secret"
GIT_SSH_KEY = "ssh-privatekey"
"""The key of the ssh-key secret holding the private key (that of a `kubernetes.io/ssh-auth`
secret)."""
DEFAULT_GIT_USER_KEY = "User"
DEFAULT_GIT_PASSWORD_KEY = "Password"  # noqa: S105 (the name of a secret's key)
READABLE_BY_ALL = 0o444
"""git-sync runs as its image's user: the key must be readable by it (ssh refuses only a key
file of its own user that others may read)."""


@dataclass(frozen=True, slots=True)
class Mounted:
    """What one storage entry adds to a pod."""

    volumes: tuple[dict[str, Any], ...]
    mount: dict[str, Any] | None = None
    device: dict[str, Any] | None = None
    init_container: dict[str, Any] | None = None
    claim: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class PodStorage:
    """Everything a pod spec's `storage` adds to a pod, and the claims to create first."""

    volumes: list[dict[str, Any]] = field(default_factory=list)
    mounts: list[dict[str, Any]] = field(default_factory=list)
    devices: list[dict[str, Any]] = field(default_factory=list)
    init_containers: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Context:
    workload: Workload
    settings: KubernetesSettings


def access_modes(info: ClaimInfo) -> list[str]:
    """The access modes asked for; ReadWriteOnce when none is."""
    modes = info.access_modes
    if modes is None:
        return ["ReadWriteOnce"]
    chosen = [
        mode
        for flag, mode in (
            (modes.read_write_once, "ReadWriteOnce"),
            (modes.read_only_many, "ReadOnlyMany"),
            (modes.read_write_many, "ReadWriteMany"),
        )
        if flag
    ]
    return chosen or ["ReadWriteOnce"]


def claim_spec(info: ClaimInfo | None, *, default_size: str) -> dict[str, Any]:
    """The `spec` of a claim created from `claimInfo`."""
    info = info or ClaimInfo()
    spec: dict[str, Any] = {
        "accessModes": access_modes(info),
        "resources": {"requests": {"storage": info.size or default_size}},
    }
    if info.storage_class:
        spec["storageClassName"] = info.storage_class
    if info.volume_mode is not None:
        spec["volumeMode"] = info.volume_mode.value
    return spec


def _pvc(item: Pvc, name: str, context: _Context) -> Mounted:
    read_only = bool(item.read_only)
    info = item.claim_info
    claim: dict[str, Any] | None = None
    if item.existing_pvc:
        volume = {
            "name": name,
            "persistentVolumeClaim": {"claimName": item.claim_name or "", "readOnly": read_only},
        }
    elif item.ephemeral:
        template_spec = claim_spec(info, default_size=context.settings.default_claim_size)
        volume = {
            "name": name,
            "ephemeral": {
                "volumeClaimTemplate": {
                    "metadata": {"labels": workload_labels(context.workload)},
                    "spec": template_spec,
                }
            },
        }
    else:
        claim_name = item.claim_name or child_name(context.workload.name, name)
        claim_metadata = metadata(context.workload, claim_name, labels={KEEP_ON_DELETE: "true"})
        attributes = (info.added_attr_values if info is not None else None) or ()
        added = {attribute.key: attribute.value or "" for attribute in attributes}
        if added:
            claim_metadata["annotations"] = added
        claim = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": claim_metadata,
            "spec": claim_spec(info, default_size=context.settings.default_claim_size),
        }
        volume = {
            "name": name,
            "persistentVolumeClaim": {"claimName": claim_name, "readOnly": read_only},
        }
    path = item.path or ""
    if info is not None and info.volume_mode is PvcVolumeMode.BLOCK and not item.existing_pvc:
        return Mounted((volume,), device={"name": name, "devicePath": path}, claim=claim)
    return Mounted((volume,), mount=_mount(name, path, read_only=read_only), claim=claim)


def _mount(name: str, path: str, *, read_only: bool = False, **extra: Any) -> dict[str, Any]:
    mount: dict[str, Any] = {"name": name, "mountPath": path}
    if read_only:
        mount["readOnly"] = True
    return mount | {key: value for key, value in extra.items() if value is not None}


def _host_path(item: HostPath, name: str, context: _Context) -> Mounted:
    del context
    read_only = item.read_only is not False  # the document's default is read-only
    mount = _mount(
        name,
        item.mount_path or "",
        read_only=read_only,
        mountPropagation=None if item.mount_propagation is None else item.mount_propagation.value,
    )
    return Mounted(({"name": name, "hostPath": {"path": item.path or ""}},), mount=mount)


def _nfs(item: Nfs, name: str, context: _Context) -> Mounted:
    del context
    read_only = item.read_only is not False  # the document's default is read-only
    volume = {
        "name": name,
        "nfs": {"server": item.server or "", "path": item.path or "", "readOnly": read_only},
    }
    return Mounted((volume,), mount=_mount(name, item.mount_path or "", read_only=read_only))


def _mode(text: str | None) -> int | None:
    """`"0644"` as the integer the API takes."""
    return None if text is None else int(text, 8)


def _config_map(item: ConfigMapVolume, name: str, context: _Context) -> Mounted:
    del context
    source: dict[str, Any] = {"name": item.config_map or ""}
    if item.default_mode is not None:
        source["defaultMode"] = _mode(item.default_mode)
    mount = _mount(name, item.mount_path or "", subPath=item.sub_path)
    return Mounted(({"name": name, "configMap": source},), mount=mount)


def _secret(item: SecretVolume, name: str, context: _Context) -> Mounted:
    del context
    source: dict[str, Any] = {"secretName": item.secret or ""}
    if item.default_mode is not None:
        source["defaultMode"] = _mode(item.default_mode)
    return Mounted(({"name": name, "secret": source},), mount=_mount(name, item.mount_path or ""))


def _empty_dir(item: EmptyDirVolume, name: str, context: _Context) -> Mounted:
    del context
    source: dict[str, Any] = {}
    if item.medium:
        source["medium"] = item.medium
    if item.size_limit is not None:
        source["sizeLimit"] = item.size_limit
    return Mounted(({"name": name, "emptyDir": source},), mount=_mount(name, item.path or ""))


def _data_volume(item: DataVolume, name: str, context: _Context) -> Mounted:
    claim = f"{context.settings.data_volume_claim_prefix}{item.id}"
    volume = {"name": name, "persistentVolumeClaim": {"claimName": claim}}
    return Mounted((volume,), mount=_mount(name, item.mount_path or ""))


def _s3(item: S3, name: str, context: _Context) -> Mounted:
    attributes = {"bucket": item.bucket or ""}
    if item.url:
        attributes["endpoint"] = item.url
    source: dict[str, Any] = {
        "driver": context.settings.s3_csi_driver,
        "volumeAttributes": attributes,
    }
    if item.access_key_secret:
        source["nodePublishSecretRef"] = {"name": item.access_key_secret}
    return Mounted(({"name": name, "csi": source},), mount=_mount(name, item.path or ""))


def _secret_env(variable: str, secret: str, key: str) -> dict[str, Any]:
    return {"name": variable, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def git_credentials(
    item: Git, ssh_volume: str
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """(env, ssh-key volume) of git-sync for the secret the entry names, if any."""
    ref = item.secret_ref
    if ref is not None and ref.authentication_method is GitAuthenticationMethod.SSH_KEY:
        volume = {
            "name": ssh_volume,
            "secret": {"secretName": ref.name, "defaultMode": READABLE_BY_ALL},
        }
        env = [
            {"name": "GITSYNC_SSH_KEY_FILE", "value": f"{GIT_SSH_DIR}/{GIT_SSH_KEY}"},
            {"name": "GITSYNC_SSH_KNOWN_HOSTS", "value": "false"},
        ]
        return env, volume
    if ref is not None:
        secret, user, password = ref.name, ref.secret_key_of_user, ref.secret_key_of_password
    elif item.password_secret:
        secret = item.password_secret
        user, password = item.secret_key_of_user, item.secret_key_of_password
    else:
        return [], None
    env = [
        _secret_env("GITSYNC_USERNAME", secret, user or DEFAULT_GIT_USER_KEY),
        _secret_env("GITSYNC_PASSWORD", secret, password or DEFAULT_GIT_PASSWORD_KEY),
    ]
    return env, None


def _git(item: Git, name: str, context: _Context) -> Mounted:
    ssh_volume = f"{name}-ssh"
    credentials, key_volume = git_credentials(item, ssh_volume)
    env = [
        {"name": "GITSYNC_REPO", "value": item.repository or ""},
        {"name": "GITSYNC_ROOT", "value": GIT_ROOT},
        {"name": "GITSYNC_LINK", "value": GIT_LINK},
        {"name": "GITSYNC_ONE_TIME", "value": "true"},
    ]
    ref = item.revision or item.branch
    if ref:
        env.append({"name": "GITSYNC_REF", "value": ref})
    mounts: list[dict[str, Any]] = [{"name": name, "mountPath": GIT_ROOT}]
    volumes: list[dict[str, Any]] = [{"name": name, "emptyDir": {}}]
    if key_volume is not None:
        volumes.append(key_volume)
        mounts.append({"name": ssh_volume, "mountPath": GIT_SSH_DIR, "readOnly": True})
    init = {
        "name": f"{name}-sync",
        "image": context.settings.git_sync_image,
        "env": env + credentials,
        "volumeMounts": mounts,
    }
    mount = _mount(name, item.path or "", subPath=GIT_LINK)
    return Mounted(tuple(volumes), mount=mount, init_container=init)


_Builder = Callable[[Any, str, _Context], Mounted]

_KINDS: tuple[tuple[str, str, _Builder], ...] = (
    ("pvc", "pvc", _pvc),
    ("data_volume", "data-volume", _data_volume),
    ("host_path", "host-path", _host_path),
    ("nfs", "nfs", _nfs),
    ("config_map_volume", "config-map", _config_map),
    ("secret_volume", "secret", _secret),
    ("empty_dir_volume", "empty-dir", _empty_dir),
    ("git", "git", _git),
    ("s3", "s3", _s3),
)
"""Each kind of storage: the `Storage` field, the prefix of its volumes' names, its builder."""


def pod_storage(
    storage: Storage | None, *, workload: Workload, settings: KubernetesSettings
) -> PodStorage:
    """What the entries of `storage` that are not excluded add to a pod."""
    result = PodStorage()
    if storage is None:
        return result
    context = _Context(workload, settings)
    for attribute, prefix, build in _KINDS:
        items = [item for item in getattr(storage, attribute) or () if not item.exclude]
        for index, item in enumerate(items):
            mounted = build(item, f"{prefix}-{index}", context)
            result.volumes.extend(mounted.volumes)
            for target, value in (
                (result.mounts, mounted.mount),
                (result.devices, mounted.device),
                (result.init_containers, mounted.init_container),
                (result.claims, mounted.claim),
            ):
                if value is not None:
                    target.append(value)
    return result
