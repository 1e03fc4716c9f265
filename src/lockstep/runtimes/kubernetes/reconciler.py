"""The Kubernetes runtime's reconciler: for each stored workload, make the cluster hold what it
should (the rendered manifests, applied; the job suspended or not; everything removed once
deleted) and write back what the cluster reports (phase, pods, events). Its thread, run loop
and auto-deletion are every reconciler's (reconciler/reconcile_loop.py).

Unlike the local runtime's reconciler, lockstep neither places nor restarts pods here: the
cluster's scheduler (KAI Scheduler, Volcano) gangs and places them, the Kubeflow operator (a
training's: the Job controller) restarts them and decides when the job has failed or
succeeded. A workspace's StatefulSet restarts its pod whatever its restart policy: once the
pod's end means the workspace has ended, the loop scales the StatefulSet to none.

Level-triggered like the local runtime's reconciler: a pass reads the workload and the cluster
afresh, so a missed wake-up is harmless. Watches of the jobs and pods only say which workload
to look at again (see watches.py); a periodic resync covers the rest.

The organisation's scheduler queues (queues.py) are kept in step here too:
at start, at every resync, when the key `QUEUES_KEY` is queued (what changes a project or a
department may notify), and before the first job of a project whose queue lockstep has not
applied yet. A sync lists lockstep's queues once, applies those missing or different (server-side
apply) and deletes those of units no longer stored.

Runs on a thread of the process that holds the leadership (only one of several lockstep
replicas acts on the cluster at a time).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from lockstep.domain.clock import Clock
from lockstep.domain.labels import WORKLOAD_ID
from lockstep.domain.listing import SortOrder
from lockstep.domain.phases import DesiredPhase, Phase, path_to
from lockstep.domain.pod_security import PodSecurityLevel
from lockstep.domain.workload import Event, Workload, WorkloadUpdate
from lockstep.reconciler.leader import LeaderController
from lockstep.reconciler.observed import Recorder
from lockstep.reconciler.passes import decide_all
from lockstep.reconciler.queue import ORGANIZATION_CHANGED, WorkQueue
from lockstep.reconciler.reconcile_loop import ReconcileLoop
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.cluster import Cluster
from lockstep.runtimes.kubernetes.cluster_errors import (
    ClusterConflict,
    ClusterError,
    ClusterForbidden,
    ClusterUnavailable,
)
from lockstep.runtimes.kubernetes.identity import (
    KEEP_ON_DELETE,
    MANAGED_BY,
    MANAGER,
    POD_SECURITY_LABEL,
    namespace_manifest,
    namespace_of,
)
from lockstep.runtimes.kubernetes.kinds import ObjectKind, ScaledKind, object_kind_of
from lockstep.runtimes.kubernetes.queues import (
    QUEUE_KIND,
    manages_queues,
    queue_api_version,
    queue_changes,
    queue_manifests,
)
from lockstep.runtimes.kubernetes.render import render
from lockstep.runtimes.kubernetes.scheduling import queue_of
from lockstep.runtimes.kubernetes.settings import KubernetesSettings
from lockstep.runtimes.kubernetes.status import event, pod_status, workload_state
from lockstep.runtimes.kubernetes.watches import Watches
from lockstep.store.change_feed import ChangeFeed
from lockstep.store.database import Database
from lockstep.store.leadership import leadership_of

log = logging.getLogger(__name__)

OWNED_KINDS: tuple[tuple[str, str], ...] = (
    ("v1", "Service"),
    ("networking.k8s.io/v1", "Ingress"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"),
    ("v1", "PersistentVolumeClaim"),
)
"""What lockstep may create beside the job, removed with the workload (a claim labelled to
outlive it excepted)."""

QUEUES_KEY = ORGANIZATION_CHANGED
"""Queued (instead of a workload id) to have the organisation's queues synced at once."""

EVENT_ID_NAMESPACE = uuid.UUID("6f1b7f6e-52c4-4a4e-9d7a-6b0c1c3f0c11")
"""Events keep ids derived from the cluster's own, so one seen twice is recorded once."""


@dataclass(frozen=True, slots=True)
class KubernetesReconcilerSettings:
    resync_seconds: float = 30.0
    poll_seconds: float = 1.0
    """How soon a workload whose deletion is under way is looked at again."""
    refused_retry_seconds: float = 30.0
    """How soon to try again after the cluster refused (403) to create a workload's objects."""


class KubernetesReconciler(ReconcileLoop):
    thread_name = "lockstep-cluster"

    def __init__(
        self,
        database: Database,
        cluster: Cluster,
        *,
        settings: KubernetesSettings,
        clock: Clock,
        queue: WorkQueue,
        loop: KubernetesReconcilerSettings | None = None,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self._loop = loop or KubernetesReconcilerSettings()
        super().__init__(
            database, clock=clock, queue=queue, resync_seconds=self._loop.resync_seconds
        )
        self._cluster = cluster
        self._settings = settings
        self._recorder = Recorder(clock=clock, new_id=new_id)
        self._recorded_events: dict[str, set[str]] = {}
        """Per workload, the ids of the events already stored (read once, then kept)."""
        self._queues_in_step: set[str] = set()
        """The queues the last sync found or made as lockstep renders them."""

    # --- recovery and resync --------------------------------------------------------------

    def recover(self) -> None:
        """On start: sync the queues, and look at every live workload."""
        self.sync_queues()
        for workload_id in self._ids_to_reconcile():
            self._queue.add(workload_id)

    def resync(self) -> None:
        """The queues are synced again at each resync."""
        self.sync_queues()

    # --- the organisation's queues ----------------------------------------------------------

    def sync_queues(self) -> bool:
        """Make the cluster's queues those of the stored departments and projects; whether
        it got through (a failure is logged, and the next resync tries again)."""
        if not manages_queues(self._settings):
            return True
        with self._db.read() as unit:
            departments = unit.organization.departments()
            projects = unit.organization.projects()
        desired = queue_manifests(departments, projects, self._settings)
        api_version = queue_api_version(self._settings)
        try:
            managed = {MANAGED_BY: MANAGER}
            existing, _ = self._cluster.list(api_version, QUEUE_KIND, None, labels=managed)
            changes = queue_changes(desired, existing)
            in_step = {m["metadata"]["name"] for m in desired} - {
                m["metadata"]["name"] for m in changes.apply
            }
            for manifest in changes.apply:
                self._apply_queue(manifest)
                in_step.add(manifest["metadata"]["name"])
            for name in changes.delete:
                self._cluster.delete(api_version, QUEUE_KIND, None, name)
        except ClusterError as error:
            log.warning("could not bring the scheduler's queues in step: %s", error)
            self._queues_in_step = set()
            return False
        self._queues_in_step = in_step
        return True

    def _apply_queue(self, manifest: dict[str, Any]) -> None:
        try:
            self._cluster.apply(manifest)
        except (ClusterUnavailable, ClusterConflict):
            raise
        except ClusterError as error:  # refused (invalid, forbidden): the others still go
            log.warning("the cluster refused the queue %s: %s", manifest["metadata"]["name"], error)

    def _ensure_queue(self, workload: Workload) -> None:
        """Sync the queues first when the workload's queue is not known to be in step (its
        project is new since the last sync)."""
        if manages_queues(self._settings) and queue_of(workload, self._settings) not in (
            self._queues_in_step
        ):
            self.sync_queues()

    # --- one pass -------------------------------------------------------------------------

    def run_pass(self, keys: Iterable[str]) -> None:
        """Sync the queues if `QUEUES_KEY` is among the keys; reconcile every other key and
        write what changed in one transaction."""
        keys = set(keys)
        if QUEUES_KEY in keys:
            keys.discard(QUEUES_KEY)
            self.sync_queues()
        if not keys:
            return
        changes = decide_all(self._db, self._queue, keys, self.reconcile)
        if not self._write(changes):
            for workload, _ in changes:  # its events were not stored after all
                self._recorded_events.pop(workload.id, None)

    def reconcile(self, workload: Workload) -> WorkloadUpdate:
        """Act on one workload through the cluster; return what to write about it."""
        if workload.deleted_at is not None:
            return WorkloadUpdate()
        if workload.desired_phase is DesiredPhase.DELETED or self._due_for_deletion(workload):
            return self._delete(workload)
        if workload.actual_phase.is_terminal:
            return WorkloadUpdate()
        try:
            job = self._ensure_applied(workload)
        except PodStartError as error:
            message = f"cannot run on Kubernetes: {error}"
            return self._towards(workload, Phase.FAILED, message)
        except ClusterForbidden as error:
            self._queue.add_after(workload.id, self._loop.refused_retry_seconds)
            message = f"the cluster refused to create the workload's objects: {error}"
            return self._towards(workload, Phase.PENDING, message)
        except (ClusterUnavailable, ClusterConflict):
            raise  # transient: the pass retries it
        except ClusterError as error:  # invalid, refused by an admission webhook, …
            message = f"the cluster refused the workload: {error}"
            return self._towards(workload, Phase.FAILED, message)
        return self._observe(workload, job)

    # --- desired: Running or Stopped -------------------------------------------------------

    def _ensure_applied(self, workload: Workload) -> dict[str, Any] | None:
        """Apply the rendered manifests when the job is missing or its suspension differs
        from what the user wants; the job as the cluster holds it afterwards."""
        kind = object_kind_of(workload)
        job = self._cluster.get(kind.api_version, kind.kind, namespace_of(workload), workload.name)
        stopped = workload.desired_phase is DesiredPhase.STOPPED
        if job is not None and (kind.is_suspended(job) == stopped or _has_ended(job)):
            return job  # rendered only when something is to be applied
        manifests = render(workload, workload.plan(), self._settings)
        wanted = next(m for m in manifests if m["kind"] == kind.kind)
        self._ensure_queue(workload)
        self._ensure_namespace(namespace_of(workload), workload.pod_security)
        for manifest in manifests:
            if _outlives_workload(manifest) and self._exists(manifest):
                continue  # a claim kept from an earlier workload: used as it is
            applied = self._cluster.apply(manifest)
            if manifest is wanted:
                job = applied
        return job

    def _exists(self, manifest: dict[str, Any]) -> bool:
        metadata = manifest["metadata"]
        found = self._cluster.get(
            manifest["apiVersion"], manifest["kind"], metadata.get("namespace"), metadata["name"]
        )
        return found is not None

    def _ensure_namespace(self, namespace: str, level: PodSecurityLevel) -> None:
        """The project's namespace, made when missing, enforcing its Pod Security level."""
        found = self._cluster.get("v1", "Namespace", None, namespace)
        labels = {} if found is None else found["metadata"].get("labels") or {}
        if labels.get(POD_SECURITY_LABEL) != level.value:
            self._cluster.apply(namespace_manifest(namespace, level))

    def _observe(self, workload: Workload, job: dict[str, Any] | None) -> WorkloadUpdate:
        namespace = namespace_of(workload)
        pod_objects, _ = self._cluster.list(
            "v1", "Pod", namespace, labels={WORKLOAD_ID: workload.id}
        )
        statuses = [pod_status(pod) for pod in pod_objects]
        state = workload_state(workload.plan(), job, pod_objects)
        if state.phase.is_terminal and job is not None:
            self._end(object_kind_of(workload), job, state.phase, state.message)
        target = state.phase
        if workload.desired_phase is DesiredPhase.STOPPED and not target.is_terminal:
            target = Phase.STOPPED if target is Phase.STOPPED else Phase.STOPPING
        elif target is Phase.STOPPED:
            target = Phase.PENDING  # resumed, the operator has not cleared Suspended yet
        change = self._towards(workload, target, state.message)
        with self._db.read() as unit:
            known = {pod.name: pod for pod in unit.workloads.pods(workload.id, deleted=False)}
        change.pods, change.events = self._recorder.pod_changes(workload, statuses, known)
        change.pods_removed = bool(known) and not statuses  # suspended, or removed by the operator
        change.events += self._new_events(
            workload, names={workload.name, *known, *(s.name for s in statuses)}
        )
        if change.phase is not None and change.phase.is_terminal:
            change.auto_delete_at = self._auto_delete_at(workload)
        if change.phase is not None and change.phase != target:
            self._queue.add(workload.id)  # more steps to go
        return change

    def _end(self, kind: ObjectKind, owner: dict[str, Any], phase: Phase, message: str) -> None:
        """Keep a kind whose pods restart whatever they end with (a StatefulSet's) from
        running them again once the workload has ended, saying how it ended on it."""
        annotations = (owner.get("metadata") or {}).get("annotations") or {}
        if isinstance(kind, ScaledKind) and ScaledKind.ENDED_PHASE not in annotations:
            metadata = owner["metadata"]
            self._cluster.patch(
                kind.api_version,
                kind.kind,
                metadata.get("namespace"),
                metadata["name"],
                ScaledKind.ended(phase.value, message),
            )

    def _towards(self, workload: Workload, target: Phase, message: str) -> WorkloadUpdate:
        """The next one or two steps from the workload's phase toward `target` (the cluster
        may be several steps on from what was last written)."""
        change = WorkloadUpdate()
        steps = path_to(workload.actual_phase, target)
        if len(steps) >= 2:
            change.through, change.phase = steps[0], steps[1]
        elif steps:
            change.phase = steps[0]
        if change.phase is not None or message != workload.phase_message:
            change.phase = change.phase or workload.actual_phase
            change.message = message
        return change

    def _new_events(self, workload: Workload, *, names: set[str]) -> list[Event]:
        """The cluster's events about the job and its pods that are not stored yet."""
        recorded = self._recorded_events.get(workload.id)
        if recorded is None:
            with self._db.read() as unit:
                stored = unit.workloads.events(
                    workload.id, offset=0, limit=10_000, order=SortOrder.ASC
                )
            recorded = self._recorded_events[workload.id] = {e.id for e in stored}
        items, _ = self._cluster.list("v1", "Event", namespace_of(workload), labels={})
        found: list[Event] = []
        for item in items:
            involved = item.get("involvedObject") or {}
            if involved.get("name") not in names:
                continue
            key = str((item.get("metadata") or {}).get("uid") or item["metadata"]["name"])
            event_id = str(uuid.uuid5(EVENT_ID_NAMESPACE, f"{workload.id}/{key}"))
            if event_id in recorded:
                continue
            recorded.add(event_id)
            observed = event(item, workload_id=workload.id, now=self._clock())
            found.append(replace(observed, id=event_id))
        return found

    # --- desired: Deleted -----------------------------------------------------------------

    def _delete(self, workload: Workload) -> WorkloadUpdate:
        """Remove the job (its pods first: foreground) and everything lockstep created for
        it; the workload is gone once the cluster holds none of it."""
        change = WorkloadUpdate()
        if workload.actual_phase is not Phase.DELETING and Phase.DELETING in path_to(
            workload.actual_phase, Phase.DELETING
        ):
            change.phase, change.message = Phase.DELETING, "deleting the job and its pods"
        namespace = namespace_of(workload)
        kind = object_kind_of(workload)
        job_gone = not self._cluster.delete(kind.api_version, kind.kind, namespace, workload.name)
        labels = {WORKLOAD_ID: workload.id}
        for api_version, object_kind in OWNED_KINDS:
            items, _ = self._cluster.list(api_version, object_kind, namespace, labels=labels)
            for item in items:
                metadata = item.get("metadata") or {}
                if (metadata.get("labels") or {}).get(KEEP_ON_DELETE) == "true":
                    continue
                self._cluster.delete(api_version, object_kind, namespace, metadata["name"])
        pods, _ = self._cluster.list("v1", "Pod", namespace, labels=labels)
        if job_gone and not pods:
            change.deleted = True
            self._recorded_events.pop(workload.id, None)
        else:
            self._queue.add_after(workload.id, self._loop.poll_seconds)
        return change


def _outlives_workload(manifest: dict[str, Any]) -> bool:
    labels = (manifest.get("metadata") or {}).get("labels") or {}
    return bool(labels.get(KEEP_ON_DELETE) == "true")


class KubernetesWork:
    """What the leader runs for the Kubernetes runtime: the reconcile loop, woken by the
    watches of the cluster's jobs and pods and by the API's changes (through `queue`)."""

    def __init__(self, reconciler: KubernetesReconciler, watches: Watches) -> None:
        self._reconciler = reconciler
        self._watches = watches

    def start(self) -> None:
        self._reconciler.start()
        self._watches.start()

    def stop(self) -> None:
        self._watches.stop()
        self._reconciler.stop()

    @property
    def running(self) -> bool:
        return self._reconciler.running


class KubernetesController:
    """The Kubernetes runtime's controller: this process reconciles the cluster while it
    holds the store's leadership (see reconciler/leader.py), and tells the leader of every
    change."""

    def __init__(
        self,
        database: Database,
        cluster: Cluster,
        *,
        settings: KubernetesSettings,
        clock: Clock,
        loop: KubernetesReconcilerSettings | None = None,
    ) -> None:
        self.cluster = cluster
        self._work: KubernetesWork | None = None

        def act(queue: WorkQueue) -> KubernetesWork:
            reconciler = KubernetesReconciler(
                database, cluster, settings=settings, clock=clock, queue=queue, loop=loop
            )
            self._work = KubernetesWork(reconciler, Watches(cluster, queue.add))
            return self._work

        feed = None if database.is_sqlite else ChangeFeed(database)
        self.leader = LeaderController(leadership_of(database), act, feed=feed)

    def start(self) -> None:
        self.leader.start()

    def notify(self, workload_id: str) -> None:
        self.leader.notify(workload_id)

    def reconciler_runs(self) -> bool | None:
        if not self.leader.leading.is_set():
            return None
        return self._work is not None and self._work.running

    def stop(self) -> None:
        self.leader.stop()
        self.cluster.close()


def _has_ended(owner: dict[str, Any]) -> bool:
    """A workspace's StatefulSet scaled down for good when its workload ended: never run
    again, whatever the store says (its write may have been lost)."""
    annotations = (owner.get("metadata") or {}).get("annotations") or {}
    return ScaledKind.ENDED_PHASE in annotations
