"""The distributed workload: its creation request, worker and master specs, and the response."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any
from uuid import UUID

from pydantic import Field

from lockstep.schemas.base import NonEmpty, ResponseModel, StringId, WireModel
from lockstep.schemas.bounds import (
    MAX_PATH_LENGTH,
    CommandLine,
    Count32,
    FilePath,
    Image,
    StoredName,
    WorkerCount,
    at_most_characters,
)
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
    args: CommandLine | None = None
    auto_deletion_time_after_completion_seconds: Count32 | None = None
    backoff_limit: Count32 | None = None
    category: StoredName | None = None
    command: CommandLine | None = None
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
    termination_grace_period_seconds: Count32 | None = Field(default=None, ge=0)
    tolerations: list[Toleration] | None = None
    tty: bool | None = None
    working_dir: FilePath | None = None


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
    max_replicas: WorkerCount | None = None
    min_replicas: WorkerCount | None = None
    mpi_launcher_creation_policy: MpiLauncherCreationPolicy | None = None
    num_workers: WorkerCount | None = Field(default=None, ge=1)
    slots_per_worker: Count32 | None = Field(default=None, ge=1)
    ssh_auth_mount_path: Annotated[str, at_most_characters(MAX_PATH_LENGTH)] | None = None


class CreationMeta(WireModel):
    """What every creation request names: the workload, its project and cluster."""

    name: NonEmpty
    use_given_name_as_prefix: bool | None = None
    project_id: StringId
    cluster_id: UUID
    template_id: UUID | None = None


class DistributedCreationRequest(CreationMeta):
    """The body of `POST /api/v1/workloads/distributed`."""

    spec: WorkerSpec | None = None
    master_spec_same_as_worker: bool | None = None
    master_spec: MasterSpec | None = None

    def pod_specs(self) -> list[tuple[str, PodSpec]]:
        """Each pod spec of the request with its field name: `spec`, then `masterSpec`."""
        named = (("spec", self.spec), ("masterSpec", self.master_spec))
        return [(name, spec) for name, spec in named if spec is not None]


class WorkloadMeta(ResponseModel):
    """What create and get return of a workload of any kind, beside its spec."""

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


class DistributedWorkload(WorkloadMeta):
    """The body of a distributed workload as create and get return it."""

    spec: WorkerSpec | None = None
    master_spec_same_as_worker: bool | None = None
    master_spec: MasterSpec | None = None
