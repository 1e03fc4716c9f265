"""How lockstep's Kubernetes runtime is set up for one cluster: which scheduler gangs the pods,
which node labels name pools and types, which drivers and images storage uses.

Built once by the runtime from lockstep's configuration; read by every translation module.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

NODE_POOL_LABEL = "kai.scheduler/node-pool"
"""The node label KAI Scheduler partitions nodes into pools by."""
NODE_TYPE_LABEL = "run.ai/type"
"""The node label a workload's `nodeType` selects on (the scheduler's `Selector` reads the same)."""


class SchedulerKind(StrEnum):
    """Who schedules the pods of a job, and so what a gang needs to be placed at once."""

    KAI = "kai"
    """KAI Scheduler: `schedulerName: kai-scheduler`, a queue label; its pod-grouper makes
    the PodGroup from the job."""
    VOLCANO = "volcano"
    """Volcano: `schedulerName: volcano` and a `scheduling.volcano.sh` PodGroup lockstep renders."""
    DEFAULT = "default"
    """The cluster's default scheduler: no gang scheduling."""


class MpiImplementation(StrEnum):
    """`spec.mpiImplementation` of an MPIJob (mpi-operator v2beta1)."""

    OPEN_MPI = "OpenMPI"
    INTEL = "Intel"
    MPICH = "MPICH"


@dataclass(frozen=True, slots=True)
class KubernetesSettings:
    """The cluster-wide choices the translation of a workload depends on."""

    scheduler: SchedulerKind = SchedulerKind.KAI
    kai_scheduler_name: str = "kai-scheduler"
    volcano_scheduler_name: str = "volcano"
    queue: str | None = None
    """The scheduler queue of every workload; None: the queue named after its project, which
    lockstep keeps (queues.py)."""
    queue_pool: str = "default"
    """The node pool whose quotas the queues lockstep keeps carry (a queue has no pool of its
    own; see queues.py)."""
    node_pool_label: str = NODE_POOL_LABEL
    node_type_label: str = NODE_TYPE_LABEL
    mpi_implementation: MpiImplementation = MpiImplementation.OPEN_MPI
    s3_csi_driver: str = "ru.yandex.s3.csi"
    """The CSI driver that mounts S3 buckets as inline volumes (k8s-csi-s3 by default)."""
    git_sync_image: str = "registry.k8s.io/git-sync/git-sync:v4.4.0"
    """The image of the init container that clones a `git` storage entry."""
    data_volume_claim_prefix: str = "data-volume-"
    """A data volume is mounted through the PVC `<prefix><data volume id>` of the project's
    namespace (lockstep does not provision data volumes itself)."""
    default_claim_size: str = "10Gi"
    """The size of a PVC lockstep creates when its `claimInfo` gives none."""
    ingress_class_name: str | None = None
    """The IngressClass of the Ingresses of `exposedUrls`; None: the cluster's default."""
