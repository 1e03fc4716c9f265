"""Render stored objects as the Run:ai wire format (plain dicts, serialized with orjson).

Built by hand rather than through response models: the workload's spec is already stored in
its wire form, so a GET costs one JSON parse and no validation.
"""

from __future__ import annotations

from typing import Any

from lockstep.domain.clock import iso
from lockstep.domain.organization import Cluster, Department, Project
from lockstep.domain.phases import Phase
from lockstep.domain.workload import Event, PhaseChange, Pod, Workload
from lockstep.store.workloads import WORKLOAD_TYPE

TENANT_ID = 1
_K8S_PHASE = {
    Phase.CREATING: "Pending",
    Phase.PENDING: "Pending",
    Phase.INITIALIZING: "Pending",
    Phase.RESUMING: "Pending",
    Phase.RUNNING: "Running",
    Phase.DEGRADED: "Running",
    Phase.COMPLETED: "Succeeded",
    Phase.FAILED: "Failed",
    Phase.STOPPING: "Terminating",
    Phase.STOPPED: "Stopped",
    Phase.DELETING: "Terminating",
}


def _time(moment: Any) -> str | None:
    return None if moment is None else iso(moment)


def distributed_workload(workload: Workload) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": workload.name,
        "requestedName": workload.requested_name,
        "workloadId": workload.id,
        "projectId": workload.project_id,
        "clusterId": workload.cluster_id,
        "createdBy": workload.created_by,
        "createdAt": iso(workload.created_at),
        "desiredPhase": workload.desired_phase.value,
        "actualPhase": workload.actual_phase.value,
    }
    if workload.department_id is not None:
        body["departmentId"] = workload.department_id
    if workload.deleted_at is not None:
        body["deletedAt"] = iso(workload.deleted_at)
    body.update(workload.request)
    return body


def _conditions(workload: Workload) -> list[dict[str, Any]]:
    condition: dict[str, Any] = {
        "type": workload.actual_phase.value,
        "status": "True",
        "lastTransitionTime": iso(workload.phase_updated_at),
    }
    if workload.phase_message:
        condition["message"] = workload.phase_message
    return [condition]


def workload_item(w: Workload) -> dict[str, Any]:
    """A workload as `GET /api/v1/workloads` lists it."""
    spec = w.request.get("spec") or {}
    images = sorted(
        {
            image
            for image in (spec.get("image"), (w.request.get("masterSpec") or {}).get("image"))
            if image
        }
    )
    item: dict[str, Any] = {
        "tenantId": TENANT_ID,
        "id": w.id,
        "type": WORKLOAD_TYPE,
        "name": w.name,
        "source": "Control-plane",
        "priority": w.priority,
        "priorityClassName": w.priority_class,
        "clusterId": w.cluster_id,
        "projectId": w.project_id,
        "projectName": w.project_name,
        "departmentId": w.department_id or "",
        "departmentName": w.department_name,
        "namespace": w.namespace,
        "submittedBy": w.created_by,
        "createdAt": iso(w.created_at),
        "updatedAt": iso(w.phase_updated_at),
        "deletedAt": _time(w.deleted_at),
        "completedAt": _time(w.completed_at),
        "phase": w.actual_phase.value,
        "phaseMessage": w.phase_message,
        "phaseUpdatedAt": iso(w.phase_updated_at),
        "k8sPhase": _K8S_PHASE.get(w.actual_phase, "Unknown"),
        "k8sPhaseUpdatedAt": iso(w.phase_updated_at),
        "conditions": _conditions(w),
        "runningPods": w.running_pods,
        "category": w.category or "Train",
        "distributedFramework": w.framework.value,
        "images": images,
        "requestedPods": {"number": int(spec.get("numWorkers") or 1) + 1},
        "actionsSupport": {"delete": True, "suspend": not w.actual_phase.is_terminal},
        "preemptible": spec.get("preemptibility") != "non-preemptible",
    }
    if spec.get("command"):
        item["command"] = spec["command"]
    if spec.get("args"):
        item["arguments"] = spec["args"]
    return item


def pod_item(pod: Pod, w: Workload) -> dict[str, Any]:
    return {
        "tenantId": TENANT_ID,
        "id": pod.id,
        "name": pod.name,
        "workloadId": w.id,
        "workloadName": w.name,
        "projectId": w.project_id,
        "projectName": w.project_name,
        "clusterId": w.cluster_id,
        "priorityClassName": w.priority_class,
        "nodeName": pod.node_name,
        "ip": pod.ip,
        "createdAt": iso(pod.created_at),
        "completedAt": _time(pod.completed_at),
        "updatedAt": iso(pod.completed_at or pod.started_at or pod.created_at),
        "k8sPhase": pod.phase.value,
        "k8sPhaseUpdatedAt": iso(pod.completed_at or pod.started_at or pod.created_at),
        "containers": [{"name": pod.role, "image": pod.image, "startedAt": _time(pod.started_at)}],
    }


def event_item(event: Event, w: Workload) -> dict[str, Any]:
    return {
        "id": event.id,
        "createdAt": iso(event.created_at),
        "type": event.type.value,
        "clusterId": w.cluster_id,
        "message": event.message,
        "reason": event.reason,
        "source": event.source,
        "involvedObject": {
            "uid": event.workload_id if event.object_kind == "Workload" else event.id,
            "kind": event.object_kind,
            "name": event.object_name,
            "namespace": w.namespace,
        },
    }


def history_item(record: PhaseChange | Event, w: Workload) -> dict[str, Any]:
    if isinstance(record, PhaseChange):
        return {
            "meta": {"creationTimestamp": iso(record.created_at), "type": "PhaseUpdate"},
            "spec": {"phaseUpdate": {"phase": record.phase.value, "phaseMessage": record.message}},
        }
    return {
        "meta": {"creationTimestamp": iso(record.created_at), "type": "Event"},
        "spec": {"event": event_item(record, w)},
    }


def _quota() -> dict[str, Any]:
    return {"gpuQuota": None, "cpuQuota": None, "memoryQuota": None}


def project(p: Project) -> dict[str, Any]:
    return {
        "id": p.id,
        "name": p.name,
        "description": "",
        "clusterId": p.cluster_id,
        "parentId": p.department_id,
        "requestedNamespace": p.requested_namespace,
        "enforceRunaiScheduler": True,
        "status": {"namespace": p.namespace, "phase": "Ready"},
        "totalResources": _quota(),
        "createdAt": iso(p.created_at),
        "updatedAt": iso(p.updated_at),
        "createdBy": p.created_by,
        "effective": {},
        "resources": p.resources,
    }


def department(d: Department) -> dict[str, Any]:
    return {
        "id": d.id,
        "name": d.name,
        "description": "",
        "clusterId": d.cluster_id,
        "createdAt": iso(d.created_at),
        "updatedAt": iso(d.updated_at),
        "createdBy": d.created_by,
        "totalResources": _quota(),
        "resources": d.resources,
    }


def cluster(c: Cluster, *, version: str) -> dict[str, Any]:
    return {
        "uuid": c.id,
        "tenantId": TENANT_ID,
        "name": c.name,
        "createdAt": iso(c.created_at),
        "updatedAt": iso(c.updated_at),
        "version": version,
        "domain": None,
        "status": {"state": "Connected", "platform": {"type": "vanilla"}},
        "lastLiveness": iso(c.updated_at),
    }
