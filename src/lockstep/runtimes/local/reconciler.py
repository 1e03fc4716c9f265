"""The local runtime's reconciler: takes workload ids from a queue and, for each, compares
desired with observed and acts through the runtime, then runs one scheduling cycle. It runs on
a thread of the API server or as the main loop of the reconciler process (see controllers.py);
its thread and run loop are every reconciler's (reconciler/reconcile_loop.py).

Level-triggered: a pass looks only at the stored workload and the runtime's view, never at
what triggered it, so a missed or repeated wake-up is harmless. Every pass of a workload ends
in at most one write. Ids come from the API (after each commit), from the runtime (a process
ended), from delayed re-checks (stop deadlines) and from a periodic resync of every live one.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from lockstep.domain.clock import Clock
from lockstep.domain.cluster import Assignment, Node
from lockstep.domain.phases import DesiredPhase, Phase, can_transition, check_transition
from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.workload import EventType, PendingMessage, PodPhase, Workload, WorkloadUpdate
from lockstep.observability.instruments import Instruments
from lockstep.reconciler.observed import Recorder
from lockstep.reconciler.outcome import (
    BACKOFF_REASON,
    Outcome,
    gang_restarts,
    outcome,
    restart_backoff,
)
from lockstep.reconciler.passes import decide_all
from lockstep.reconciler.queue import ORGANIZATION_CHANGED, WorkQueue
from lockstep.reconciler.recent_usage import RecentUsage
from lockstep.reconciler.reconcile_loop import ReconcileLoop
from lockstep.reconciler.shares import shares_to_store, snapshot_of, usage_from_store
from lockstep.runtimes.base import PodStatus, Runtime
from lockstep.scheduler.cycle import schedule
from lockstep.scheduler.decisions import Decisions, Waiting
from lockstep.scheduler.gang.candidates import Candidate, Holder
from lockstep.scheduler.gang.needs import GangPlacement, PodNeed
from lockstep.scheduler.gang.of_workload import Gang, gang_of
from lockstep.scheduler.nodes.ever_fits import can_never_fit
from lockstep.scheduler.nodes.index import pod_room
from lockstep.scheduler.nodes.placement import place
from lockstep.scheduler.nodes.usage import Usage
from lockstep.scheduler.quota.amounts import RESOURCES
from lockstep.scheduler.quota.fair_share import TimeAware
from lockstep.scheduler.quota.organization import Organization
from lockstep.scheduler.quota.pool_amounts import capacity
from lockstep.schemas.distributed import CleanPodPolicy, DistributedFramework
from lockstep.store.database import Database
from lockstep.store.scheduling import ShareKey
from lockstep.store.scheduling import Shares as StoredShares

log = logging.getLogger(__name__)

DEFAULT_GRACE_SECONDS = 30.0
WAITING_TO_SCHEDULE = "waiting to be scheduled"
SCHEDULE_BATCH = 1024
"""The most queued workloads one cycle decides on…"""
SCHEDULE_PER_PROJECT = 64
"""…and the most of them from one project's queue, so that no long queue hides another's."""
PLAN_CACHE_SIZE = 2048
GANG_CACHE_SIZE = 32_768
"""Gangs (two pod groups each, whatever their size) of every admitted and queued workload a
cycle looks at: more than the queue heads and the running workloads of a large cluster."""
LOG_TAIL_LINES = 5
LOG_LINE_CHARACTERS = 200


@dataclass(frozen=True, slots=True)
class LocalReconcilerSettings:
    resync_seconds: float = 30.0
    stop_poll_seconds: float = 0.5
    min_pass_seconds: float = 0.02
    restart_backoff_seconds: float = 10.0
    time_aware: TimeAware | None = None
    """Time-aware fair share (off: None)."""
    usage_half_life_seconds: float = 3600.0
    max_pods_per_project: int | None = None
    """The most pods one project holds at once (None: no limit); more wait Pending."""


class LocalReconciler(ReconcileLoop):
    def __init__(
        self,
        database: Database,
        runtime: Runtime,
        *,
        clock: Clock,
        queue: WorkQueue,
        settings: LocalReconcilerSettings | None = None,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        instruments: Instruments | None = None,
    ) -> None:
        """`instruments`: times passes and scheduling cycles, and counts pods (/metrics)."""
        self._settings = settings or LocalReconcilerSettings()
        super().__init__(
            database,
            clock=clock,
            queue=queue,
            resync_seconds=self._settings.resync_seconds,
            min_pass_seconds=self._settings.min_pass_seconds,
        )
        self._runtime = runtime
        self._instruments = instruments
        self._recorder = Recorder(clock=clock, new_id=new_id, instruments=instruments)
        self._schedule_needed = True
        self._plans: dict[str, ReplicaPlan] = {}
        self._gangs: dict[str, Gang] = {}
        self._nodes: list[Node] | None = None
        """The nodes of the last cycle: parked workloads are looked at again when they change."""
        self._fit_idle: set[str] = set()
        """Workloads known to fit these nodes were they idle (never parked, then)."""
        self._elastic_waiting = True
        """Some admitted elastic workload may have pods waiting for room (unknown at first)."""
        self._recent_usage = RecentUsage(self._settings.usage_half_life_seconds)
        self._stored_shares: dict[ShareKey, StoredShares] | None = None
        """The fair shares last written (None: not read yet)."""

    # --- recovery and resync --------------------------------------------------------------

    def recover(self) -> None:
        """On start: every live workload is looked at, and the runtime's pods of workloads
        the store no longer holds (or holds as deleted) are stopped and removed. Parked
        workloads are queued again: the machine may have changed since they were parked."""
        with self._db.write(durable=False) as unit:
            unit.workloads.unpark_all()
            stored = unit.scheduling.shares()
        self._stored_shares = dict(stored)
        self._recent_usage.averages = usage_from_store(stored)
        live = set(self._ids_to_reconcile())
        for workload_id in sorted(self._runtime.workload_ids() - live):
            with self._db.read() as unit:
                workload = unit.workloads.get(workload_id, include_deleted=True)
            if workload is None or workload.deleted_at is not None:
                log.info("removing pods of workload %s, which is gone from the store", workload_id)
                self._runtime.stop(workload_id, grace_seconds=0)
                self._runtime.delete(workload_id)
            else:
                live.add(workload_id)
        for workload_id in live:
            self._queue.add(workload_id)

    def resync(self) -> None:
        """Every live workload is looked at again, and a scheduling cycle runs."""
        self._schedule_needed = True

    # --- one pass -------------------------------------------------------------------------

    def run_pass(self, keys: Sequence[str] | set[str]) -> None:
        """Reconcile every key, write what changed in one transaction, then schedule."""
        if ORGANIZATION_CHANGED in keys:
            keys = set(keys) - {ORGANIZATION_CHANGED}
            self._schedule_needed = True
        began = time.perf_counter()
        if self._instruments is not None:
            self._instruments.queue_depth.set(len(keys))
        changes = decide_all(self._db, self._queue, keys, self._decide)
        self._write(changes)
        if self._instruments is not None:
            self._instruments.reconcile_pass.observe(time.perf_counter() - began)
        if self._schedule_needed:
            self._schedule_needed = False
            began = time.perf_counter()
            try:
                self._write(self.schedule())
            except Exception:
                log.exception("the scheduling cycle failed; retrying")
                self._schedule_needed = True
            if self._instruments is not None:
                self._instruments.scheduling_cycle.observe(time.perf_counter() - began)

    def reconcile(self, workload: Workload) -> tuple[Workload, WorkloadUpdate] | None:
        """Act on one workload through the runtime; return what to write about it, if anything."""
        if workload.deleted_at is not None:
            return None
        if workload.desired_phase is DesiredPhase.DELETED:
            change = self._delete(workload)
        elif workload.actual_phase.is_terminal:
            change = self._finish(workload)
        elif workload.desired_phase is DesiredPhase.STOPPED:
            change = self._suspend(workload)
        else:
            change = self._run_workload(workload)
        if change.phase is not None and change.phase.is_terminal:
            change.auto_delete_at = self._auto_delete_at(workload)
            self._queue.add(workload.id)  # to settle and clean up what is left
        _check(workload, change)
        return None if change.is_empty else (workload, change)

    def _decide(self, workload: Workload) -> WorkloadUpdate | None:
        decided = self.reconcile(workload)
        return None if decided is None else decided[1]

    # --- desired: Deleted -----------------------------------------------------------------

    def _delete(self, workload: Workload) -> WorkloadUpdate:
        change = WorkloadUpdate()
        if (
            can_transition(workload.actual_phase, Phase.DELETING)
            and workload.actual_phase is not Phase.DELETING
        ):
            change.phase = Phase.DELETING
            change.message = "stopping pods"
        if self._stopped(workload):
            self._runtime.delete(workload.id)
            change.deleted = True
            self._schedule_needed = True
        return change

    def _stopped(self, workload: Workload) -> bool:
        """Ask the runtime to stop the workload's pods; re-check later unless they have."""
        grace = self._grace(workload)
        if self._runtime.stop(workload.id, grace_seconds=grace):
            return True
        self._queue.add_after(workload.id, self._settings.stop_poll_seconds)
        return False

    def _grace(self, workload: Workload) -> float:
        seconds = workload.request.termination_grace_seconds
        return DEFAULT_GRACE_SECONDS if seconds is None else seconds

    # --- desired: Stopped -----------------------------------------------------------------

    def _suspend(self, workload: Workload) -> WorkloadUpdate:
        phase = workload.actual_phase
        change = WorkloadUpdate()
        if phase.is_terminal or phase is Phase.STOPPED:
            return change
        if not phase.has_pods:
            change.phase, change.message = Phase.STOPPED, "suspended"
            return change
        if phase is not Phase.STOPPING:
            change.phase, change.message = Phase.STOPPING, "stopping pods"
        if self._stopped(workload):
            self._runtime.delete(workload.id, keep_logs=True)
            change.phase, change.message = Phase.STOPPED, "suspended"
            change.events.append(self._recorder.event(workload, "Suspended", "all pods stopped"))
            self._schedule_needed = True
            change.pods_removed = True
        return change

    # --- desired: Running -----------------------------------------------------------------

    def _run_workload(self, workload: Workload) -> WorkloadUpdate:
        phase = workload.actual_phase
        change = WorkloadUpdate()
        if phase in {Phase.CREATING, Phase.PENDING}:
            self._schedule_needed = True  # the scheduling cycle decides, and writes once
        elif phase is Phase.STOPPED:
            change.phase, change.message = Phase.RESUMING, "resuming"
            self._queue.add(workload.id)
        elif phase is Phase.RESUMING:
            change.phase, change.message = Phase.PENDING, WAITING_TO_SCHEDULE
            self._schedule_needed = True
        elif phase is Phase.TERMINATING:
            change = self._preempted(workload)
        elif phase in {Phase.STOPPING, Phase.DELETING}:
            if self._stopped(workload):
                self._runtime.delete(workload.id, keep_logs=True)
                change.phase, change.message = Phase.STOPPED, "stopped"
                change.pods_removed = True
        elif phase.has_pods:
            change = self._observe(workload, self._plan(workload))
        return change

    def _preempted(self, workload: Workload) -> WorkloadUpdate:
        """Stop a preempted workload's pods; then it queues again (its logs kept, its pods
        started afresh when it is admitted), or fails with terminateAfterPreemption."""
        change = WorkloadUpdate()
        if not self._stopped(workload):
            return change
        self._runtime.delete(workload.id, keep_logs=True)
        change.pods_removed = True
        self._schedule_needed = True
        if workload.request.terminate_after_preemption:
            change.phase = Phase.FAILED
            change.message = f"{workload.phase_message}; terminated (terminateAfterPreemption)"
        else:
            change.phase, change.message = Phase.PENDING, WAITING_TO_SCHEDULE
        return change

    def _observe(self, workload: Workload, plan: ReplicaPlan) -> WorkloadUpdate:
        statuses = self._runtime.observe(workload.id)
        # A training's later completions start as the ones before them succeed.
        if (
            plan.is_single_pod
            and len(statuses) < len(plan.replicas)
            and any(s.phase is PodPhase.SUCCEEDED for s in statuses)
        ):
            self._runtime.start(workload, plan, workload.placement)
            statuses = self._runtime.observe(workload.id)
        if any(s.phase is PodPhase.PENDING for s in statuses):
            # Pods held back until the gang is ready (an MPI launcher waiting for its workers).
            self._runtime.start(workload, plan, workload.placement)
            statuses = self._runtime.observe(workload.id)
            if any(s.phase is PodPhase.PENDING for s in statuses):
                self._queue.add_after(workload.id, self._settings.stop_poll_seconds)
        with self._db.read() as unit:
            known = {pod.name: pod for pod in unit.workloads.pods(workload.id, deleted=False)}
        change = WorkloadUpdate()
        change.pods, change.events = self._recorder.pod_changes(
            workload, [*statuses, *_waiting_for_room(workload, plan, statuses)], known
        )
        result = outcome(plan, statuses)
        message = result.message
        if result.restart:
            message = self._restart(workload, plan, statuses, result, change)
        if result.log_tail_of is not None:
            message += self._log_tail(workload, result.log_tail_of)
        target = result.phase
        if target != workload.actual_phase or message != workload.phase_message:
            change.phase, change.message = target, message
        if target.is_terminal:
            change.events.append(
                self._recorder.event(
                    workload,
                    target.value,
                    message,
                    type=EventType.NORMAL if target is Phase.COMPLETED else EventType.WARNING,
                )
            )
            self._settle(
                workload, plan, statuses, ended_at=self._clock(), at_once=target is Phase.FAILED
            )
            self._schedule_needed = True
        return change

    def _log_tail(self, workload: Workload, pod_name: str) -> str:
        lines = self._runtime.log_tail(workload.id, pod_name, lines=LOG_TAIL_LINES)
        if not lines:
            return ""
        shown = "\n".join(line[:LOG_LINE_CHARACTERS] for line in lines)
        return f"; the last lines of its log:\n{shown}"

    def _restart(
        self,
        workload: Workload,
        plan: ReplicaPlan,
        statuses: Sequence[PodStatus],
        result: Outcome,
        change: WorkloadUpdate,
    ) -> str:
        """Restart what `result` says once its backoff has passed; return the phase message,
        which says when the next try comes once that is known. A `BackOff` event tells each
        restart once: in the pass whose message first names its time (the message and the
        event are written together, so a later pass finds the message already there)."""
        restart = result.next_restart
        assert restart is not None
        at = self._next_try(plan, statuses, result.restart_pods)
        if at is None:
            message = restart.message()
        else:
            message = restart.message(at)
            if not (workload.phase_message or "").startswith(message):
                seconds = (at - self._clock()).total_seconds()
                change.events.append(
                    self._recorder.event(
                        workload,
                        BACKOFF_REASON,
                        restart.backoff_event(seconds=seconds, at=at),
                        type=EventType.WARNING,
                    )
                )
        if result.restart_pods:
            self._restart_pods(workload, plan, statuses, result.restart_pods, change)
        else:
            self._restart_gang(workload, plan, at, change)
        return message

    def _next_try(
        self, plan: ReplicaPlan, statuses: Sequence[PodStatus], names: Sequence[str]
    ) -> datetime | None:
        """When the restart comes: for a training's or workspace's pods (`names`), when the
        first of them is due; for the whole gang (no names), once every pod has ended, when
        the backoff has passed since the last did (None while some still run). A pod whose
        end time is unknown is due at once."""
        if names:
            return self._pod_next_try(next(s for s in statuses if s.name == names[0]))
        if any(s.phase in {PodPhase.RUNNING, PodPhase.PENDING} for s in statuses):
            return None
        ended = max((s.finished_at for s in statuses if s.finished_at is not None), default=None)
        if ended is None:
            return self._clock()
        restarts = gang_restarts(plan, statuses)
        backoff = restart_backoff(restarts, base_seconds=self._settings.restart_backoff_seconds)
        return ended + timedelta(seconds=backoff)

    def _pod_next_try(self, status: PodStatus) -> datetime:
        """When an ended pod of a training or workspace runs again: its backoff after it
        ended (at once when that is unknown)."""
        if status.finished_at is None:
            return self._clock()
        backoff = restart_backoff(
            status.restarts, base_seconds=self._settings.restart_backoff_seconds
        )
        return status.finished_at + timedelta(seconds=backoff)

    def _restart_gang(
        self,
        workload: Workload,
        plan: ReplicaPlan,
        at: datetime | None,
        change: WorkloadUpdate,
    ) -> None:
        """Fail fast: stop the rest of the gang now (`at` is None while some of it runs); once
        every pod has ended and the backoff has passed (at `at`), start them all again."""
        if at is None:
            if not self._runtime.stop(workload.id, grace_seconds=self._grace(workload)):
                self._queue.add_after(workload.id, self._settings.stop_poll_seconds)
            return
        wait = (at - self._clock()).total_seconds()
        if wait > 0:
            self._queue.add_after(workload.id, wait)
            return
        self._runtime.restart(workload, plan)
        change.events.append(
            self._recorder.event(
                workload, "Restarting", "starting every pod again", type=EventType.WARNING
            )
        )
        self._queue.add(workload.id)

    def _restart_pods(
        self,
        workload: Workload,
        plan: ReplicaPlan,
        statuses: Sequence[PodStatus],
        names: Sequence[str],
        change: WorkloadUpdate,
    ) -> None:
        """A training's or workspace's ended pods: each runs again once its backoff has
        passed, the others running on."""
        now = self._clock()
        due: list[str] = []
        for status in statuses:
            if status.name not in names:
                continue
            wait = (self._pod_next_try(status) - now).total_seconds()
            if wait > 0:
                self._queue.add_after(workload.id, wait)
            else:
                due.append(status.name)
        if not due:
            return
        self._runtime.restart(workload, plan, only=due)
        change.events.append(
            self._recorder.event(
                workload, "Restarting", f"starting {', '.join(due)} again", type=EventType.WARNING
            )
        )
        self._queue.add(workload.id)

    def _finish(self, workload: Workload) -> WorkloadUpdate:
        """A finished workload whose pods may still run: record them until none does; delete
        it once its autoDeletionTimeAfterCompletionSeconds have passed."""
        if self._due_for_deletion(workload):
            return self._delete(workload)
        statuses = self._runtime.observe(workload.id)
        with self._db.read() as unit:
            known = {pod.name: pod for pod in unit.workloads.pods(workload.id, deleted=False)}
        change = WorkloadUpdate()
        change.pods, change.events = self._recorder.pod_changes(workload, statuses, known)
        plan = self._plan(workload)
        self._settle(
            workload,
            plan,
            statuses,
            ended_at=workload.completed_at or self._clock(),
            at_once=workload.actual_phase is Phase.FAILED,
        )
        if (
            plan.clean_pod_policy is CleanPodPolicy.ALL
            and statuses
            and all(s.phase not in {PodPhase.RUNNING, PodPhase.PENDING} for s in statuses)
        ):
            self._runtime.delete(workload.id, keep_logs=True)
            change.pods_removed = True
        return change

    def _settle(
        self,
        workload: Workload,
        plan: ReplicaPlan,
        statuses: Sequence[PodStatus],
        *,
        ended_at: datetime,
        at_once: bool = False,
    ) -> None:
        """Pods still running when the workload ended get the grace period to exit on their
        own, then are stopped: nothing outlives the workload. They are stopped at once when it
        failed, with cleanPodPolicy All or Running, and for MPI (whose workers only serve the
        launcher, and would wait for ever)."""
        if not any(s.phase in {PodPhase.RUNNING, PodPhase.PENDING} for s in statuses):
            return
        grace = self._grace(workload)
        stop_now = (
            at_once
            or plan.framework is DistributedFramework.MPI
            or plan.clean_pod_policy in {CleanPodPolicy.ALL, CleanPodPolicy.RUNNING}
        )
        linger = 0.0 if stop_now else grace
        remaining = (ended_at - self._clock()).total_seconds() + linger
        if remaining > 0:
            self._queue.add_after(workload.id, remaining)
        elif not self._runtime.stop(workload.id, grace_seconds=grace):
            self._queue.add_after(workload.id, self._settings.stop_poll_seconds)

    # --- scheduling -----------------------------------------------------------------------

    def _plan(self, workload: Workload) -> ReplicaPlan:
        """A workload's plan, remembered: its spec never changes."""
        plan = self._plans.get(workload.id)
        if plan is None:
            if len(self._plans) >= PLAN_CACHE_SIZE:
                self._plans.clear()
            plan = self._plans[workload.id] = workload.plan()
        return plan

    def _gang(self, workload: Workload) -> Gang:
        """A workload as the scheduler sees it (its shape, never its pods), remembered."""
        gang = self._gangs.get(workload.id)
        if gang is None:
            if len(self._gangs) >= GANG_CACHE_SIZE:
                self._gangs.clear()
            gang = self._gangs[workload.id] = gang_of(workload)
        return gang

    def _holders(self, admitted: list[Workload], usage: Usage) -> list[Holder]:
        """What the admitted workloads hold (counted in `usage`), the first submitted first:
        among equal priority the newest gives way first, as KAI evicts in the reverse of its
        queue order."""
        holders = []
        room = pod_room(usage.nodes)
        for workload in sorted(admitted, key=lambda w: (w.created_at, w.id)):
            gang = self._gang(workload)
            placement = workload.placement
            if placement is None:
                # Admitted before its placement was recorded: count it where it fits now.
                needs = list(gang.shape.pods(limit=room + 1))
                placed = place(usage, needs, affinity=gang.affinity)
                placement = placed if isinstance(placed, dict) else {}
            else:
                needs = _held_and_next(gang, placement, room)
                usage.hold(needs, placement)
            holders.append(
                Holder(
                    workload_id=workload.id,
                    name=workload.name,
                    needs=needs,
                    placement=dict(placement),
                    priority=workload.priority,
                    preemptible=workload.preemptible,
                    leaving=workload.actual_phase is Phase.TERMINATING,
                    waiting=[need for need in needs if need.pod not in placement],
                    affinity=gang.affinity,
                    project_id=workload.project_id,
                )
            )
        self._elastic_waiting = any(holder.waiting for holder in holders)
        return holders

    def _unmet(self, heads: list[Workload], plans: dict[str, ReplicaPlan]) -> dict[str, str]:
        """What each pending workload waits for beside room (the runtime says), by id."""
        unmet = {
            w.id: reason
            for w in heads
            if (reason := self._runtime.waiting_for(w, plans[w.id])) is not None
        }
        if unmet:
            self._schedule_needed = True  # look again: what they wait for may come any time
        return unmet

    def _candidate(self, workload: Workload) -> Candidate:
        gang = self._gang(workload)
        return Candidate(
            workload_id=workload.id,
            name=workload.name,
            shape=gang.shape,
            affinity=gang.affinity,
            priority=workload.priority,
            required=gang.required,
            project_id=workload.project_id,
            preemptible=workload.preemptible,
        )

    def _never_fit(self, nodes: list[Node], candidates: list[Candidate]) -> dict[str, str]:
        """The candidates that could never fit these nodes, with why (their parking message);
        those that could are remembered as such until the nodes change."""
        if len(self._fit_idle) >= GANG_CACHE_SIZE:
            self._fit_idle.clear()
        parked = {}
        for candidate in candidates:
            if candidate.workload_id not in self._fit_idle:
                message = can_never_fit(nodes, candidate)
                if message is None:
                    self._fit_idle.add(candidate.workload_id)
                else:
                    parked[candidate.workload_id] = message
        return parked

    def _current_nodes(self) -> list[Node]:
        """The runtime's nodes; when they changed since the last cycle, every parked workload
        is queued again (it may fit now)."""
        nodes = list(self._runtime.nodes())
        if self._nodes is not None and nodes != self._nodes:
            with self._db.write(durable=False) as unit:
                unit.workloads.unpark_all()
            self._fit_idle.clear()
        self._nodes = nodes
        return nodes

    def _cycle(
        self,
        nodes: list[Node],
        heads: list[Workload],
        admitted: list[Workload],
        organization: Organization,
    ) -> tuple[Decisions, dict[str, str], dict[str, ReplicaPlan]]:
        """The scheduler's decisions on `heads`, what those not decided on wait for beside
        room, and the plans of those that could fit. A gang that could never fit is parked
        judged from its shape, before anything of it is built pod by pod (its plan included)."""
        candidates = {w.id: self._candidate(w) for w in heads}
        parked = self._never_fit(nodes, list(candidates.values()))
        placeable = [w for w in heads if w.id not in parked]
        plans = {w.id: self._plan(w) for w in placeable}
        unmet = self._unmet(placeable, plans)
        usage = Usage(nodes)
        holders = self._holders(admitted, usage)
        time_aware = self._settings.time_aware
        decisions = schedule(
            usage,
            [candidates[w.id] for w in placeable if w.id not in unmet],
            holders,
            organization=organization,
            fit_idle=self._fit_idle,
            time_aware=time_aware,
            recent_usage=self._recent_usage.averages if time_aware is not None else None,
            max_pods_per_project=self._settings.max_pods_per_project,
        )
        decisions.parked.update(parked)
        return decisions, unmet, plans

    def _keep_shares(self, decisions: Decisions, nodes: Sequence[Node]) -> None:
        """Fold what each project holds into its recent usage, and store the shares (and the
        usage) when they changed, for the API to show."""
        pools = capacity(nodes)
        self._recent_usage.observe(
            {
                project: {
                    pool: {resource: share.allocated for resource, share in resources.items()}
                    for pool, resources in by_pool.items()
                }
                for project, by_pool in decisions.shares.items()
            },
            {pool: dict(zip(RESOURCES, amounts, strict=True)) for pool, amounts in pools.items()},
            time.monotonic(),
        )
        stored = shares_to_store(decisions, self._recent_usage.averages)
        if stored != self._stored_shares:
            with self._db.write(durable=False) as unit:
                unit.scheduling.replace_shares(stored, self._clock())
            self._stored_shares = stored

    def _preemptions(
        self, decisions: Decisions, heads: Sequence[Workload], running: Mapping[str, Workload]
    ) -> list[tuple[Workload, WorkloadUpdate]]:
        """The workloads stopped to make room, each with an event naming who takes it."""
        changes = []
        for workload_id, preemption in decisions.preempted.items():
            victim = running[workload_id]
            taker = next((w for w in heads if w.id == preemption.by_id), None)
            if preemption.reclaim:
                reason = "Reclaimed"
                project = f" of project {taker.project_name}" if taker is not None else ""
                message = f"reclaimed for workload {preemption.by}{project}"
            else:
                reason, message = "Preempted", f"preempted by workload {preemption.by}"
            change = WorkloadUpdate(phase=Phase.TERMINATING, message=message)
            change.events.append(
                self._recorder.event(victim, reason, message, type=EventType.WARNING)
            )
            changes.append((victim, change))
            self._queue.add(workload_id)
        return changes

    def schedule(self) -> list[tuple[Workload, WorkloadUpdate]]:
        """One cycle: admit the pending gangs that fit, in submission order, and start them.
        Returns what to write about the workloads it decided on."""
        nodes = self._current_nodes()
        with self._db.read() as unit:
            heads = unit.workloads.queue_heads(
                per_project=SCHEDULE_PER_PROJECT, limit=SCHEDULE_BATCH
            )
            admitted = unit.workloads.admitted()
            organization = snapshot_of(
                unit.organization.projects(),
                unit.organization.departments(),
                sorted({node.pool for node in nodes}),
            )
        changes: list[tuple[Workload, WorkloadUpdate]] = []
        if len(heads) == SCHEDULE_BATCH or _some_project_has(heads, SCHEDULE_PER_PROJECT):
            self._schedule_needed = True  # more are queued behind this batch
        decisions, unmet, plans = self._cycle(nodes, heads, admitted, organization)
        self._keep_shares(decisions, nodes)
        by_id = {w.id: w for w in heads}
        running = {w.id: w for w in admitted}
        changes += self._preemptions(decisions, heads, running)
        for workload_id, placement in decisions.admitted.items():
            workload = by_id[workload_id]
            try:
                self._runtime.start(workload, plans[workload_id], placement)
            except Exception as error:
                log.exception("starting the pods of %s failed", workload_id)
                failed = WorkloadUpdate(phase=Phase.FAILED, message=f"could not start: {error}")
                changes.append((workload, _via_pending(workload, failed)))
                continue
            if len(placement) < plans[workload_id].gang_size:
                self._elastic_waiting = True  # an elastic gang started without all its pods
            change = WorkloadUpdate(
                phase=Phase.INITIALIZING, message="starting pods", placement=placement
            )
            change.events.append(
                self._recorder.event(
                    workload, "Scheduled", _scheduled(plans[workload_id], placement)
                )
            )
            changes.append((workload, _via_pending(workload, change)))
            self._queue.add(workload_id)
        for workload_id, placement in decisions.grown.items():
            workload = running[workload_id]
            self._runtime.start(workload, self._plan(workload), placement)
            new = sorted(set(placement) - set(workload.placement or {}))
            change = WorkloadUpdate(placement=placement)
            change.events.append(
                self._recorder.event(workload, "Scheduled", f"room for {', '.join(new)}: starting")
            )
            changes.append((workload, change))
            self._queue.add(workload_id)
        for workload_id, message in decisions.parked.items():
            parked = WorkloadUpdate(phase=Phase.PENDING, message=message, parked=True)
            changes.append((by_id[workload_id], parked))
        waiting = decisions.waiting | {i: Waiting(message) for i, message in unmet.items()}
        for workload_id, why in waiting.items():
            workload = by_id[workload_id]
            pending = _pending(why)
            if (
                workload.actual_phase is Phase.CREATING
                or workload.phase_message != why.message
                or workload.pending != pending
            ):
                change = WorkloadUpdate(phase=Phase.PENDING, message=why.message, pending=pending)
                changes.append((workload, change))
        for workload, change in changes:
            _check(workload, change)
        return changes


def _pending(why: Waiting) -> tuple[PendingMessage, ...]:
    """The contract's pending scheduling message, where a quota is why it waits."""
    if why.reason is None:
        return ()
    return (
        PendingMessage(
            node_pool=why.pool,
            phase_reason=why.reason.value,
            reason=why.message,
            org_type=why.org_type,
        ),
    )


def _some_project_has(heads: Sequence[Workload], count: int) -> bool:
    """Whether `count` of the heads come from one project (more of its queue may wait)."""
    per_project: dict[str, int] = {}
    for workload in heads:
        per_project[workload.project_id] = per_project.get(workload.project_id, 0) + 1
    return any(n >= count for n in per_project.values())


def _held_and_next(gang: Gang, placement: Mapping[str, Assignment], room: int) -> list[PodNeed]:
    """What an admitted gang's placed pods ask, and its first `room` pods without a place (an
    elastic gang's, which may yet start): never more of a large elastic gang than could ever
    start. Placed pods come first in rank order (the rest start as room frees, in order)."""
    needs: list[PodNeed] = []
    found = waiting = 0
    for need in gang.shape.pods():
        if need.pod in placement:
            needs.append(need)
            found += 1
        elif waiting < room:
            needs.append(need)
            waiting += 1
        if found >= len(placement) and waiting >= room:
            break
    return needs


def _waiting_for_room(
    workload: Workload, plan: ReplicaPlan, statuses: Sequence[PodStatus]
) -> list[PodStatus]:
    """A Pending status for each pod of an elastic workload that has no room yet."""
    if workload.placement is None or not plan.is_elastic:
        return []
    seen = {status.name for status in statuses}
    return [
        PodStatus(
            name=replica.pod_name,
            role=replica.role.value,
            index=replica.index,
            phase=PodPhase.PENDING,
            image=replica.spec.image or "",
            node_name="",
            message="waits for room on a node (the workload runs without it until then)",
            scheduled=False,
        )
        for replica in plan.replicas
        if replica.pod_name not in workload.placement and replica.pod_name not in seen
    ]


def _scheduled(plan: ReplicaPlan, placement: GangPlacement) -> str:
    """`all 4 pods admitted together on node a (GPUs 0, 1)`, or for an elastic gang short of
    room `3 of 4 pods admitted together …`."""
    nodes = sorted({a.node for a in placement.values()})
    gpus = sorted({i for a in placement.values() for i in a.gpus})
    where = f"node {nodes[0]}" if len(nodes) == 1 else f"nodes {', '.join(nodes)}"
    held = f" (GPUs {', '.join(map(str, gpus))})" if gpus else ""
    count = plan.gang_size
    admitted = f"all {count}" if len(placement) == count else f"{len(placement)} of {count}"
    return f"{admitted} pods admitted together on {where}{held}"


def _via_pending(workload: Workload, change: WorkloadUpdate) -> WorkloadUpdate:
    """A new workload admitted (or failed) in its first cycle still passes through Pending."""
    if workload.actual_phase is Phase.CREATING:
        change.through = Phase.PENDING
    return change


def _check(workload: Workload, change: WorkloadUpdate) -> None:
    """Raise `PhaseTransitionError` unless the table allows every step of `change`."""
    current = workload.actual_phase
    if change.through is not None:
        current = check_transition(current, change.through)
    if change.phase is not None:
        check_transition(current, change.phase)
