"""Render stored objects as the Run:ai wire format (plain dicts, serialized with orjson).

Built by hand rather than through response models: the workload's spec is already stored in
its wire form, so a GET costs one JSON parse and no validation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from lockstep.auth.roles import (
    CONTRACT_RESOURCES,
    DEFINED_AT,
    DEFINED_BY,
    Action,
    Resource,
    RoleDefinition,
)
from lockstep.domain.clock import iso
from lockstep.domain.cluster import NodeUse
from lockstep.domain.identity import Application
from lockstep.domain.images import mapped_environment
from lockstep.domain.kinds import TRAITS
from lockstep.domain.metrics import WorkloadFigures
from lockstep.domain.organization import Cluster, Department, Project
from lockstep.domain.phases import Phase
from lockstep.domain.plan import GangLayout, ReplicaPlan
from lockstep.domain.quantities import binary_quantity
from lockstep.domain.secrets import Secret
from lockstep.domain.single_sign_on import OIDC, IdentityProvider, Mappers
from lockstep.domain.users import User
from lockstep.domain.workload import Event, PhaseChange, Pod, Workload
from lockstep.schemas.identity_providers import MASKED_SECRET
from lockstep.services.access_rules import ShownRule, role_id
from lockstep.services.node_pools import PoolView
from lockstep.services.nodes import GPU_PRODUCT_LABEL

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


def workload_body(workload: Workload) -> dict[str, Any]:
    """A workload as its kind's create and get return it (`DistributedWorkload`, `Training`,
    `Workspace`): its identity and phases, and the request as stored."""
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
    body.update(workload.request.wire)
    return body


def _conditions(
    workload: Workload, unmapped: list[str], not_applied: list[str]
) -> list[dict[str, Any]]:
    condition: dict[str, Any] = {
        "type": workload.actual_phase.value,
        "status": "True",
        "lastTransitionTime": iso(workload.phase_updated_at),
    }
    if workload.phase_message:
        condition["message"] = workload.phase_message
    conditions = [condition]
    if unmapped:
        conditions.append(
            {
                "type": "ImageEnvironment",
                "status": "False",
                "reason": "ImageNotMapped",
                "message": f"no local environment is mapped to {', '.join(unmapped)}: its pods "
                "run in lockstep's own environment",
                "lastTransitionTime": iso(workload.created_at),
            }
        )
    if not_applied:
        conditions.append(
            {
                "type": "Sandbox",
                "status": "False",
                "reason": "NotApplied",
                "message": "lockstep runs pods without a sandbox (LOCKSTEP_SANDBOX=off), so "
                f"this is not applied: {', '.join(not_applied)}",
                "lastTransitionTime": iso(workload.created_at),
            }
        )
    return conditions


def workload_item(
    w: Workload,
    *,
    image_environments: Mapping[str, Path] | None = None,
    unapplied: Callable[[Workload], list[str]] | None = None,
    figures: WorkloadFigures | None = None,
) -> dict[str, Any]:
    """A workload as `GET /api/v1/workloads` lists it; `image_environments` are the local
    environments operators mapped to images (a condition names the images without one);
    `unapplied`: what of a workload the backend does not apply (the local runtime without a
    sandbox: what it asks that only a sandbox gives, which a condition names); `figures`: its
    time Pending and Running and its idle GPUs (services/metrics/series.py)."""
    requested = w.request
    images = requested.images
    item: dict[str, Any] = {
        "tenantId": TENANT_ID,
        "id": w.id,
        "type": w.kind.value,
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
        "conditions": _conditions(
            w,
            [i for i in images if mapped_environment(i, image_environments or {}) is None],
            [] if unapplied is None else unapplied(w),
        ),
        "runningPods": w.running_pods,
        "category": w.category or TRAITS[w.kind].default_category,
        "images": images,
        "requestedPods": _requested_pods(requested.layout),
        "actionsSupport": {"delete": True, "suspend": not w.actual_phase.is_terminal},
        "preemptible": w.preemptible,
    }
    if figures is not None:
        item["totalPendingTimeSeconds"] = figures.pending_seconds
        item["totalRunningTimeSeconds"] = figures.running_seconds
        item["idleGpus"] = figures.idle_gpus
    if w.framework is not None:
        item["distributedFramework"] = w.framework.value
    if w.phase_reason is not None:  # the document's enum has no null
        item["phaseReason"] = w.phase_reason
    if requested.command:
        item["command"] = requested.command
    if requested.args:
        item["arguments"] = requested.args
    return item


def _requested_pods(layout: GangLayout) -> dict[str, int]:
    """The pods a workload runs at once (`number`): a distributed one's leader and workers
    (an elastic PyTorch one's workers only, with their bounds `min` and `max`), a training's
    parallelism, a workspace's one."""
    if layout.bounds is None:
        return {"number": layout.together}
    return {"number": layout.together, "min": layout.bounds[0], "max": layout.bounds[1]}


def pod_item(pod: Pod, w: Workload, plan: ReplicaPlan) -> dict[str, Any]:
    """A pod as `GET /api/v1/workloads/{id}/pods` lists it; `plan` is its workload's."""
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
        "currentNodePool": "default",
        "requestedResources": _requested(plan, pod),
        "containers": [_container(pod)],
    }


def listed_pod(
    pod: Pod, w: Workload, plan: ReplicaPlan, *, deleted_at: datetime | None, full: bool
) -> dict[str, Any]:
    """A pod as `GET /api/v1/workloads/pods` lists it: `full` verbosity adds its workload's
    and project's names."""
    item = pod_item(pod, w, plan)
    item["deletedAt"] = _time(deleted_at)
    if not full:
        del item["workloadName"], item["projectName"]
    return item


def exposed_urls(w: Workload, pods: list[Pod], *, host: str) -> list[str]:
    """Where each of the workload's exposedUrls is reached: its own url, else the machine
    port of its container port on the leader pod (the container port itself until the pods
    have started)."""
    leader = w.plan().leader.pod_name
    bound = {p.container: p.host for pod in pods if pod.name == leader for p in pod.ports}
    urls = []
    for exposed in w.request.exposed_urls:
        if exposed.exclude:
            continue
        if exposed.url:
            urls.append(exposed.url)
        elif exposed.container is not None:
            port = bound.get(exposed.container, exposed.container)
            urls.append(f"http://{host}:{port}")
    return urls


def _container(pod: Pod) -> dict[str, Any]:
    """The pod's one container, with what Kubernetes would tell of its status (readiness,
    restarts, how it ended) and its ports on this machine: fields the Run:ai API lacks."""
    container: dict[str, Any] = {
        "name": pod.role,
        "image": pod.image,
        "startedAt": _time(pod.started_at),
        "ready": pod.ready,
        "restartCount": pod.restarts,
        "ports": [
            {"containerPort": p.container, "hostPort": p.host, "name": p.name} for p in pod.ports
        ],
    }
    if pod.completed_at is not None:
        container["terminated"] = {
            "exitCode": pod.exit_code,
            "reason": pod.reason or ("Completed" if pod.exit_code == 0 else "Error"),
            "message": pod.message,
            "finishedAt": iso(pod.completed_at),
        }
    return container


def _requested(plan: ReplicaPlan, pod: Pod) -> dict[str, Any]:
    """The pod's requests and limits, from its replica's compute spec."""
    try:
        compute = plan.replica(pod.name).spec.compute
    except KeyError:
        return {}
    if compute is None:
        return {}
    resources: dict[str, Any] = {
        "cpu": {"request": compute.cpu_core_request, "limit": compute.cpu_core_limit},
        "cpuMemory": {"request": compute.cpu_memory_request, "limit": compute.cpu_memory_limit},
    }
    if compute.gpu_request_type is not None:
        resources["gpuRequestType"] = compute.gpu_request_type.value
    if compute.gpu_devices_request or compute.gpu_portion_request:
        count = compute.gpu_devices_request or 1
        portion = compute.gpu_portion_request
        resources["gpu"] = {
            "request": count * portion if portion else count,
            "limit": compute.gpu_portion_limit,
        }
    if compute.gpu_memory_request is not None:
        resources["gpuMemory"] = {
            "request": compute.gpu_memory_request,
            "limit": compute.gpu_memory_limit,
        }
    return resources


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


def project(p: Project, quota: dict[str, Any] | None = None) -> dict[str, Any]:
    """A project; `quota`: its `nodePoolQuotaStatuses` and `quotaStatus`
    (services/quota_status.py)."""
    return {
        "id": p.id,
        "name": p.name,
        "description": p.description,
        "clusterId": p.cluster_id,
        "parentId": p.department_id,
        "requestedNamespace": p.requested_namespace,
        "enforceRunaiScheduler": True,
        "status": {"namespace": p.namespace, "phase": "Ready", **(quota or {})},
        "totalResources": _quota(),
        "createdAt": iso(p.created_at),
        "updatedAt": iso(p.updated_at),
        "createdBy": p.created_by,
        "effective": {},
        "resources": p.resources,
        "podSecurityLevel": p.pod_security_level.value,
    }


def department(d: Department, quota: dict[str, Any] | None = None) -> dict[str, Any]:
    """A department; `quota`: the sum of its projects' quota status."""
    return {
        "id": d.id,
        "name": d.name,
        "description": d.description,
        "clusterId": d.cluster_id,
        "createdAt": iso(d.created_at),
        "updatedAt": iso(d.updated_at),
        "createdBy": d.created_by,
        "totalResources": _quota(),
        "resources": d.resources,
        "status": dict(quota or {}),
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


def secret(s: Secret) -> dict[str, Any]:
    """A secret's name and keys, a config map's name and data: no response ever carries a
    secret's values."""
    shown: dict[str, Any] = {"keys": list(s.keys)} if s.data is None else {"data": dict(s.data)}
    return {
        "name": s.name,
        "projectId": s.project_id,
        **shown,
        "createdAt": iso(s.created_at),
        "createdBy": s.created_by,
        "updatedAt": iso(s.updated_at),
    }


def node(use: NodeUse, cluster: Cluster) -> dict[str, Any]:
    """A node as `GET /api/v1/clusters/{clusterUuid}/nodes` shows it: the document's fields
    (a node is as old as its cluster's record), and lockstep's own (labels, capacity, what is
    allocated of it, its GPU devices)."""
    n = use.node
    gpu_type = n.label(GPU_PRODUCT_LABEL)
    return {
        "name": n.name,
        "clusterUuid": cluster.id,
        "createdAt": iso(cluster.created_at),
        "updatedAt": iso(cluster.updated_at),
        "nodePool": n.pool,
        "gpuInfo": (
            {"gpuType": gpu_type, "gpuCount": len(n.gpus)} if gpu_type is not None else None
        ),
        "labels": dict(n.labels),
        "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in n.taints],
        "status": "Ready" if use.ready else "NotReady",
        "capacity": {
            "cpuCores": _amount(n.cpu),
            "memory": binary_quantity(int(n.memory)),
            "gpus": len(n.gpus),
        },
        "allocated": {
            "cpuCores": _amount(use.cpu),
            "memory": binary_quantity(int(use.memory)),
            "gpus": _amount(sum(use.gpus.values(), Decimal(0))),
        },
        "gpuDevices": [
            {
                "index": g.index,
                "memory": None if g.memory is None else binary_quantity(int(g.memory)),
                "allocated": _amount(use.gpus.get(g.index, Decimal(0))),
            }
            for g in n.gpus
        ],
    }


def _amount(value: Decimal) -> str:
    return f"{value.normalize():f}"


def node_pool(view: PoolView) -> dict[str, Any]:
    """A node pool (the document's `Nodepool`), with lockstep's own `capacity` and
    `allocated` (GPUs in devices, CPU in cores, memory as a binary quantity)."""
    p = view.pool
    gpus, cpu, memory = view.capacity()
    held_gpus, held_cpu, held_memory = view.allocated()
    return {
        "id": p.id,
        "name": p.name,
        "labelKey": p.label_key,
        "labelValue": p.label_value,
        "clusterId": p.cluster_id,
        "clusterName": view.cluster_name,
        "tenantId": TENANT_ID,
        "isDefault": p.is_default,
        "phase": view.phase,
        "phaseMessage": "" if view.nodes else "no node is in the pool",
        "status": {"nodes": [u.node.name for u in view.nodes]},
        "createdBy": p.created_by,
        "createdAt": iso(p.created_at),
        "updatedBy": p.updated_by,
        "updatedAt": iso(p.updated_at),
        "capacity": {
            "gpus": gpus,
            "cpuCores": _amount(cpu),
            "memory": binary_quantity(int(memory)),
        },
        "allocated": {
            "gpus": _amount(held_gpus),
            "cpuCores": _amount(held_cpu),
            "memory": binary_quantity(int(held_memory)),
        },
    }


def user(u: User) -> dict[str, Any]:
    """The contract's `User2`: never the password's hash."""
    return {
        "id": u.id,
        "username": u.username,
        "createdBy": u.created_by,
        "createdAt": iso(u.created_at),
        "updatedAt": iso(u.updated_at),
        "lastLogin": None if u.last_login is None else iso(u.last_login),
        "isLocal": u.is_local,
        "groups": list(u.groups),
    }


def identity_provider(p: IdentityProvider, *, redirect_uri: str) -> dict[str, Any]:
    """The contract's `Idp1`: the client secret masked, as every read shows it."""
    oidc: dict[str, Any] = {
        "clientId": p.client_id,
        "clientSecret": MASKED_SECRET,
        "discoverDocumentUrl": p.discovery_url,
        "scopes": list(p.scopes),
    }
    if p.mandatory_claim is not None:
        oidc["mandatoryClaim"] = {
            "claim": p.mandatory_claim.claim,
            "values": list(p.mandatory_claim.values),
        }
    return {
        "alias": p.alias,
        "type": OIDC,
        "redirectUri": redirect_uri,
        "oidcData": oidc,
        "mappers": mappers(p.alias, p.mappers),
    }


def mappers(alias: str, m: Mappers) -> dict[str, Any]:
    """The contract's `Mappers`: the provider's alias (which the document requires there) and
    the claims that are mapped."""
    given = {
        "alias": alias,
        "email": m.email,
        "groups": m.groups,
        "uid": m.uid,
        "gid": m.gid,
        "supplementaryGroups": m.supplementary_groups,
    }
    return {name: claim for name, claim in given.items() if claim is not None}


_ACTION_ORDER = (Action.CREATE, Action.READ, Action.UPDATE, Action.DELETE)


def permissions(held: Mapping[Resource, frozenset[Action]]) -> list[dict[str, Any]]:
    """The contract's `Permissions`: each kind of resource with actions, in a fixed order."""
    return [
        {
            "resourceType": CONTRACT_RESOURCES[resource].resource_type,
            "displayName": CONTRACT_RESOURCES[resource].display_name,
            "groupId": CONTRACT_RESOURCES[resource].group_id,
            "actions": [a.value for a in _ACTION_ORDER if a in actions],
        }
        for resource, actions in sorted(
            held.items(), key=lambda item: list(Resource).index(item[0])
        )
        if actions
    ]


def role(definition: RoleDefinition) -> dict[str, Any]:
    """The contract's `RoleV1`."""
    return {
        "id": definition.id,
        "name": definition.role.value,
        "description": definition.description,
        "permissions": permissions(definition.permissions),
        "createdAt": iso(DEFINED_AT),
        "updatedAt": iso(DEFINED_AT),
        "createdBy": DEFINED_BY,
        "custom": False,
        "enabled": True,
        "effectiveEnabled": True,
    }


def _rule_fields(shown: ShownRule) -> dict[str, Any]:
    rule = shown.rule
    fields: dict[str, Any] = {
        "id": rule.id,
        "subjectId": rule.subject_id,
        "subjectType": rule.subject_type.value,
        "roleId": role_id(rule.role),
        "roleName": rule.role.value,
        "scopeId": rule.scope_id,
        "scopeType": rule.scope_type.value,
        "scopeName": shown.scope_name,
        "tenantId": TENANT_ID,
    }
    if shown.cluster_id is not None:
        fields["clusterId"] = shown.cluster_id
    return fields


def access_rule(shown: ShownRule) -> dict[str, Any]:
    """The contract's `AccessRule`."""
    rule = shown.rule
    return {
        **_rule_fields(shown),
        "createdAt": iso(rule.created_at),
        "updatedAt": iso(rule.updated_at or rule.created_at),
        "deletedAt": None if rule.deleted_at is None else iso(rule.deleted_at),
        "createdBy": rule.created_by,
        **({} if rule.deleted_at else {"status": {"phase": "Ready"}}),
    }


def my_access_rule(shown: ShownRule) -> dict[str, Any]:
    """The contract's `MeAccessRule`."""
    return _rule_fields(shown)


def service_account(a: Application) -> dict[str, Any]:
    """The contract's `ServiceAccount` (and the deprecated `Application`): never a secret."""
    return {
        "id": a.uid,
        "name": a.name,
        "clientId": a.client_id,
        "createdBy": a.created_by,
        "createdAt": iso(a.created_at),
        "updatedAt": iso(a.updated_at or a.created_at),
        "enabled": a.enabled,
        "lastLogin": None if a.last_login is None else iso(a.last_login),
        "tenantId": str(TENANT_ID),
    }


def access_key(a: Application, *, administration: bool = False) -> dict[str, Any]:
    """The contract's `AccessKey1` (and the deprecated `UserApp`); with its creator for an
    administrator's lists."""
    shown = {
        "id": a.uid,
        "name": a.name,
        "clientId": a.client_id,
        "createdAt": iso(a.created_at),
        "lastLogin": None if a.last_login is None else iso(a.last_login),
    }
    return {**shown, "createdBy": a.created_by} if administration else shown
