"""The labels that tie every rendered object to its workload, so the runtime can find, watch
and delete all of them, and the namespace they live in.

Read by every module that builds an object's metadata, and by the runtime's queries.
"""

from __future__ import annotations

from typing import Any

from lockstep.domain.labels import PROJECT_ID, WORKLOAD_ID
from lockstep.domain.plan import Role
from lockstep.domain.pod_security import PodSecurityLevel
from lockstep.domain.workload import Workload

MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGER = "lockstep"
WORKLOAD_NAME = "lockstep.io/workload-name"
ROLE = "lockstep.io/role"
"""On pod templates: the plan's role of the pods (master, chief, launcher, worker)."""
POD_SECURITY_LABEL = "pod-security.kubernetes.io/enforce"
"""On a project's namespace: the Pod Security level the API server enforces there."""
KEEP_ON_DELETE = "lockstep.io/keep-on-delete"
"""On a PVC lockstep created that outlives its workload (claimInfo without `ephemeral`)."""


def workload_labels(workload: Workload) -> dict[str, str]:
    """The labels every object rendered for `workload` carries."""
    return {
        MANAGED_BY: MANAGER,
        WORKLOAD_ID: workload.id,
        WORKLOAD_NAME: workload.name,
        PROJECT_ID: workload.project_id,
    }


def workload_selector(workload: Workload) -> str:
    """The label selector that finds every object of `workload`."""
    return f"{WORKLOAD_ID}={workload.id}"


def pod_selector(workload: Workload, role: Role | None = None) -> dict[str, str]:
    """`matchLabels` of the pods of `workload`; with a role, of the pods of that role."""
    labels = {WORKLOAD_ID: workload.id}
    if role is not None:
        labels[ROLE] = role.value
    return labels


def namespace_of(workload: Workload) -> str:
    """The namespace of the workload's project (`runai-<project>` unless the project asked
    for another)."""
    if workload.namespace:
        return workload.namespace
    if not workload.project_name:
        raise ValueError(f"workload {workload.id} has neither a namespace nor a project name")
    return f"runai-{workload.project_name}"


def metadata(
    workload: Workload, name: str, *, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    """`metadata` of an object of `workload`: its name, namespace and the workload's labels."""
    return {
        "name": name,
        "namespace": namespace_of(workload),
        "labels": {**(labels or {}), **workload_labels(workload)},
    }


def namespace_manifest(namespace: str, level: PodSecurityLevel) -> dict[str, Any]:
    """A project's namespace, labelled with the Pod Security level its pods are held to."""
    metadata = {"name": namespace, "labels": {POD_SECURITY_LABEL: level.value}}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}
