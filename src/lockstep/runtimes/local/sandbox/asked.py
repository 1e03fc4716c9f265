"""What a pod's spec asks of its sandbox on this machine: the volumes to prepare and where to
mount them (`storage`), and the identity and privileges to run with (`security`). Pure: the
local runtime prepares the volumes (volumes/prepare.py) and builds the sandbox from this.

Also says, field by field, what the spec asks that only a sandbox can give, so that a pod
whose machine has none is refused (or, with the sandbox turned off, warned about) by name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Any, TypeVar

from lockstep.domain.quantities import parse_quantity
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.sandbox.definition import DEFAULT_SHM_BYTES, Identity
from lockstep.schemas.distributed import PodSpec
from lockstep.schemas.security import SeccompProfileType, UidGidSource
from lockstep.schemas.storage import S3, Git, HostPathMountPropagation

Entry = TypeVar("Entry")


class VolumeKind(StrEnum):
    HOST_PATH = "hostPath"
    PVC = "pvc"
    DATA_VOLUME = "dataVolume"
    GIT = "git"
    S3 = "s3"
    NFS = "nfs"
    CONFIG_MAP = "configMapVolume"
    SECRET = "secretVolume"  # noqa: S105 - a kind of volume
    EMPTY_DIR = "emptyDirVolume"


@dataclass(frozen=True, slots=True)
class VolumeAsk:
    """One entry of `storage`, as the runtime prepares and mounts it."""

    kind: VolumeKind
    index: int
    """Its place among the entries of its kind (names the pod's directory for it)."""
    target: str
    read_only: bool = False
    source: str | None = None
    """hostPath: the path; pvc: the claim's name; dataVolume: its id; nfs: server:path;
    configMap and secret: the name of the config map or secret."""
    sub_path: str | None = None
    """configMap: mount only this key, as a file at `target`."""
    mode: int | None = None
    """configMap and secret files' permissions."""
    memory: bool = False
    """emptyDir medium Memory."""
    size_bytes: int | None = None
    """emptyDir's size limit; a claim's requested size."""
    create: bool = False
    """pvc: lockstep creates the claim (existingPvc false)."""
    ephemeral: bool = False
    """pvc: removed with the workload."""
    git: Git | None = None
    s3: S3 | None = None
    private: bool = False
    """hostPath: mounts made on this machine under it later do not reach the pod
    (mountPropagation None, the default); otherwise they do (HostToContainer)."""

    @property
    def directory_name(self) -> str:
        return f"{self.kind.value}-{self.index}"

    @property
    def remote(self) -> bool:
        """Fetched from elsewhere (slow, may fail): prepared by the pod's own set-up process
        rather than by the runtime."""
        return self.kind in {VolumeKind.GIT, VolumeKind.S3, VolumeKind.NFS}

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "index": self.index,
            "target": self.target,
            "readOnly": self.read_only,
            "source": self.source,
            "subPath": self.sub_path,
            "mode": self.mode,
            "memory": self.memory,
            "sizeBytes": self.size_bytes,
            "create": self.create,
            "ephemeral": self.ephemeral,
            "git": None if self.git is None else self.git.to_wire(),
            "s3": None if self.s3 is None else self.s3.to_wire(),
            "private": self.private,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VolumeAsk:
        return cls(
            kind=VolumeKind(data["kind"]),
            index=data["index"],
            target=data["target"],
            read_only=data["readOnly"],
            source=data["source"],
            sub_path=data["subPath"],
            mode=data["mode"],
            memory=data["memory"],
            size_bytes=data["sizeBytes"],
            create=data["create"],
            ephemeral=data["ephemeral"],
            git=None if data["git"] is None else Git.model_validate(data["git"]),
            s3=None if data["s3"] is None else S3.model_validate(data["s3"]),
            private=bool(data.get("private")),
        )


@dataclass(frozen=True, slots=True)
class SecurityAsk:
    identity: Identity | None
    read_only_root: bool
    added_capabilities: tuple[str, ...]
    """Those `capabilities` adds to a container's defaults."""
    private_ipc: bool
    seccomp: bool
    """The default filter (RuntimeDefault, unless the spec asks Unconfined)."""
    run_as_non_root: bool
    shm_bytes: int | None


def volumes_of(spec: PodSpec) -> list[VolumeAsk]:
    """Every storage entry of the spec that is not excluded, in the order of the API's kinds."""
    storage = spec.storage
    if storage is None:
        return []
    asks: list[VolumeAsk] = []
    for i, host in enumerate(_kept(storage.host_path)):
        asks.append(
            VolumeAsk(
                VolumeKind.HOST_PATH,
                i,
                _required(host.mount_path, "hostPath", "mountPath"),
                read_only=host.read_only is not False,
                source=_required(host.path, "hostPath", "path"),
                private=host.mount_propagation is not HostPathMountPropagation.HOST_TO_CONTAINER,
            )
        )
    for i, claim in enumerate(_kept(storage.pvc)):
        size = claim.claim_info.size if claim.claim_info is not None else None
        asks.append(
            VolumeAsk(
                VolumeKind.PVC,
                i,
                _required(claim.path, "pvc", "path"),
                read_only=bool(claim.read_only),
                source=claim.claim_name,
                create=not claim.existing_pvc,
                ephemeral=bool(claim.ephemeral),
                size_bytes=None if size is None else int(parse_quantity(str(size))),
            )
        )
    for i, data in enumerate(_kept(storage.data_volume)):
        asks.append(
            VolumeAsk(
                VolumeKind.DATA_VOLUME,
                i,
                _required(data.mount_path, "dataVolume", "mountPath"),
                read_only=True,
                source=None if data.id is None else str(data.id),
            )
        )
    for i, git in enumerate(_kept(storage.git)):
        asks.append(VolumeAsk(VolumeKind.GIT, i, _required(git.path, "git", "path"), git=git))
    for i, s3 in enumerate(_kept(storage.s3)):
        asks.append(VolumeAsk(VolumeKind.S3, i, _required(s3.path, "s3", "path"), s3=s3))
    for i, nfs in enumerate(_kept(storage.nfs)):
        server = _required(nfs.server, "nfs", "server")
        asks.append(
            VolumeAsk(
                VolumeKind.NFS,
                i,
                _required(nfs.mount_path, "nfs", "mountPath"),
                read_only=nfs.read_only is not False,
                source=f"{server}:{_required(nfs.path, 'nfs', 'path')}",
            )
        )
    for i, config_map in enumerate(_kept(storage.config_map_volume)):
        asks.append(
            VolumeAsk(
                VolumeKind.CONFIG_MAP,
                i,
                _required(config_map.mount_path, "configMapVolume", "mountPath"),
                read_only=True,
                source=_required(config_map.config_map, "configMapVolume", "configMap"),
                sub_path=config_map.sub_path,
                mode=_mode(config_map.default_mode),
            )
        )
    for i, secret in enumerate(_kept(storage.secret_volume)):
        asks.append(
            VolumeAsk(
                VolumeKind.SECRET,
                i,
                _required(secret.mount_path, "secretVolume", "mountPath"),
                read_only=True,
                source=_required(secret.secret, "secretVolume", "secret"),
                mode=_mode(secret.default_mode),
            )
        )
    for i, empty in enumerate(_kept(storage.empty_dir_volume)):
        limit = empty.size_limit
        asks.append(
            VolumeAsk(
                VolumeKind.EMPTY_DIR,
                i,
                _required(empty.path, "emptyDirVolume", "path"),
                memory=(empty.medium or "").lower() == "memory",
                size_bytes=None if limit is None else int(parse_quantity(str(limit))),
            )
        )
    # A relative mount path is taken from the root, as container runtimes take it.
    return [
        a if a.target.startswith("/") else dataclasses.replace(a, target=f"/{a.target}")
        for a in asks
    ]


def shared_mount_paths(asks: Sequence[VolumeAsk]) -> list[str]:
    """One message for each path that more than one volume mounts at (a pod cannot have
    both, so it is refused, as Kubernetes refuses it)."""
    at: dict[PurePosixPath, list[VolumeAsk]] = {}
    for ask in asks:
        at.setdefault(PurePosixPath(ask.target), []).append(ask)
    return [
        f"{' and '.join(ask.kind.value for ask in sharing)} mount at the same path, {path}: "
        "each volume needs a mount path of its own"
        for path, sharing in at.items()
        if len(sharing) > 1
    ]


def security_of(spec: PodSpec) -> SecurityAsk:
    """The identity and privileges the spec asks for; `PodStartError` for what cannot be."""
    security = spec.security
    large_shm = spec.compute is not None and bool(spec.compute.large_shm_request)
    shm_bytes = None if large_shm else DEFAULT_SHM_BYTES
    if security is None:
        return SecurityAsk(None, False, (), True, True, False, shm_bytes)
    identity = None
    if security.uid_gid_source is UidGidSource.CUSTOM or (
        security.uid_gid_source is None and security.run_as_uid is not None
    ):
        if security.run_as_uid is None:
            raise PodStartError("security: uidGidSource custom needs runAsUid")
        gid = security.run_as_gid if security.run_as_gid is not None else security.run_as_uid
        identity = Identity(security.run_as_uid, gid, _groups(security.supplemental_groups))
    elif security.uid_gid_source is UidGidSource.FROM_IDP_TOKEN:
        raise PodStartError(
            "security: uidGidSource fromIdpToken needs an identity provider's token; lockstep "
            "has none here (use custom with runAsUid, or fromTheImage)"
        )
    if security.seccomp_profile_type is SeccompProfileType.LOCALHOST:
        raise PodStartError("security: seccompProfileType Localhost names no profile lockstep has")
    return SecurityAsk(
        identity=identity,
        read_only_root=bool(security.read_only_root_filesystem),
        added_capabilities=tuple(c.value for c in security.capabilities or ()),
        private_ipc=not security.host_ipc,
        seccomp=security.seccomp_profile_type is not SeccompProfileType.UNCONFINED,
        run_as_non_root=bool(security.run_as_non_root),
        shm_bytes=shm_bytes,
    )


def isolation_asked(spec: PodSpec) -> list[str]:
    """What the spec asks that only a sandbox gives, one phrase per field (empty: nothing)."""
    return list(_asked(spec))


def _asked(spec: PodSpec) -> Iterator[str]:
    for volume in volumes_of(spec):
        yield f"{volume.kind.value} mounted at {volume.target}"
    security = spec.security
    if security is not None:
        if security.run_as_uid is not None or security.uid_gid_source is UidGidSource.CUSTOM:
            yield "runAsUid/runAsGid"
        if security.supplemental_groups:
            yield "supplementalGroups"
        if security.read_only_root_filesystem:
            yield "readOnlyRootFilesystem"
        if security.capabilities is not None:
            yield "capabilities"
        if security.seccomp_profile_type is SeccompProfileType.RUNTIME_DEFAULT:
            yield "seccompProfileType RuntimeDefault"
        if security.host_ipc is False:
            yield "hostIpc false"
    if spec.compute is not None and spec.compute.large_shm_request:
        yield "largeShmRequest"


def _kept(entries: Sequence[Entry] | None) -> list[Entry]:
    return [e for e in entries or () if not getattr(e, "exclude", False)]


def _required(value: str | None, kind: str, field: str) -> str:
    if not value:
        raise PodStartError(f"storage: a {kind} entry needs {field}")
    return value


def _mode(text: str | None) -> int | None:
    return None if text is None else int(text, 8)


def _groups(text: str | None) -> tuple[int, ...]:
    if not text:
        return ()
    try:
        return tuple(int(part) for part in text.replace(" ", "").split(",") if part)
    except ValueError as error:
        raise PodStartError(
            f"security: supplementalGroups must be group ids separated by commas, not {text!r}"
        ) from error
