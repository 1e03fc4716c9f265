"""The distributed workload: its creation request, worker and master specs, and the response."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any
from uuid import UUID

from pydantic import Field, StringConstraints, ValidationInfo, field_validator

from lockstep.schemas.base import NonEmpty, ResponseModel, StringId, WireModel
from lockstep.schemas.bounds import INT32_MAX, bounds_in
from lockstep.schemas.compute import Compute
from lockstep.schemas.pod import (
    Annotation,
    EnvironmentVariable,
    ExposedUrl,
    ImagePullPolicy,
    ImagePullSecret,
    Label,
    NodeAffinityRequired,
    PodAffinity,
    Port,
    Preemptibility,
    Probes,
    RelatedUrl,
    RestartPolicy,
    Toleration,
)
from lockstep.schemas.security import Security
from lockstep.schemas.storage import Storage

StoredName = Annotated[str, StringConstraints(max_length=255)]
"""A name the store keeps in a column of its own (the workload's category, priority class)."""
Image = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
"""An image reference, as long as the store keeps one for each pod."""

DEFAULT_BACKOFF_LIMIT = 6
DEFAULT_SLOTS_PER_WORKER = 1
DEFAULT_SSH_AUTH_MOUNT_PATH = "/root/.ssh"


class DistributedFramework(StrEnum):
    MPI = "MPI"
    PYTORCH = "PyTorch"
    TF = "TF"
    XGBOOST = "XGBoost"
    JAX = "JAX"


class MpiLauncherCreationPolicy(StrEnum):
    AT_STARTUP = "AtStartup"
    WAIT_FOR_WORKERS_READY = "WaitForWorkersReady"


class CleanPodPolicy(StrEnum):
    NONE = "None"
    ALL = "All"
    RUNNING = "Running"


class PodSpec(WireModel):
    """What one replica runs and how: the master's spec, and the part of the worker's spec
    that is not about the distributed topology."""

    annotations: list[Annotation] | None = None
    args: NonEmpty | None = None
    auto_deletion_time_after_completion_seconds: int | None = Field(default=None, le=INT32_MAX)
    backoff_limit: int | None = Field(default=None, le=INT32_MAX)
    category: StoredName | None = None
    command: NonEmpty | None = None
    compute: Compute | None = None
    create_home_dir: bool | None = None
    environment_variables: list[EnvironmentVariable] | None = None
    exposed_urls: list[ExposedUrl] | None = None
    image: Image | None = None
    image_pull_policy: ImagePullPolicy | None = None
    image_pull_secrets: list[ImagePullSecret] | None = None
    labels: list[Label] | None = None
    node_affinity_required: NodeAffinityRequired | None = None
    node_pools: list[str] | None = None
    node_type: NonEmpty | None = None
    pod_affinity: PodAffinity | None = None
    ports: list[Port] | None = None
    preemptibility: Preemptibility | None = None
    priority_class: StoredName | None = None
    probes: Probes | None = None
    related_urls: list[RelatedUrl] | None = None
    restart_policy: RestartPolicy | None = None
    security: Security | None = None
    stdin: bool | None = None
    storage: Storage | None = None
    terminate_after_preemption: bool | None = None
    termination_grace_period_seconds: int | None = Field(default=None, ge=0, le=INT32_MAX)
    tolerations: list[Toleration] | None = None
    tty: bool | None = None
    working_dir: NonEmpty | None = None

    @field_validator("command", "args")
    @classmethod
    def _within_the_command_length(cls, value: str | None, info: ValidationInfo) -> str | None:
        bounds = bounds_in(info)
        if value is not None and bounds is not None and len(value) > bounds.max_command_length:
            raise ValueError(
                f"must be at most {bounds.max_command_length} characters (this server's limit)"
            )
        return value


_POD_SPEC_ALIASES = frozenset(field.alias or name for name, field in PodSpec.model_fields.items())


def pod_wire(spec: PodSpec) -> dict[str, Any]:
    """The wire form of what a pod runs: a spec without the topology fields a worker spec
    adds (a same-as-worker master runs exactly this)."""
    return {key: value for key, value in spec.to_wire().items() if key in _POD_SPEC_ALIASES}


class MasterSpec(PodSpec):
    """The master's (PyTorch, XGBoost), chief's (TF) or launcher's (MPI) own spec."""


class WorkerSpec(PodSpec):
    """The `spec` of a distributed workload: the workers' pod spec plus the topology."""

    clean_pod_policy: CleanPodPolicy | None = None
    distributed_framework: DistributedFramework | None = None
    max_replicas: int | None = None
    min_replicas: int | None = None
    mpi_launcher_creation_policy: MpiLauncherCreationPolicy | None = None
    num_workers: int | None = Field(default=None, ge=1)
    slots_per_worker: int | None = Field(default=None, ge=1, le=INT32_MAX)
    ssh_auth_mount_path: str | None = None

    @field_validator("num_workers", "min_replicas", "max_replicas")
    @classmethod
    def _within_the_workers(cls, value: int | None, info: ValidationInfo) -> int | None:
        bounds = bounds_in(info)
        if value is not None and bounds is not None and value > bounds.max_workers:
            raise ValueError(
                f"must be less than or equal to {bounds.max_workers} (this server's limit)"
            )
        return value


class DistributedCreationRequest(WireModel):
    """The body of `POST /api/v1/workloads/distributed`."""

    name: NonEmpty
    use_given_name_as_prefix: bool | None = None
    project_id: StringId
    cluster_id: UUID
    template_id: UUID | None = None
    spec: WorkerSpec | None = None
    master_spec_same_as_worker: bool | None = None
    master_spec: MasterSpec | None = None


class DistributedWorkload(ResponseModel):
    """The body of a distributed workload as create and get return it."""

    name: str
    requested_name: str
    workload_id: UUID
    project_id: str
    department_id: str | None = None
    cluster_id: UUID
    created_by: str
    created_at: datetime
    deleted_at: datetime | None = None
    desired_phase: str
    actual_phase: str | None = None
    spec: WorkerSpec | None = None
    master_spec_same_as_worker: bool | None = None
    master_spec: MasterSpec | None = None
