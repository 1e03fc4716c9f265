"""The scheduler queues of the organisation: each department and each project as a `Queue` of
the cluster's scheduler, carrying its quotas, the department the parent of its projects.

Pure (no client, no I/O): the cluster reconciler applies what `queue_manifests` returns and
removes the queues lockstep made that it no longer returns (`queue_changes`); the dry run shows
a workload's own (`workload_queues`).

KAI Scheduler (`scheduling.run.ai/v2`): per resource `quota` (the deserved share), `limit` and
`overQuotaWeight`, in KAI's units — GPUs in devices (fractions allowed), CPU in millicores,
memory in megabytes (10^6 bytes) — with -1 for unlimited (KAI reads a `quota` or `limit` it is
not given as 0: no guarantee, no over-quota at all, so every resource is always written); a
CPU or memory quota the unit does not set is not enforced (domain/quotas.py) and so is written
`quota: -1`; `priority` from the unit's over-quota priority.
Volcano (`scheduling.volcano.sh/v1beta1`): `deserved` and `capability` as resource quantities
(an unlimited amount — a quota not enforced included — left out: a quantity has no "unlimited"),
one `weight` (the GPU weight: Volcano has one per queue, an integer of at least 1), `parent`
naming the department's queue.

A Queue has no node-pool dimension (KAI partitions pools into scheduling shards, each with
queues of its own): the queues carry the quotas of one pool, `KubernetesSettings.queue_pool`.
Names: a project's queue is the project's name (the queue the workload's label names, and the
one KAI's pod-grouper derives from a `project` label); a department's is `department.<name>`,
which no project's name can be (a project's name is a DNS label, without dots).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lockstep.domain.labels import DEPARTMENT_QUEUE_PREFIX
from lockstep.domain.organization import Department, Project
from lockstep.domain.quotas import PoolQuota, Quota, Resource, quotas_of
from lockstep.runtimes.kubernetes.compute import GPU_RESOURCE
from lockstep.runtimes.kubernetes.identity import MANAGED_BY, MANAGER
from lockstep.runtimes.kubernetes.settings import KubernetesSettings, SchedulerKind

Manifest = dict[str, Any]

KAI_QUEUE_API = "scheduling.run.ai/v2"
VOLCANO_QUEUE_API = "scheduling.volcano.sh/v1beta1"
QUEUE_KIND = "Queue"

ORG_UNIT = "lockstep.io/org-unit"
"""On a queue: `department` or `project`, what it is the queue of."""
ORG_UNIT_ID = "lockstep.io/org-unit-id"

KAI_UNLIMITED = -1
BYTES_PER_MB = 10**6
"""KAI's memory unit: a megabyte, 10^6 bytes (its CRD: "Memory resources in megabytes")."""

OVER_QUOTA_PRIORITIES: Mapping[str, int] = {
    "lowest": 25,
    "low": 50,
    "normal": 100,
    "medium": 100,
    "high": 150,
    "highest": 200,
}
"""A unit's `priority` (Run:ai's over-quota priority) as a queue's integer priority (KAI's
default is 100, "normal"); a number given as a string is taken as it is; any other value, or
none, leaves the queue's priority unset."""
PRIORITY_RANGE = (-(2**31), 2**31 - 1)

VOLCANO_RESERVED = frozenset({"default", "root"})
"""Volcano's own queues: lockstep may write its project `default` into Volcano's `default`
queue, but never deletes them."""


def manages_queues(settings: KubernetesSettings) -> bool:
    """Whether lockstep keeps the scheduler's queues: under KAI or Volcano, unless every
    workload goes to one configured queue (then the cluster's administrator owns it)."""
    return settings.queue is None and settings.scheduler in (
        SchedulerKind.KAI,
        SchedulerKind.VOLCANO,
    )


def queue_api_version(settings: KubernetesSettings) -> str:
    return VOLCANO_QUEUE_API if settings.scheduler is SchedulerKind.VOLCANO else KAI_QUEUE_API


def project_queue_name(project_name: str) -> str:
    return project_name


def department_queue_name(department_name: str) -> str:
    return f"{DEPARTMENT_QUEUE_PREFIX}{department_name}"


def queue_manifests(
    departments: Sequence[Department], projects: Sequence[Project], settings: KubernetesSettings
) -> list[Manifest]:
    """Every queue of the organisation, departments (the parents) first; none when lockstep
    does not manage queues."""
    if not manages_queues(settings):
        return []
    by_id = {department.id: department for department in departments}
    queues = [department_queue(department, settings) for department in departments]
    for project in projects:
        queues.append(project_queue(project, by_id.get(project.department_id), settings))
    return queues


def workload_queues(
    department: Department | None, project: Project, settings: KubernetesSettings
) -> list[Manifest]:
    """The queues a workload of `project` is scheduled through (its department's, its
    project's), as the dry run shows them."""
    if not manages_queues(settings):
        return []
    parents = [] if department is None else [department_queue(department, settings)]
    return [*parents, project_queue(project, department, settings)]


def department_queue(department: Department, settings: KubernetesSettings) -> Manifest:
    quota = quotas_of(department.resources).in_pool(settings.queue_pool)
    return _queue(
        department_queue_name(department.name),
        unit=("department", department.id, department.name),
        quota=quota,
        parent=None,
        settings=settings,
    )


def project_queue(
    project: Project, department: Department | None, settings: KubernetesSettings
) -> Manifest:
    quota = quotas_of(project.resources).in_pool(settings.queue_pool)
    parent = None if department is None else department_queue_name(department.name)
    return _queue(
        project_queue_name(project.name),
        unit=("project", project.id, project.name),
        quota=quota,
        parent=parent,
        settings=settings,
    )


def _queue(
    name: str,
    *,
    unit: tuple[str, str, str],
    quota: PoolQuota,
    parent: str | None,
    settings: KubernetesSettings,
) -> Manifest:
    kind, unit_id, display_name = unit
    metadata = {
        "name": name,
        "labels": {MANAGED_BY: MANAGER, ORG_UNIT: kind, ORG_UNIT_ID: str(unit_id)},
    }
    if settings.scheduler is SchedulerKind.VOLCANO:
        spec = volcano_queue_spec(quota, parent=parent)
    else:
        spec = kai_queue_spec(quota, parent=parent, display_name=display_name)
    return {
        "apiVersion": queue_api_version(settings),
        "kind": QUEUE_KIND,
        "metadata": metadata,
        "spec": spec,
    }


# --- KAI Scheduler ----------------------------------------------------------------------------

KAI_SCALE: Mapping[Resource, float] = {
    Resource.GPU: 1.0,
    Resource.CPU: 1.0,
    Resource.MEMORY: 1.0 / BYTES_PER_MB,
}
"""From the scheduler's units (devices, millicores, bytes) to KAI's (devices, millicores, MB)."""


def kai_queue_spec(quota: PoolQuota, *, parent: str | None, display_name: str) -> Manifest:
    spec: Manifest = {"displayName": display_name}
    if parent is not None:
        spec["parentQueue"] = parent
    priority = queue_priority(quota.priority)
    if priority is not None:
        spec["priority"] = priority
    spec["resources"] = {
        resource.value: _kai_resource(quota.of(resource), KAI_SCALE[resource])
        for resource in Resource
    }
    return spec


def _kai_resource(quota: Quota, scale: float) -> Manifest:
    return {
        "quota": _kai_amount(quota.deserved, scale),
        "limit": _kai_amount(quota.limit, scale),
        "overQuotaWeight": _number(quota.weight),
    }


def _kai_amount(amount: float, scale: float) -> float | int:
    return KAI_UNLIMITED if math.isinf(amount) else _number(amount * scale)


def _number(value: float) -> float | int:
    """A JSON number without float noise: an integer when it is one."""
    rounded = round(value, 6)
    return int(rounded) if rounded.is_integer() else rounded


def queue_priority(priority: str | None) -> int | None:
    if priority is None:
        return None
    named = OVER_QUOTA_PRIORITIES.get(priority.strip().lower())
    if named is not None:
        return named
    try:
        number = int(priority.strip())
    except ValueError:
        return None
    low, high = PRIORITY_RANGE
    return number if low <= number <= high else None


# --- Volcano ----------------------------------------------------------------------------------

VOLCANO_RESOURCES: Mapping[Resource, str] = {
    Resource.GPU: GPU_RESOURCE,
    Resource.CPU: "cpu",
    Resource.MEMORY: "memory",
}
VOLCANO_WEIGHT_MAX = 2**31 - 1


def volcano_queue_spec(quota: PoolQuota, *, parent: str | None) -> Manifest:
    spec: Manifest = {
        "weight": volcano_weight(quota.gpu.weight),
        "reclaimable": True,
    }
    deserved = _quantities(quota, limit=False)
    capability = _quantities(quota, limit=True)
    if deserved:
        spec["deserved"] = deserved
    if capability:
        spec["capability"] = capability
    if parent is not None:
        spec["parent"] = parent
    priority = queue_priority(quota.priority)
    if priority is not None:
        spec["priority"] = priority
    return spec


def volcano_weight(weight: float) -> int:
    """Volcano's integer weight, at least 1 (its webhook refuses less)."""
    return max(1, min(VOLCANO_WEIGHT_MAX, round(weight)))


def _quantities(quota: PoolQuota, *, limit: bool) -> dict[str, str]:
    found = {}
    for resource, name in VOLCANO_RESOURCES.items():
        part = quota.of(resource)
        amount = part.limit if limit else part.deserved
        if not math.isinf(amount):
            found[name] = _quantity(resource, amount)
    return found


def _quantity(resource: Resource, amount: float) -> str:
    if resource is Resource.CPU:
        return f"{round(amount)}m"
    if resource is Resource.MEMORY:
        return str(round(amount))
    return str(_number(amount))


# --- keeping the cluster in step --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueueChanges:
    """What to do to the cluster's queues: apply these (in order), delete those (in order)."""

    apply: list[Manifest]
    delete: list[str]


def queue_changes(desired: Sequence[Manifest], existing: Iterable[Manifest]) -> QueueChanges:
    """The queues to apply — missing, or whose spec or labels differ from what lockstep
    renders — and the names of the queues lockstep made that it renders no more, projects'
    before departments' (children before their parents). `existing`: the cluster's queues
    labelled as lockstep's."""
    current = {queue["metadata"]["name"]: queue for queue in existing}
    to_apply = [queue for queue in desired if not _holds(current.get(_name(queue)), queue)]
    wanted = {_name(queue) for queue in desired}
    stale = [
        queue
        for name, queue in sorted(current.items())
        if name not in wanted and _managed(queue) and name not in VOLCANO_RESERVED
    ]
    stale.sort(key=lambda queue: _labels(queue).get(ORG_UNIT) == "department")
    return QueueChanges(apply=to_apply, delete=[_name(queue) for queue in stale])


def _holds(found: Manifest | None, wanted: Manifest) -> bool:
    if found is None:
        return False
    labels = _labels(found)
    same_labels = all(labels.get(key) == value for key, value in _labels(wanted).items())
    return same_labels and found.get("spec") == wanted["spec"]


def _managed(queue: Manifest) -> bool:
    return _labels(queue).get(MANAGED_BY) == MANAGER and ORG_UNIT in _labels(queue)


def _labels(queue: Manifest) -> dict[str, str]:
    return dict((queue.get("metadata") or {}).get("labels") or {})


def _name(queue: Manifest) -> str:
    return str(queue["metadata"]["name"])
