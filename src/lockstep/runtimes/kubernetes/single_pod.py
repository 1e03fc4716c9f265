"""A training's and a workspace's manifests: the object that runs the pod (`kinds`), with the
pod template every kind shares (`pods`), the scheduler's wiring (`scheduling`) and the
workload's Services and Ingresses (`networking`).

- A training is an Indexed `batch/v1` Job: `completions` pods must succeed, `parallelism` run
  at once, each told its JOB_COMPLETION_INDEX by the Job controller (as the local runtime tells
  it); a failed pod is run again until `backoffLimit` failures; `suspend` when stopped;
  `ttlSecondsAfterFinished` from autoDeletionTimeAfterCompletionSeconds.
- A workspace is an `apps/v1` StatefulSet of one pod (`<name>-0`, as the local runtime names
  it) and its headless Service; no replica when stopped. A StatefulSet's pod restarts
  whenever it ends (restartPolicy Always is the only one it accepts): the reconciler reads
  how the pod ended and scales the StatefulSet to none once the workspace has ended
  (`status.workspace_state`).

Called by `render`; pure.
"""

from __future__ import annotations

from typing import Any

from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.phases import DesiredPhase
from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.workload import Workload
from lockstep.runtimes.kubernetes.identity import metadata, pod_selector
from lockstep.runtimes.kubernetes.kinds import SINGLE_POD_KINDS, ObjectKind
from lockstep.runtimes.kubernetes.networking import Exposure, networking
from lockstep.runtimes.kubernetes.pods import pod_template
from lockstep.runtimes.kubernetes.scheduling import Scheduling, scheduling_of
from lockstep.runtimes.kubernetes.settings import KubernetesSettings
from lockstep.schemas.distributed import PodSpec
from lockstep.schemas.pod import RestartPolicy

Manifest = dict[str, Any]

WORKSPACE_RESTART_POLICY = RestartPolicy.ALWAYS
"""The only restartPolicy a StatefulSet's pods may have."""


def job_spec(
    workload: Workload, plan: ReplicaPlan, spec: PodSpec, template: Manifest
) -> dict[str, Any]:
    """The `spec` of a training's Job."""
    template["spec"]["restartPolicy"] = plan.restart_policy.value
    result: dict[str, Any] = {
        "completionMode": "Indexed",
        "completions": len(plan.replicas),
        "parallelism": plan.parallelism,
        "backoffLimit": plan.backoff_limit,
        "suspend": workload.desired_phase is DesiredPhase.STOPPED,
        "template": template,
    }
    if spec.auto_deletion_time_after_completion_seconds is not None:
        result["ttlSecondsAfterFinished"] = spec.auto_deletion_time_after_completion_seconds
    return result


def stateful_set_spec(
    workload: Workload, plan: ReplicaPlan, spec: PodSpec, template: Manifest
) -> dict[str, Any]:
    """The `spec` of a workspace's StatefulSet (the pod's own restart policy is the
    reconciler's to apply: see the module's text)."""
    del plan, spec
    template["spec"]["restartPolicy"] = WORKSPACE_RESTART_POLICY.value
    return {
        "replicas": 0 if workload.desired_phase is DesiredPhase.STOPPED else 1,
        "serviceName": workload.name,
        "selector": {"matchLabels": pod_selector(workload)},
        "template": template,
    }


def headless_service(workload: Workload) -> Manifest:
    """The StatefulSet's governing Service: its pod's DNS name, `<name>-0.<name>`."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(workload, workload.name),
        "spec": {"clusterIP": "None", "selector": pod_selector(workload)},
    }


OBJECT_SPECS = {
    WorkloadKind.TRAINING: job_spec,
    WorkloadKind.WORKSPACE: stateful_set_spec,
}


def single_pod_manifests(
    workload: Workload, plan: ReplicaPlan, settings: KubernetesSettings
) -> list[Manifest]:
    """Every manifest of a training or workspace in apply order: the PVCs it creates, the
    Volcano PodGroup, the Job or StatefulSet, its Services and Ingresses."""
    spec = workload.request.spec
    kind: ObjectKind = SINGLE_POD_KINDS[plan.kind]
    scheduling: Scheduling = scheduling_of(workload, plan, settings, spec=spec)
    rendered = pod_template(
        spec,
        workload=workload,
        plan=plan,
        role=plan.leader.role,
        kind=kind,
        scheduling=scheduling,
        settings=settings,
    )
    owner: Manifest = {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": metadata(workload, workload.name, labels=scheduling.job_labels),
        "spec": OBJECT_SPECS[plan.kind](workload, plan, spec, rendered.template),
    }
    services, ingresses = networking(workload, [Exposure(spec, None)], settings)
    if plan.kind is WorkloadKind.WORKSPACE:
        services.insert(0, headless_service(workload))
    group = [] if scheduling.pod_group is None else [scheduling.pod_group]
    return [*rendered.claims, *group, owner, *services, *ingresses]
