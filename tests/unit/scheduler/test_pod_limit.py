"""The per-project pod limit in the scheduling cycle (scheduler/cycle.py, quota/books.py): pods
count against their project, so a project of many zero-resource pods cannot take every pod
slot of a node while another project's workload waits — the pure scheduler, on a node of 10
slots; and the settings that set the limits."""

from __future__ import annotations

from decimal import Decimal

import pytest
from typer.testing import CliRunner

from lockstep.cli.main import app
from lockstep.config import Settings
from lockstep.domain.cluster import Node
from lockstep.scheduler.cycle import schedule
from lockstep.scheduler.decisions import Decisions, PhaseReason, Waiting
from lockstep.scheduler.gang.candidates import Candidate, Holder
from lockstep.scheduler.gang.needs import PodNeed
from lockstep.scheduler.gang.shape import GangShape
from lockstep.scheduler.nodes.placement import place
from lockstep.scheduler.nodes.usage import Usage
from lockstep.scheduler.quota.organization import Organization, OrgUnit

NODE = Node("n", "default", Decimal(16), Decimal(64 * 2**30), max_pods=10)
ORGANIZATION = Organization(projects={"a": OrgUnit("a", "team-a"), "b": OrgUnit("b", "team-b")})


def gang(workload_id: str, project: str, pods: int = 1, required: int | None = None) -> Candidate:
    """`pods` pods that ask for nothing (sleepers), of `project`."""
    needs = [PodNeed(f"{workload_id}-{i}") for i in range(pods)]
    return Candidate(
        workload_id, workload_id, GangShape.of(needs), required=required, project_id=project
    )


def holding(
    usage: Usage, workload_id: str, project: str, pods: int, *, leaving: bool = False
) -> Holder:
    needs = [PodNeed(f"{workload_id}-{i}") for i in range(pods)]
    placed = place(usage, needs)
    assert isinstance(placed, dict)
    return Holder(workload_id, workload_id, needs, placed, project_id=project, leaving=leaving)


def decide(
    heads: list[Candidate], holders: list[Holder] | None = None, *, usage: Usage | None = None
) -> Decisions:
    return schedule(
        usage or Usage([NODE]),
        heads,
        holders or [],
        organization=ORGANIZATION,
        max_pods_per_project=3,
    )


def messages(decisions: Decisions) -> dict[str, str]:
    return {w: waiting.message for w, waiting in decisions.waiting.items()}


def over(held: int, asked: int) -> Waiting:
    return Waiting(
        f"project team-a would pass its pod limit (3 limit, {held} held, {asked} asked; "
        "LOCKSTEP_MAX_PODS_PER_PROJECT); waiting for pods of the project to end",
        PhaseReason.OVER_LIMIT,
        "default",
        "project",
    )


def test_a_project_at_its_pod_limit_waits_while_another_project_takes_the_free_slots() -> None:
    usage = Usage([NODE])
    holders = [holding(usage, "a0", "a", 3)]
    decisions = decide([gang("a1", "a"), gang("a2", "a"), gang("b1", "b")], holders, usage=usage)
    assert list(decisions.admitted) == ["b1"]
    assert decisions.waiting["a1"] == over(held=3, asked=1)
    assert messages(decisions)["a2"] == "queued behind workload a1"
    assert decisions.positions == {"a1": 1, "a2": 2}


def test_pods_admitted_in_a_cycle_count_against_the_limit_in_the_same_cycle() -> None:
    heads = [gang(f"a{i}", "a") for i in range(5)] + [gang("b1", "b", pods=2)]
    decisions = decide(heads)
    assert sorted(decisions.admitted) == ["a0", "a1", "a2", "b1"]
    assert decisions.waiting["a3"] == over(held=3, asked=1)
    assert messages(decisions)["a4"] == "queued behind workload a3"


def test_without_the_limit_one_project_takes_every_slot_of_the_node() -> None:
    """What the limit prevents: 500 sleepers of one project held all 110 slots of a node."""
    heads = [gang(f"a{i}", "a") for i in range(12)] + [gang("b1", "b")]
    decisions = schedule(Usage([NODE]), heads, organization=ORGANIZATION)
    assert len(decisions.admitted) == 10
    assert "b1" not in decisions.admitted
    assert messages(decisions)["b1"].startswith("waiting for resources: needs room for 1 pod")


def test_a_gang_whose_pods_alone_pass_the_limit_waits_without_blocking_its_project() -> None:
    decisions = decide([gang("big", "a", pods=4), gang("a1", "a", pods=2)])
    assert list(decisions.admitted) == ["a1"]
    assert decisions.waiting["big"] == Waiting(
        "the workload asks 4 pods, more than the pod limit of project team-a (3; "
        "LOCKSTEP_MAX_PODS_PER_PROJECT): it cannot run unless the limit is raised",
        PhaseReason.OVER_LIMIT,
        "default",
        "project",
    )


def test_a_gang_that_would_pass_the_limit_waits_whole_for_pods_of_its_project_to_end() -> None:
    usage = Usage([NODE])
    holders = [holding(usage, "a0", "a", 2)]
    decisions = decide([gang("a1", "a", pods=2)], holders, usage=usage)
    assert decisions.admitted == {}
    assert decisions.waiting["a1"] == over(held=2, asked=2)
    # once a0's pods have ended, it runs
    assert list(decide([gang("a1", "a", pods=2)]).admitted) == ["a1"]


def test_pods_being_stopped_no_longer_count_against_their_project() -> None:
    usage = Usage([NODE])
    holders = [holding(usage, "a0", "a", 3, leaving=True)]
    decisions = decide([gang("a1", "a", pods=3)], holders, usage=usage)
    assert list(decisions.admitted) == ["a1"]


def test_an_elastic_gang_starts_and_grows_only_within_the_limit() -> None:
    usage = Usage([NODE])
    holders = [holding(usage, "a0", "a", 1)]
    decisions = decide([gang("e", "a", pods=6, required=1)], holders, usage=usage)
    assert sorted(decisions.admitted["e"]) == ["e-0", "e-1"]
    # an admitted elastic gang grows into free slots only up to its project's limit
    usage = Usage([NODE])
    needs = [PodNeed(f"g-{i}") for i in range(6)]
    placed = place(usage, needs[:1])
    assert isinstance(placed, dict)
    grower = Holder("g", "g", needs, placed, project_id="a", waiting=needs[1:])
    grown = decide([], [grower], usage=usage)
    assert sorted(grown.grown["g"]) == ["g-0", "g-1", "g-2"]


def test_a_project_waiting_on_its_pod_limit_does_not_stop_others_from_growing() -> None:
    usage = Usage([NODE])
    holders = [holding(usage, "a0", "a", 3)]
    needs = [PodNeed(f"g-{i}") for i in range(3)]
    placed = place(usage, needs[:1])
    assert isinstance(placed, dict)
    holders.append(Holder("g", "g", needs, placed, project_id="b", waiting=needs[1:]))
    decisions = decide([gang("a1", "a")], holders, usage=usage)
    assert decisions.waiting["a1"] == over(held=3, asked=1)
    assert sorted(decisions.grown["g"]) == ["g-0", "g-1", "g-2"]


def test_the_limits_are_settings_with_defaults_set_by_variables_or_flags_of_serve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    defaults = Settings()
    assert (defaults.max_pods_per_project, defaults.max_workloads_per_project) == (100, 200)
    monkeypatch.setenv("LOCKSTEP_MAX_PODS_PER_PROJECT", "0")
    monkeypatch.setenv("LOCKSTEP_MAX_WORKLOADS_PER_PROJECT", "5")
    configured = Settings()
    assert (configured.max_pods_per_project, configured.max_workloads_per_project) == (0, 5)
    for flag, variable in (
        ("--max-pods-per-project", "LOCKSTEP_MAX_PODS_PER_PROJECT"),
        ("--max-workloads-per-project", "LOCKSTEP_MAX_WORKLOADS_PER_PROJECT"),
    ):
        refused = CliRunner().invoke(app, ["serve", flag, "-1"])
        assert refused.exit_code == 2, refused.output
        assert f"lockstep: {variable}: Input should be" in refused.output
