"""Builders shared by the Kubernetes translation tests: stored workloads made from wire-format
requests (through the real schemas and rules, as the service stores them), their rendered
manifests, and ways to pick one manifest or pod template out of them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from lockstep.domain.kinds import TRAITS, WorkloadKind
from lockstep.domain.phases import DesiredPhase, Phase
from lockstep.domain.priorities import priority_of
from lockstep.domain.rules import check_request, check_single_pod_request
from lockstep.domain.workload import Workload
from lockstep.domain.workload_request import WorkloadRequest
from lockstep.runtimes.kubernetes.render import render
from lockstep.runtimes.kubernetes.settings import KubernetesSettings, SchedulerKind
from lockstep.schemas.distributed import DistributedCreationRequest, DistributedFramework
from lockstep.schemas.single_pod import TrainingCreationRequest, WorkspaceCreationRequest
from tests.unit.specs import request_body

WORKLOAD_ID = "6f1c1f0e-8a5e-4c1b-9d7e-2f0a7d1b3c4e"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
JOB_KEYS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
}

Manifest = dict[str, Any]


def workload_of(
    body: Mapping[str, Any],
    *,
    name: str | None = None,
    desired: DesiredPhase = DesiredPhase.RUNNING,
    project_name: str = "team-a",
    namespace: str = "runai-team-a",
) -> Workload:
    """The workload the service would store for a valid creation `body`."""
    request = DistributedCreationRequest.model_validate_json(json.dumps(dict(body)))
    violations = check_request(request)
    assert not violations, violations
    assert request.spec is not None and request.spec.distributed_framework is not None
    wire = request.to_wire()
    priority_class = request.spec.priority_class or "train"
    return Workload(
        id=WORKLOAD_ID,
        name=name or request.name,
        requested_name=request.name,
        project_id="7",
        department_id="1",
        cluster_id=str(request.cluster_id),
        created_by="alice",
        created_at=NOW,
        desired_phase=desired,
        actual_phase=Phase.CREATING,
        phase_message="",
        phase_updated_at=NOW,
        framework=DistributedFramework(request.spec.distributed_framework),
        request=WorkloadRequest.of_creation(WorkloadKind.DISTRIBUTED, wire),
        priority_class=priority_class,
        priority=priority_of(priority_class),
        namespace=namespace,
        project_name=project_name,
    )


SINGLE_POD_REQUESTS: dict[
    WorkloadKind, type[TrainingCreationRequest | WorkspaceCreationRequest]
] = {
    WorkloadKind.TRAINING: TrainingCreationRequest,
    WorkloadKind.WORKSPACE: WorkspaceCreationRequest,
}


def single_pod_workload_of(
    kind: WorkloadKind,
    spec: Mapping[str, Any] | None = None,
    *,
    name: str = "solo",
    desired: DesiredPhase = DesiredPhase.RUNNING,
) -> Workload:
    """The training or workspace the service would store for a valid `spec` (over a minimal
    one: an image and a command)."""
    body = {
        "name": name,
        "projectId": "1",
        "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210",
        "spec": {"image": "python:3.11", "command": "python", "args": "-c pass", **(spec or {})},
    }
    request = SINGLE_POD_REQUESTS[kind].model_validate_json(json.dumps(body))
    violations = check_single_pod_request(request)
    assert not violations, violations
    assert request.spec is not None
    priority_class = request.spec.priority_class or TRAITS[kind].default_priority_class
    return Workload(
        id=WORKLOAD_ID,
        name=name,
        requested_name=name,
        project_id="7",
        department_id="1",
        cluster_id=str(request.cluster_id),
        created_by="alice",
        created_at=NOW,
        desired_phase=desired,
        actual_phase=Phase.CREATING,
        phase_message="",
        phase_updated_at=NOW,
        framework=None,
        request=WorkloadRequest(kind, {"spec": request.to_wire()["spec"]}),
        priority_class=priority_class,
        priority=priority_of(priority_class),
        namespace="runai-team-a",
        project_name="team-a",
        kind=kind,
    )


def manifests_of(
    workload: Workload, scheduler: SchedulerKind = SchedulerKind.KAI, **settings: Any
) -> list[Manifest]:
    return render(workload, workload.plan(), KubernetesSettings(scheduler=scheduler, **settings))


def rendered(
    spec: Mapping[str, Any] | None = None,
    *,
    scheduler: SchedulerKind = SchedulerKind.KAI,
    settings: Mapping[str, Any] | None = None,
    **top: Any,
) -> list[Manifest]:
    """The manifests of a `BASE_SPEC`-derived request (see `specs.request_body`)."""
    return manifests_of(workload_of(request_body(spec=spec, **top)), scheduler, **(settings or {}))


def of_kind(manifests: list[Manifest], kind: str) -> list[Manifest]:
    return [m for m in manifests if m["kind"] == kind]


def job_of(manifests: list[Manifest]) -> Manifest:
    (job,) = [m for m in manifests if m["kind"] in JOB_KEYS]
    return job


def replica_specs(manifests: list[Manifest]) -> dict[str, Manifest]:
    job = job_of(manifests)
    specs: dict[str, Manifest] = job["spec"][JOB_KEYS[job["kind"]]]
    return specs


def template(manifests: list[Manifest], replica_type: str = "Worker") -> Manifest:
    """The pod template of one replica type."""
    result: Manifest = replica_specs(manifests)[replica_type]["template"]
    return result


def pod_spec(manifests: list[Manifest], replica_type: str = "Worker") -> Manifest:
    result: Manifest = template(manifests, replica_type)["spec"]
    return result


def container(manifests: list[Manifest], replica_type: str = "Worker") -> Manifest:
    result: Manifest = pod_spec(manifests, replica_type)["containers"][0]
    return result
