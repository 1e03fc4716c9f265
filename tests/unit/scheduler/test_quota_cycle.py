"""The quota-aware scheduling cycle (scheduler/cycle.py): reclaim and its victims, non-
preemptible workloads held to deserved, limits, per-project queues, no starvation, positions
and the shares reported — on virtual 8-GPU nodes, from tables."""

from __future__ import annotations

from decimal import Decimal

from lockstep.domain.cluster import Gpu, Node
from lockstep.domain.quotas import UNLIMITED, PoolQuota, Quota, Quotas, Resource
from lockstep.scheduler.cycle import schedule
from lockstep.scheduler.decisions import Decisions, PhaseReason, Preemption, Waiting
from lockstep.scheduler.gang.candidates import Candidate, Holder
from lockstep.scheduler.gang.needs import GpuNeed, PodNeed
from lockstep.scheduler.gang.shape import GangShape
from lockstep.scheduler.nodes.placement import place
from lockstep.scheduler.nodes.usage import Usage
from lockstep.scheduler.quota.fair_share import Share
from lockstep.scheduler.quota.organization import Organization, OrgUnit

INF = UNLIMITED


def nodes(count: int = 2) -> list[Node]:
    return [
        Node(f"n{i}", "default", Decimal(64), Decimal(2**40), tuple(Gpu(g) for g in range(8)))
        for i in range(count)
    ]


def gpus(deserved: float, limit: float = INF, weight: float = 1.0) -> Quotas:
    return Quotas(fallback=PoolQuota("", gpu=Quota(deserved, limit, weight)))


def org(
    *projects: tuple[str, Quotas], departments: dict[str, Quotas] | None = None
) -> Organization:
    """Projects `team-x` with these quotas; `team-x@d` puts it in department d."""
    units = {}
    for name, quotas in projects:
        project, _, department = name.partition("@")
        units[project] = OrgUnit(project, project, quotas, parent=department or None)
    return Organization(
        departments={d: OrgUnit(d, d, q) for d, q in (departments or {}).items()},
        projects=units,
    )


def gang(
    workload_id: str, project: str, *pods: int, priority: int = 0, preemptible: bool = True
) -> Candidate:
    needs = [PodNeed(f"{workload_id}-{i}", gpu=GpuNeed(devices=g)) for i, g in enumerate(pods)]
    return Candidate(
        workload_id,
        workload_id,
        GangShape.of(needs),
        priority=priority,
        project_id=project,
        preemptible=preemptible,
    )


def hold(
    usage: Usage,
    workload_id: str,
    project: str,
    count: int,
    *,
    priority: int = 50,
    preemptible: bool = True,
) -> Holder:
    need = PodNeed(f"{workload_id}-0", gpu=GpuNeed(devices=count))
    placed = place(usage, [need])
    assert isinstance(placed, dict)
    return Holder(
        workload_id, workload_id, [need], placed, priority, preemptible, project_id=project
    )


def messages(decisions: Decisions) -> dict[str, str]:
    return {w: waiting.message for w, waiting in decisions.waiting.items()}


TWO_HALVES = org(("team-a", gpus(8)), ("team-b", gpus(8)))


def test_a_project_below_its_share_reclaims_the_lowest_priority_then_newest() -> None:
    usage = Usage(nodes())
    holders = [
        hold(usage, "a1", "team-a", 4),
        hold(usage, "a2", "team-a", 4),
        hold(usage, "a3", "team-a", 4, priority=40),
        hold(usage, "a4", "team-a", 4),
    ]
    decisions = schedule(usage, [gang("b1", "team-b", 4, 4)], holders, organization=TWO_HALVES)
    assert decisions.preempted == {
        "a3": Preemption("b1", reclaim=True),
        "a4": Preemption("b1", reclaim=True),
    }
    assert messages(decisions) == {"b1": "waiting for reclaimed workloads to stop: a3, a4"}
    # team-a keeps the rest: 8, its deserved share
    assert decisions.shares["team-a"]["default"][Resource.GPU] == Share(8, 8, 8, 16)


def test_projects_of_one_department_reclaim_from_each_other_at_its_fair_share() -> None:
    # The department holds all it may (16 of 16): what moves between its projects leaves
    # its total as it was, so its fair share does not stand in the way.
    usage = Usage(nodes())
    holders = [hold(usage, f"a{i}", "team-a", 4) for i in range(4)]
    together = org(
        ("team-a@research", gpus(8)),
        ("team-b@research", gpus(8)),
        departments={"research": gpus(16)},
    )
    decisions = schedule(usage, [gang("b1", "team-b", 4)], holders, organization=together)
    assert decisions.preempted == {"a3": Preemption("b1", reclaim=True)}


def test_once_the_reclaimed_have_stopped_the_reclaimer_is_admitted() -> None:
    usage = Usage(nodes())
    keep = [hold(usage, "a1", "team-a", 4), hold(usage, "a2", "team-a", 4)]
    decisions = schedule(usage, [gang("b1", "team-b", 4, 4)], keep, organization=TWO_HALVES)
    assert list(decisions.admitted) == ["b1"]
    assert decisions.preempted == {}


def test_nothing_is_reclaimed_that_keeps_its_project_within_deserved() -> None:
    usage = Usage(nodes())
    organization = org(("team-a", gpus(12)), ("team-b", gpus(8)))  # 20 deserved of 16
    holders = [hold(usage, f"a{i}", "team-a", 4) for i in range(3)]
    decisions = schedule(usage, [gang("b1", "team-b", 8)], holders, organization=organization)
    assert decisions.preempted == {}
    assert messages(decisions) == {"b1": "waiting for resources: needs 8 GPUs, 4 free"}


def test_a_project_at_its_share_waits_saying_which_quota() -> None:
    usage = Usage(nodes())
    holders = [hold(usage, "a1", "team-a", 8), hold(usage, "b1", "team-b", 8)]
    decisions = schedule(usage, [gang("b2", "team-b", 2)], holders, organization=TWO_HALVES)
    assert decisions.preempted == {}
    assert decisions.waiting == {
        "b2": Waiting(
            "project team-b is over its GPU quota in pool default (8 deserved, 8 allocated); "
            "waiting for 2 GPUs to be freed or reclaimed",
            None,
            "default",
            "project",
        )
    }


def test_priority_preemption_stays_within_the_project() -> None:
    usage = Usage(nodes())
    holders = [
        hold(usage, "b1", "team-b", 8, priority=10),
        hold(usage, "a1", "team-a", 4),
        hold(usage, "a2", "team-a", 4),
    ]
    urgent = gang("a3", "team-a", 4, priority=100)
    decisions = schedule(usage, [urgent], holders, organization=TWO_HALVES)
    # team-a is at its share (8 of 8): it cannot reclaim, so it preempts its own newest
    assert decisions.preempted == {"a2": Preemption("a3", reclaim=False)}
    assert messages(decisions) == {"a3": "waiting for preempted workloads to stop: a2"}


def test_non_preemptible_workloads_run_only_within_deserved() -> None:
    organization = org(("team-a", gpus(4)), ("team-b", gpus(4)))
    heads = [
        gang("np1", "team-a", 2, preemptible=False),
        gang("np2", "team-a", 4, preemptible=False),
        gang("p1", "team-a", 4),
        gang("np3", "team-a", 1, preemptible=False),
    ]
    decisions = schedule(Usage(nodes()), heads, organization=organization)
    # What preemptible workloads hold does not count against deserved: p1 passes np2 (it may
    # borrow the idle GPUs), np3 waits behind it (it would take np2's deserved share).
    assert list(decisions.admitted) == ["np1", "p1"]
    assert decisions.waiting["np2"] == Waiting(
        "project team-a has 4 deserved GPU in pool default (2 held by non-preemptible "
        "workloads) and a non-preemptible workload runs only within its deserved quota; this "
        "one asks 4 GPUs",
        PhaseReason.NON_PREEMPTIBLE_OVER_QUOTA,
        "default",
        "project",
    )
    assert messages(decisions)["np3"] == "queued behind workload np2"


def test_preemptible_workloads_leave_deserved_to_non_preemptible_ones() -> None:
    usage = Usage(nodes())
    borrowers = [hold(usage, f"p{i}", "team-a", 4) for i in range(4)]
    organization = org(("team-a", gpus(8)), ("team-b", gpus(8)))
    decisions = schedule(
        usage, [gang("np", "team-a", 4, preemptible=False)], borrowers, organization=organization
    )
    # team-a holds all 16 GPUs with preemptible workloads: the non-preemptible one is within
    # deserved (nothing non-preemptible held), so it waits for room, not for its quota.
    assert decisions.waiting["np"].reason is None


def test_a_non_preemptible_workload_larger_than_deserved_blocks_no_one() -> None:
    organization = org(("team-a", gpus(4)))
    heads = [gang("np", "team-a", 6, preemptible=False), gang("p", "team-a", 6)]
    decisions = schedule(Usage(nodes()), heads, organization=organization)
    assert list(decisions.admitted) == ["p"]  # preemptible: over quota is fine on idle GPUs
    assert decisions.waiting["np"].reason is PhaseReason.NON_PREEMPTIBLE_OVER_QUOTA


def test_a_limit_is_respected_on_an_idle_cluster() -> None:
    organization = org(("team-a", gpus(0, limit=4)))
    heads = [gang("a1", "team-a", 2), gang("a2", "team-a", 2), gang("a3", "team-a", 2)]
    decisions = schedule(Usage(nodes()), heads, organization=organization)
    assert list(decisions.admitted) == ["a1", "a2"]
    assert decisions.waiting["a3"] == Waiting(
        "project team-a would pass its GPU limit in pool default (4 limit, 4 allocated, 2 asked)",
        PhaseReason.OVER_LIMIT,
        "default",
        "project",
    )


def test_a_gang_beyond_the_limit_itself_blocks_no_one() -> None:
    organization = org(("team-a", gpus(0, limit=4)))
    decisions = schedule(
        Usage(nodes()),
        [gang("big", "team-a", 6), gang("a", "team-a", 4)],
        organization=organization,
    )
    assert list(decisions.admitted) == ["a"]
    assert messages(decisions)["big"] == (
        "the workload asks 6 GPUs in pool default, more than the GPU limit of project team-a "
        "(4): it cannot run unless the limit is raised"
    )
    assert decisions.waiting["big"].reason is PhaseReason.OVER_LIMIT


def test_a_department_limit_bounds_its_projects_together() -> None:
    organization = org(
        ("team-a@research", gpus(0)),
        ("team-b@research", gpus(0)),
        departments={"research": gpus(0, limit=6)},
    )
    heads = [gang("a1", "team-a", 4), gang("b1", "team-b", 4)]
    decisions = schedule(Usage(nodes()), heads, organization=organization)
    assert list(decisions.admitted) == ["a1"]
    waiting = decisions.waiting["b1"]
    assert (waiting.reason, waiting.org_type) == (PhaseReason.OVER_LIMIT, "department")
    assert waiting.message.startswith("department research would pass its GPU limit")


def test_a_gang_that_does_not_fit_its_share_does_not_block_other_projects() -> None:
    usage = Usage(nodes())
    holders = [hold(usage, "a1", "team-a", 8), hold(usage, "b1", "team-b", 4)]
    heads = [gang("a-big", "team-a", 8), gang("a-small", "team-a", 1), gang("b2", "team-b", 2)]
    decisions = schedule(usage, heads, holders, organization=TWO_HALVES)
    assert list(decisions.admitted) == ["b2"]
    assert messages(decisions)["a-small"] == "queued behind workload a-big"
    assert decisions.positions == {"a-big": 1, "a-small": 2}


def test_positions_follow_each_projects_admission_order() -> None:
    usage = Usage(nodes())
    holders = [hold(usage, "a0", "team-a", 8), hold(usage, "b0", "team-b", 8)]
    heads = [
        gang("a1", "team-a", 1),
        gang("b1", "team-b", 1),
        gang("a2", "team-a", 1, priority=10),  # higher priority: ahead of a1
        gang("a3", "team-a", 1),
    ]
    decisions = schedule(usage, heads, holders, organization=TWO_HALVES)
    assert decisions.positions == {"a2": 1, "a1": 2, "a3": 3, "b1": 1}


def test_the_least_saturated_project_goes_first() -> None:
    usage = Usage(nodes())
    holders = [hold(usage, "a0", "team-a", 8), hold(usage, "b0", "team-b", 4)]
    # 4 GPUs free; team-a (8 of 8) submitted first, team-b (4 of 8) goes first anyway
    heads = [gang("a1", "team-a", 4), gang("b1", "team-b", 4)]
    decisions = schedule(usage, heads, holders, organization=TWO_HALVES)
    assert list(decisions.admitted) == ["b1"]


def test_while_a_gang_waits_for_reclaim_others_cannot_grow_past_their_share() -> None:
    usage = Usage(nodes())
    organization = org(("team-a", gpus(4)), ("team-b", gpus(8)), ("team-c", gpus(2)))
    holders = [hold(usage, f"a{i}", "team-a", 2) for i in range(6)]
    # 4 GPUs free; fair shares: team-a 5, team-b 8, team-c 3
    heads = [gang("b1", "team-b", 2, 2, 2, 2), gang("c1", "team-c", 2), gang("c2", "team-c", 2)]
    decisions = schedule(usage, heads, holders, organization=organization)
    # team-c, the least saturated, goes first and takes 2 within its share (2 of 3) …
    assert list(decisions.admitted) == ["c1"]
    # … team-b reclaims the 6 it needs beyond the 2 still free, newest first …
    assert decisions.preempted == {
        "a5": Preemption("b1", reclaim=True),
        "a4": Preemption("b1", reclaim=True),
        "a3": Preemption("b1", reclaim=True),
    }
    # … and nobody may then grow past its share into what is free
    assert messages(decisions)["c2"] == (
        "waiting: what frees in pool default is held for workload b1, "
        "which is taking back its project's fair share"
    )


def stopped(usage: Usage, holders: list[Holder], gone: set[str]) -> list[Holder]:
    for holder in holders:
        if holder.workload_id in gone:
            usage.release(holder.needs, holder.placement)
    return [h for h in holders if h.workload_id not in gone]


def test_a_large_gang_within_deserved_is_not_starved_by_a_stream_of_small_ones() -> None:
    """team-a fills the cluster and keeps submitting 1-GPU gangs, and one of its gangs ends
    every cycle; team-b's 8-GPU gang, within its deserved 8, starts within a few cycles."""
    usage = Usage(nodes())
    holders = [hold(usage, f"a-{i}", "team-a", 1) for i in range(16)]
    big = gang("big", "team-b", 4, 4)
    pending: list[Candidate] = [big]
    admitted_at = None
    for cycle in range(8):
        pending += [gang(f"a-{cycle}-{i}", "team-a", 1) for i in range(4)]
        decisions = schedule(usage, pending, holders, organization=TWO_HALVES)
        if "big" in decisions.admitted:
            admitted_at = cycle
            break
        by_id = {c.workload_id: c for c in pending}
        for workload_id, placed in decisions.admitted.items():
            candidate = by_id[workload_id]
            holders.append(
                Holder(
                    workload_id,
                    workload_id,
                    list(candidate.shape.pods()),
                    placed,
                    50,
                    True,
                    project_id=candidate.project_id,
                )
            )
        pending = [c for c in pending if c.workload_id not in decisions.admitted]
        # the preempted stop, and the oldest of team-a's gangs ends
        ended = {holders[0].workload_id, *decisions.preempted}
        holders = stopped(usage, holders, ended)
    assert admitted_at is not None and admitted_at <= 2


def test_without_quotas_priority_and_fifo_are_as_before() -> None:
    usage = Usage(nodes(1))
    holders = [
        hold(usage, "low", "", 4, priority=10),
        hold(usage, "fixed", "", 4, priority=10, preemptible=False),
    ]
    heads = [gang("u", "", 4, priority=100, preemptible=False), gang("small", "", 1)]
    decisions = schedule(usage, heads, holders)
    # no organisation: non-preemptible runs anywhere, one cluster-wide queue
    assert decisions.preempted == {"low": Preemption("u", reclaim=False)}
    assert messages(decisions) == {
        "u": "waiting for preempted workloads to stop: low",
        "small": "queued behind workload u",
    }


def test_the_shares_of_every_project_are_reported() -> None:
    usage = Usage(nodes())
    organization = org(("team-a", gpus(4, weight=2)), ("team-b", gpus(0)), ("idle", gpus(2)))
    holders = [hold(usage, "a0", "team-a", 4)]
    heads = [gang("a1", "team-a", 8), gang("b1", "team-b", 8)]
    decisions = schedule(usage, heads, holders, organization=organization)
    assert decisions.shares["team-a"]["default"][Resource.GPU] == Share(4, 12, 12, 12)
    assert decisions.shares["team-b"]["default"][Resource.GPU] == Share(0, 4, 0, 8)
    assert decisions.shares["idle"]["default"][Resource.GPU] == Share(2, 0, 0, 0)
    assert decisions.shares["team-a"]["default"][Resource.CPU] == Share(0, 0, 0, 0)
