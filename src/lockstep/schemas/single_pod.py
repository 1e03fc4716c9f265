"""Trainings and workspaces: their creation requests, specs and responses.

Their `spec` is a distributed worker's pod spec without the topology; a training's adds a
Job's `completions` and `parallelism`. Used by the routes, the service and the rules.
"""

from __future__ import annotations

from lockstep.schemas.bounds import WorkerCount
from lockstep.schemas.distributed import (
    CreationMeta,
    DistributedCreationRequest,
    PodSpec,
    WorkloadMeta,
)


class TrainingSpec(PodSpec):
    """A training's pod spec and how many of its pods run: `parallelism` at once, until
    `completions` of them have succeeded (as a Kubernetes Job runs them)."""

    completions: WorkerCount | None = None
    parallelism: WorkerCount | None = None


class WorkspaceSpec(PodSpec):
    """A workspace's pod spec: one pod, for interactive work."""


class TrainingCreationRequest(CreationMeta):
    """The body of `POST /api/v1/workloads/trainings`."""

    spec: TrainingSpec | None = None

    def pod_specs(self) -> list[tuple[str, PodSpec]]:
        return [] if self.spec is None else [("spec", self.spec)]


class WorkspaceCreationRequest(CreationMeta):
    """The body of `POST /api/v1/workloads/workspaces`."""

    spec: WorkspaceSpec | None = None

    def pod_specs(self) -> list[tuple[str, PodSpec]]:
        return [] if self.spec is None else [("spec", self.spec)]


class TrainingWorkload(WorkloadMeta):
    """The body of a training as create and get return it."""

    spec: TrainingSpec | None = None


class WorkspaceWorkload(WorkloadMeta):
    """The body of a workspace as create and get return it."""

    spec: WorkspaceSpec | None = None


CreationRequest = DistributedCreationRequest | TrainingCreationRequest | WorkspaceCreationRequest
"""The body of a creation request of any kind."""
