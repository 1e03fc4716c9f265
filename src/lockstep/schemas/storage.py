"""Every kind of storage a pod can mount: data volumes, PVCs, host paths, NFS, git, S3,
config maps, secrets and empty directories."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated
from uuid import UUID

from pydantic import Field, StringConstraints

from lockstep.schemas.base import DnsLabel, NonEmpty, Quantity, WireModel
from lockstep.schemas.bounds import MAX_PATH_LENGTH, FilePath, at_most_characters

DefaultMode = Annotated[str, StringConstraints(min_length=4, max_length=4, pattern=r"^0[0-7]{3}$")]
AttributeKey = Annotated[
    str,
    StringConstraints(
        min_length=1, max_length=63, pattern=r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
    ),
]


class HostPathMountPropagation(StrEnum):
    NONE = "None"
    HOST_TO_CONTAINER = "HostToContainer"


class PvcVolumeMode(StrEnum):
    FILESYSTEM = "Filesystem"
    BLOCK = "Block"


class GitAuthenticationMethod(StrEnum):
    PASSWORD = "password"
    SSH_KEY = "ssh-key"


class DataVolume(WireModel):
    id: UUID | None = None
    mount_path: Annotated[str, at_most_characters(MAX_PATH_LENGTH)] | None = None
    exclude: bool | None = None


class PvcAccessModes(WireModel):
    read_write_once: bool | None = None
    read_only_many: bool | None = None
    read_write_many: bool | None = None


class PvcAddedAttrValue(WireModel):
    key: AttributeKey
    value: str | None = None


class ClaimInfo(WireModel):
    size: Quantity | None = None
    storage_class: DnsLabel | None = None
    access_modes: PvcAccessModes | None = None
    volume_mode: PvcVolumeMode | None = None
    added_attr_values: list[PvcAddedAttrValue] | None = None


class Pvc(WireModel):
    name: NonEmpty | None = None
    path: FilePath | None = None
    existing_pvc: bool | None = None
    claim_name: Annotated[str, StringConstraints(min_length=1, max_length=63)] | None = None
    read_only: bool | None = None
    ephemeral: bool | None = None
    claim_info: ClaimInfo | None = None
    data_sharing: bool | None = None
    exclude: bool | None = None


class HostPath(WireModel):
    name: NonEmpty | None = None
    path: FilePath | None = None
    read_only: bool | None = None
    mount_path: FilePath | None = None
    mount_propagation: HostPathMountPropagation | None = None
    exclude: bool | None = None


class Nfs(WireModel):
    name: NonEmpty | None = None
    path: FilePath | None = None
    read_only: bool | None = None
    server: NonEmpty | None = None
    mount_path: FilePath | None = None
    exclude: bool | None = None


class GitSecretRef(WireModel):
    name: NonEmpty
    authentication_method: GitAuthenticationMethod | None = None
    secret_key_of_user: NonEmpty | None = None
    secret_key_of_password: NonEmpty | None = None


class Git(WireModel):
    name: NonEmpty | None = None
    repository: NonEmpty | None = None
    branch: NonEmpty | None = None
    revision: NonEmpty | None = None
    path: FilePath | None = None
    password_secret: NonEmpty | None = None
    secret_key_of_user: NonEmpty | None = None
    secret_key_of_password: NonEmpty | None = None
    secret_ref: GitSecretRef | None = None
    exclude: bool | None = None


class S3(WireModel):
    name: NonEmpty | None = None
    bucket: NonEmpty | None = None
    path: FilePath | None = None
    url: NonEmpty | None = None
    access_key_secret: DnsLabel | None = None
    secret_key_of_access_key_id: NonEmpty | None = None
    secret_key_of_secret_key: NonEmpty | None = None
    exclude: bool | None = None


class ConfigMapVolume(WireModel):
    name: NonEmpty | None = None
    config_map: DnsLabel | None = None
    mount_path: FilePath | None = None
    sub_path: FilePath | None = None
    default_mode: DefaultMode | None = None
    exclude: bool | None = None


class SecretVolume(WireModel):
    name: NonEmpty | None = None
    secret: NonEmpty | None = None
    mount_path: FilePath | None = None
    default_mode: DefaultMode | None = None
    exclude: bool | None = None


class EmptyDirVolume(WireModel):
    name: NonEmpty | None = None
    path: FilePath | None = None
    medium: NonEmpty | None = None
    size_limit: Quantity | None = None
    exclude: bool | None = None


class Storage(WireModel):
    config_map_volume: list[ConfigMapVolume] | None = None
    data_volume: list[DataVolume] | None = None
    empty_dir_volume: list[EmptyDirVolume] | None = None
    git: list[Git] | None = None
    host_path: list[HostPath] | None = None
    nfs: list[Nfs] | None = None
    pvc: list[Pvc] | None = None
    s3: list[S3] | None = None
    secret_volume: list[SecretVolume] | None = Field(default=None)
