"""One scheduling cycle: snapshot → fair shares → ordering → gang fit → admit, reclaim or wait.

Each project has its own queue, by priority then submission order, strictly: a gang that
waits (for room, or for its quota) blocks those behind it in its project only, so a large gang
is never starved by its own project's small ones and never holds up another project. The
project whose next gang leaves it least saturated (what it would hold over its fair share,
quota/fair_share.py) goes next; ties by that gang's priority, then submission order. A gang that
cannot fit even on an idle cluster is parked (it waits without blocking anyone) until capacity
changes; one that asks more than a limit allows, or a non-preemptible one that asks more than
its deserved share, waits without blocking either (it cannot run as things are).

Quotas, per pool and resource, for each gang about to be admitted (where it was placed):
- never past its project's or department's `limit` (`OverLimit`);
- a non-preemptible gang only within deserved (`NonPreemptibleOverQuota`);
- beyond its fair share only while no gang waits for room it is taking back (see below);
- never past the pod limit every project has (`max_pods_per_project`, all pools together):
  a gang whose pods would take its project past it waits (`OverLimit`, holding back its
  project's queue but no room) until pods of the project end; one whose required pods alone
  pass it waits without blocking. An elastic gang starts, and grows, only within it.

A gang that does not fit what is free makes room (preemption/): by reclaim when its project (and
department) stays within its fair share with it, else by priority within its project. Then it
waits, and what frees is held for it: for the rest of the cycle no project may grow beyond its
fair share, and next cycle its project, now less saturated than those it reclaimed from, comes
first — so a gang within its project's deserved share is admitted in bounded time whatever
stream of small gangs others submit.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Sequence
from enum import Enum

from lockstep.domain.quotas import UNLIMITED
from lockstep.scheduler.decisions import Decisions, PhaseReason, Preemption, Waiting
from lockstep.scheduler.gang.candidates import Candidate, Holder
from lockstep.scheduler.gang.needs import GangPlacement, PodNeed
from lockstep.scheduler.gang.shape import GangShape
from lockstep.scheduler.nodes.ever_fits import can_never_fit
from lockstep.scheduler.nodes.index import pod_room
from lockstep.scheduler.nodes.placement import fits, grow, place
from lockstep.scheduler.nodes.shortfall import GangShortfall
from lockstep.scheduler.nodes.usage import Usage
from lockstep.scheduler.preemption.priority import by_priority
from lockstep.scheduler.preemption.reclaim import Reclaim
from lockstep.scheduler.quota import messages as say
from lockstep.scheduler.quota.amounts import EPSILON, RESOURCES, Amounts, first_over, zero
from lockstep.scheduler.quota.books import Books
from lockstep.scheduler.quota.fair_share import RecentUsage, Share, TimeAware, fair_shares
from lockstep.scheduler.quota.hierarchy import Hierarchy
from lockstep.scheduler.quota.organization import NO_ORGANIZATION, Organization, OrgType
from lockstep.scheduler.quota.pool_amounts import asked, capacity, home_pool, placed_amounts


def schedule(
    usage: Usage,
    heads: Sequence[Candidate],
    holders: Sequence[Holder] = (),
    *,
    organization: Organization = NO_ORGANIZATION,
    fit_idle: Collection[str] = (),
    time_aware: TimeAware | None = None,
    recent_usage: RecentUsage | None = None,
    max_pods_per_project: int | None = None,
) -> Decisions:
    """Decide on `heads` (in submission order, oldest first) given what `usage` says is taken
    by `holders` (the first submitted first); admitted gangs are counted in `usage`. `fit_idle`:
    candidates already known to fit these nodes were they idle (see `can_never_fit`), not
    judged again. `time_aware` (off by default) lowers over-quota shares by `recent_usage`.
    `max_pods_per_project`: the most pods one project holds at once (None: no limit)."""
    return _Cycle(
        usage,
        heads,
        holders,
        organization,
        fit_idle,
        time_aware,
        recent_usage,
        max_pods_per_project,
    ).run()


class _Cycle:
    def __init__(  # noqa: PLR0917 - the arguments of `schedule`, passed on
        self,
        usage: Usage,
        heads: Sequence[Candidate],
        holders: Sequence[Holder],
        organization: Organization,
        fit_idle: Collection[str],
        time_aware: TimeAware | None,
        recent_usage: RecentUsage | None,
        max_pods_per_project: int | None,
    ) -> None:
        self.usage = usage
        self.heads = heads
        self.holders = holders
        self.fit_idle = fit_idle
        self.decisions = Decisions()
        self.pool_of = {node.name: node.pool for node in usage.nodes}
        self.pools = list(dict.fromkeys(node.pool for node in usage.nodes))
        self.capacity = capacity(usage.nodes)
        self.room = pod_room(usage.nodes)
        self.hierarchy = Hierarchy(
            organization, [c.project_id for c in heads] + [h.project_id for h in holders]
        )
        self.held = {
            h.workload_id: placed_amounts(h.needs, h.placement, self.pool_of) for h in holders
        }
        allocated: dict[str, dict[str, Amounts]] = {}
        non_preemptible: dict[str, dict[str, Amounts]] = {}
        pods: dict[str, int] = {}
        for holder in holders:
            if not holder.leaving:
                pods[holder.project_id] = pods.get(holder.project_id, 0) + len(holder.placement)
                _add(allocated.setdefault(holder.project_id, {}), self.held[holder.workload_id])
                if not holder.preemptible:
                    ledger = non_preemptible.setdefault(holder.project_id, {})
                    _add(ledger, self.held[holder.workload_id])
        requested = {
            p: {pool: list(a) for pool, a in pools.items()} for p, pools in allocated.items()
        }
        self.asks: dict[str, Amounts] = {}
        self.home: dict[str, str] = {}
        for candidate in heads:
            ask = self.asks[candidate.workload_id] = asked(candidate.required_shape)
            home = self.home[candidate.workload_id] = home_pool(candidate.shape, self.pools)
            _add(requested.setdefault(candidate.project_id, {}), {home: ask})
        shares = fair_shares(
            self.hierarchy,
            self.capacity,
            requested,
            time_aware=time_aware,
            recent_usage=recent_usage,
        )
        self.books = Books(
            self.hierarchy,
            shares,
            allocated,
            requested,
            non_preemptible,
            pods=pods,
            pod_limit=max_pods_per_project,
        )
        self.free = self._free()
        self.held_for: Candidate | None = None
        self.blocked: set[str] = set()
        self._by_project: dict[str, list[Holder]] | None = None

    def run(self) -> Decisions:
        queues: dict[str, list[Candidate]] = {}
        order = {c.workload_id: i for i, c in enumerate(self.heads)}
        for candidate in self.heads:
            queues.setdefault(candidate.project_id, []).append(candidate)
        for queue in queues.values():
            queue.sort(key=lambda c: -c.priority)  # stable: submission order among equals
        heap = [self._key(queue[0], order, p) for p, queue in queues.items()]
        heapq.heapify(heap)
        cursor = dict.fromkeys(queues, 0)
        held_back: dict[str, Candidate] = {}
        """Per project, the non-preemptible gang that waits for its deserved share: the
        project's non-preemptible gangs behind it wait behind it, its preemptible ones not."""
        while heap:
            *_, project = heapq.heappop(heap)
            queue = queues[project]
            candidate = queue[cursor[project]]
            cursor[project] += 1
            first = held_back.get(project)
            if first is not None and not candidate.preemptible:
                self._behind(candidate, first)
                blocks = Blocks.NONE
            else:
                blocks = self._decide(candidate)
            if blocks in {Blocks.ALL, Blocks.QUEUE}:
                if blocks is Blocks.ALL:
                    self.blocked.add(project)
                for behind in queue[cursor[project] :]:
                    self._behind(behind, candidate)
                continue
            if blocks is Blocks.NON_PREEMPTIBLE:
                held_back[project] = candidate
            if cursor[project] < len(queue):
                heapq.heappush(heap, self._key(queue[cursor[project]], order, project))
        if not self.blocked:
            self._grow()
        for queue in queues.values():
            position = 0
            for candidate in queue:
                if candidate.workload_id in self.decisions.waiting:
                    position += 1
                    self.decisions.positions[candidate.workload_id] = position
        self._report()
        return self.decisions

    def _key(
        self, candidate: Candidate, order: dict[str, int], project: str
    ) -> tuple[float, int, int, str]:
        ask = self.asks[candidate.workload_id]
        account = self.books.project(project, self.home[candidate.workload_id])
        saturation = 0.0
        for r, value in enumerate(ask):
            if value > EPSILON:
                after = account.allocated[r] + value
                fair = account.fair[r]
                saturation = max(saturation, after / fair if fair > EPSILON else float("inf"))
        return saturation, -candidate.priority, order[candidate.workload_id], project

    def _decide(self, candidate: Candidate) -> Blocks:
        """Decide on the project's next gang, and whom of its project behind it it holds."""
        workload_id = candidate.workload_id
        if workload_id not in self.fit_idle:
            never = can_never_fit(self.usage.nodes, candidate)
            if never is not None:
                self.decisions.parked[workload_id] = never
                return Blocks.NONE
        ask, home = self.asks[workload_id], self.home[workload_id]
        hopeless = self._hopeless(candidate, ask, home)
        if hopeless is not None:
            self.decisions.waiting[workload_id] = hopeless
            return Blocks.NONE
        # It could fit the cluster, so its required pods are at most what the nodes run at
        # once; of an elastic gang's other pods no more than that could ever start either,
        # nor more than its project's pod limit leaves.
        required = candidate.required or candidate.shape.size
        most = required + self.room
        pods_left = self.books.pods_left(candidate.project_id)
        if pods_left is not None:
            if required > pods_left:
                self.decisions.waiting[workload_id] = self._over_pods(candidate, required, home)
                return Blocks.QUEUE
            most = min(most, pods_left)
        needs = list(candidate.shape.pods(limit=most))
        placed = place(self.usage, needs, affinity=candidate.affinity)
        if isinstance(placed, GangShortfall) and required < len(needs):
            placed = _elastic(self.usage, candidate, needs[:required], needs[required:])
        if not isinstance(placed, GangShortfall):
            amounts = placed_amounts(needs, placed, self.pool_of)
            refusal = self._refusal(candidate, amounts, hold=True)
            if refusal is not None:
                self.usage.release(needs, placed)
                self.decisions.waiting[workload_id] = refusal
                return _blocks(refusal)
            self.decisions.admitted[workload_id] = placed
            self._take(candidate.project_id, amounts, preemptible=candidate.preemptible)
            self.books.charge_pods(candidate.project_id, len(placed))
            return Blocks.NONE
        refusal = self._refusal(candidate, {home: ask}, hold=False)
        self.decisions.waiting[workload_id] = refusal or self._make_room(
            candidate, needs, home, ask, placed
        )
        return Blocks.ALL if refusal is None else _blocks(refusal)

    def _hopeless(self, candidate: Candidate, ask: Amounts, home: str) -> Waiting | None:
        """Why the gang cannot run under its quotas whatever others do (it waits without
        blocking its project), or None."""
        limit = self.books.pod_limit
        required = candidate.required or candidate.shape.size
        if limit is not None and required > limit:
            name = self.hierarchy.name(candidate.project_id)
            message = say.beyond_pod_limit(name, limit=limit, asked=required)
            return Waiting(message, PhaseReason.OVER_LIMIT, home, OrgType.PROJECT)
        for account in self.books.both(candidate.project_id, home):
            r = first_over(zero(), ask, account.limit)
            if r is not None:
                message = say.beyond_limit(account, r, ask[r])
                return Waiting(message, PhaseReason.OVER_LIMIT, home, account.kind)
            r = None if candidate.preemptible else first_over(zero(), ask, account.deserved)
            if r is not None:
                message = say.non_preemptible(account, r, ask[r], ever=True)
                return Waiting(message, PhaseReason.NON_PREEMPTIBLE_OVER_QUOTA, home, account.kind)
        return None

    def _refusal(
        self, candidate: Candidate, amounts: dict[str, Amounts], *, hold: bool
    ) -> Waiting | None:
        """Why quotas refuse the gang holding `amounts` (pool → amounts) now, or None."""
        for pool, more in amounts.items():
            for account in self.books.both(candidate.project_id, pool):
                held = account.allocated
                r = first_over(held, more, account.limit)
                if r is not None:
                    message = say.over_limit(account, r, more[r])
                    return Waiting(message, PhaseReason.OVER_LIMIT, pool, account.kind)
                held_for_good = account.non_preemptible
                r = (
                    None
                    if candidate.preemptible
                    else first_over(held_for_good, more, account.deserved)
                )
                if r is not None:
                    message = say.non_preemptible(account, r, more[r])
                    reason = PhaseReason.NON_PREEMPTIBLE_OVER_QUOTA
                    return Waiting(message, reason, pool, account.kind)
                holder = self.held_for
                if hold and holder is not None and first_over(held, more, account.fair) is not None:
                    return Waiting(say.held_for(holder.name, pool), None, pool)
        return None

    def _over_pods(self, candidate: Candidate, required: int, home: str) -> Waiting:
        """The gang's required pods would take its project past the pod limit."""
        project = candidate.project_id
        limit = self.books.pod_limit
        assert limit is not None
        message = say.over_pod_limit(
            self.hierarchy.name(project),
            limit=limit,
            held=self.books.pods.get(project, 0),
            asked=required,
        )
        return Waiting(message, PhaseReason.OVER_LIMIT, home, OrgType.PROJECT)

    def _make_room(
        self,
        candidate: Candidate,
        needs: Sequence[PodNeed],
        home: str,
        ask: Amounts,
        shortfall: GangShortfall,
    ) -> Waiting:
        """Choose whom to stop so the gang fits; what it waits for, in words."""
        preempted = self.decisions.preempted
        going = [h for h in self.holders if h.leaving or h.workload_id in preempted]
        for holder in going:
            self.usage.release(holder.needs, holder.placement)
        try:
            if fits(self.usage, needs, candidate.affinity):
                self.held_for = candidate
                return Waiting("waiting for preempted workloads to stop", pool=home)
            ranked = self._ranked()
            others = {p: q for p, q in ranked.items() if p != candidate.project_id}
            victims = Reclaim(self.usage, self.books, self.held, preempted).victims(
                needs,
                candidate.affinity,
                project=candidate.project_id,
                pool=home,
                ask=ask,
                others=others,
            )
            reclaim = victims is not None
            if victims is None:
                mine = [
                    h
                    for h in ranked.get(candidate.project_id, ())
                    if h.workload_id not in preempted
                ]
                victims = by_priority(
                    self.usage, needs, candidate.affinity, candidate.priority, mine
                )
        finally:
            for holder in going:
                self.usage.hold(holder.needs, holder.placement)
        if victims is None:
            return self._short(candidate, home, ask, shortfall)
        for victim in victims:
            preempted[victim.workload_id] = Preemption(
                candidate.name, reclaim, by_id=candidate.workload_id
            )
            self.books.charge(
                victim.project_id,
                self.held[victim.workload_id],
                -1.0,
                preemptible=victim.preemptible,
            )
            self.books.charge_pods(victim.project_id, -len(victim.placement))
        self.held_for = candidate
        what = "reclaimed" if reclaim else "preempted"
        names = ", ".join(victim.name for victim in victims)
        return Waiting(f"waiting for {what} workloads to stop: {names}", pool=home)

    def _ranked(self) -> dict[str, list[Holder]]:
        """Project → its running preemptible holders, the first to give way first: the lowest
        priority, then the newest (holders come the first submitted first; made once a
        cycle)."""
        if self._by_project is None:
            self._by_project = {}
            for holder in self.holders:
                if holder.preemptible and not holder.leaving:
                    self._by_project.setdefault(holder.project_id, []).append(holder)
            order = {h.workload_id: i for i, h in enumerate(self.holders)}
            for queue in self._by_project.values():
                queue.sort(key=lambda h: (h.priority, -order[h.workload_id]))
        return self._by_project

    def _short(
        self, candidate: Candidate, home: str, ask: Amounts, shortfall: GangShortfall
    ) -> Waiting:
        """Nobody could be stopped for it: its quota, when that is why (it would pass its
        fair share, and others hold what it asks), else the nodes. A resource whose quota is
        not enforced (unlimited deserved: its fair share is all it asks, up to the pool) is
        never the quota's doing."""
        free = self.free.get(home) or zero()
        total = self.capacity.get(home) or zero()
        for account in self.books.both(candidate.project_id, home):
            bounds = [
                UNLIMITED if deserved == UNLIMITED else fair
                for deserved, fair in zip(account.deserved, account.fair, strict=True)
            ]
            r = first_over(account.allocated, ask, bounds)
            if r is not None and total[r] - free[r] - account.allocated[r] > EPSILON:
                wanted = ask[r] - free[r] if ask[r] - free[r] > EPSILON else ask[r]
                message = say.over_quota(account, r, wanted)
                return Waiting(message, None, home, account.kind)
        return Waiting(f"waiting for resources: {shortfall.message}", pool=home)

    def _behind(self, candidate: Candidate, blocker: Candidate) -> None:
        """A gang behind its project's blocker: parked if it could never fit, else it waits."""
        workload_id = candidate.workload_id
        never = None if workload_id in self.fit_idle else can_never_fit(self.usage.nodes, candidate)
        if never is not None:
            self.decisions.parked[workload_id] = never
            return
        self.decisions.waiting[workload_id] = Waiting(
            f"queued behind workload {blocker.name}", pool=self.home[workload_id]
        )

    def _grow(self) -> None:
        """Nobody waits for room: elastic gangs take what is left for their waiting pods,
        within their quotas."""
        for holder in self.holders:
            if not holder.waiting or holder.leaving:
                continue
            waiting = holder.waiting
            pods_left = self.books.pods_left(holder.project_id)
            if pods_left is not None:
                waiting = waiting[:pods_left]
            added = grow(self.usage, holder.placement, waiting, affinity=holder.affinity)
            if not added:
                continue
            amounts = placed_amounts(waiting, added, self.pool_of)
            as_candidate = Candidate(
                holder.workload_id,
                holder.name,
                GangShape(()),
                project_id=holder.project_id,
                preemptible=holder.preemptible,
            )
            if self._refusal(as_candidate, amounts, hold=False) is not None:
                self.usage.release(waiting, added)
                continue
            self.decisions.grown[holder.workload_id] = {**holder.placement, **added}
            self._take(holder.project_id, amounts, preemptible=holder.preemptible)
            self.books.charge_pods(holder.project_id, len(added))

    def _take(self, project: str, amounts: dict[str, Amounts], *, preemptible: bool) -> None:
        self.books.charge(project, amounts, preemptible=preemptible)
        for pool, more in amounts.items():
            free = self.free.setdefault(pool, zero())
            for r, value in enumerate(more):
                free[r] -= value

    def _free(self) -> dict[str, Amounts]:
        free: dict[str, Amounts] = {}
        for node in self.usage.nodes:
            amounts = free.setdefault(node.pool, zero())
            amounts[0] += float(self.usage.free_gpus(node))
            amounts[1] += float(self.usage.free_cpu(node)) * 1000.0
            amounts[2] += float(self.usage.free_memory(node))
        return free

    def _report(self) -> None:
        for kind, target in (
            (OrgType.PROJECT, self.decisions.shares),
            (OrgType.DEPARTMENT, self.decisions.department_shares),
        ):
            units = (
                self.hierarchy.projects if kind is OrgType.PROJECT else self.hierarchy.departments
            )
            for unit in units:
                by_pool = target.setdefault(unit, {})
                for pool in self.pools:
                    if kind is OrgType.PROJECT:
                        account = self.books.project(unit, pool)
                    else:
                        account = self.books.of_department(unit, pool)
                    by_pool[pool] = {
                        resource: Share(
                            account.deserved[r],
                            account.fair[r],
                            account.allocated[r],
                            account.requested[r],
                        )
                        for r, resource in enumerate(RESOURCES)
                    }


class Blocks(Enum):
    """Whom of its project's queue behind it a waiting gang holds back."""

    NONE = "none"
    ALL = "all"
    """It waits for room (or for its quota to allow it): those behind wait behind it, so
    that a large gang is not starved by small ones of its own project."""
    QUEUE = "queue"
    """It waits for pods of its own project to end (the pod limit): those behind wait behind
    it, as with ALL, but it waits for no room, so elastic gangs of others may still grow."""
    NON_PREEMPTIBLE = "non-preemptible"
    """A non-preemptible gang waiting for its deserved share: what preemptible gangs hold
    does not count against that share, so they may pass it; non-preemptible ones may not."""


def _blocks(refusal: Waiting) -> Blocks:
    if refusal.reason is PhaseReason.NON_PREEMPTIBLE_OVER_QUOTA:
        return Blocks.NON_PREEMPTIBLE
    return Blocks.ALL


def _add(ledger: dict[str, Amounts], amounts: dict[str, Amounts]) -> None:
    for pool, more in amounts.items():
        total = ledger.setdefault(pool, zero())
        for r, value in enumerate(more):
            total[r] += value


def _elastic(
    usage: Usage, candidate: Candidate, required: Sequence[PodNeed], rest: Sequence[PodNeed]
) -> GangPlacement | GangShortfall:
    """An elastic gang's minimum, placed together, and as many of its other pods as fit."""
    placed = place(usage, required, affinity=candidate.affinity)
    if isinstance(placed, GangShortfall):
        return placed
    return {**placed, **grow(usage, placed, rest, affinity=candidate.affinity)}
