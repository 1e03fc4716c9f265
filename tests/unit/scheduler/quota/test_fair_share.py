"""Fair shares (scheduler/quota/fair_share.py), from tables: deserved first, over-quota by weight
level by level, never past limit or demand, indivisible GPUs rounded, time-aware weights."""

from __future__ import annotations

import pytest

from lockstep.domain.quotas import UNLIMITED, PoolQuota, Quota, Quotas, Resource
from lockstep.scheduler.quota.fair_share import Claim, TimeAware, divide, fair_shares
from lockstep.scheduler.quota.hierarchy import Hierarchy
from lockstep.scheduler.quota.organization import NO_ORGANIZATION, Organization, OrgUnit

INF = UNLIMITED


@pytest.mark.parametrize(
    ("total", "claims", "expected"),
    [
        # deserved is guaranteed, then idle quota is lent out to whoever asks for more
        (8, [Claim(4, requested=2), Claim(4, requested=8)], [2, 6]),
        # nobody asks: nothing is handed out
        (8, [Claim(4, requested=0), Claim(4, requested=0)], [0, 0]),
        # over quota in proportion to the weights, 2:1
        (12, [Claim(0, weight=2, requested=100), Claim(0, weight=1, requested=100)], [8, 4]),
        # deserved first, weights on what is left
        (12, [Claim(6, weight=1, requested=100), Claim(0, weight=1, requested=100)], [9, 3]),
        # never past a limit: what it cannot take goes to the others
        (12, [Claim(0, limit=3, requested=100), Claim(0, requested=100)], [3, 9]),
        # never past what one asks (held + pending)
        (12, [Claim(0, weight=5, requested=2), Claim(0, weight=1, requested=100)], [2, 10]),
        # weight 0: deserved only
        (12, [Claim(2, weight=0, requested=100), Claim(0, weight=1, requested=100)], [2, 10]),
        # unlimited deserved: all it asks, up to everything there is
        (8, [Claim(INF, requested=5), Claim(0, requested=8)], [5, 3]),
        (8, [Claim(INF, requested=50)], [8]),
        # more deserved than capacity: each keeps its deserved share, nothing is lent
        (8, [Claim(6, requested=6), Claim(6, requested=6)], [6, 6]),
    ],
)
def test_one_level(total: float, claims: list[Claim], expected: list[float]) -> None:
    assert divide(total, claims, whole=True) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("total", "claims", "expected"),
    [
        # 10 GPUs three ways: 3 each rounded down, the one left to the first listed
        (10, [Claim(0, requested=50)] * 3, [4, 3, 3]),
        # 2:1 of 10: 6.67 and 3.33 → 6 + 3, the GPU left over to the larger remainder
        (10, [Claim(0, weight=2, requested=50), Claim(0, requested=50)], [7, 3]),
        # a fraction asked is kept whole; the rest is whole GPUs … but nothing is left idle
        (4, [Claim(0, requested=0.5), Claim(0, requested=10)], [0.5, 3.5]),
        # a deserved fraction is kept; of the 2.5 left each gets 1, the half left over goes
        # to the first listed
        (4, [Claim(1.5, requested=10), Claim(0, requested=10)], [3, 1]),
    ],
)
def test_gpus_are_divided_in_whole_devices(
    total: float, claims: list[Claim], expected: list[float]
) -> None:
    assert divide(total, claims, whole=True) == pytest.approx(expected)


def test_cpu_and_memory_are_divided_exactly() -> None:
    claims = [Claim(0, requested=50_000)] * 3
    assert divide(10_000, claims) == pytest.approx([10_000 / 3] * 3)


@pytest.mark.parametrize(
    ("k_value", "usage", "expected"),
    [
        (None, (0.5, 0.0), [8, 8]),  # off: the weights alone
        (1.0, (0.0, 0.0), [8, 8]),  # nobody used anything: the same
        (1.0, (0.5, 0.0), [5, 11]),  # A used half the pool: weights 0.5 and 1
        (1.0, (1.0, 0.0), [0, 16]),  # A used it all: weight 0, B takes what it asks
    ],
)
def test_time_aware_recent_usage_lowers_the_over_quota_share(
    k_value: float | None, usage: tuple[float, float], expected: list[float]
) -> None:
    claims = [Claim(0, requested=16, usage=used) for used in usage]
    assert divide(16, claims, whole=True, k_value=k_value) == pytest.approx(expected)


def test_time_aware_never_holds_capacity_back_nor_touches_deserved() -> None:
    # A's weight drops to 0, but B asks only 4: A still gets the rest of the pool
    claims = [Claim(2, requested=16, usage=1.0), Claim(0, requested=4)]
    assert divide(16, claims, whole=True, k_value=1.0) == pytest.approx([12, 4])


def gpus(deserved: float, limit: float = INF, weight: float = 1.0) -> Quotas:
    """Quotas in every pool: this GPU share, no CPU or memory deserved."""
    return Quotas(fallback=PoolQuota("", gpu=Quota(deserved, limit, weight)))


def shares_of(
    organization: Organization, requested: dict[str, float], total: float = 16, **options: object
) -> tuple[dict[str, float], dict[str, float]]:
    hierarchy = Hierarchy(organization, requested)
    result = fair_shares(
        hierarchy,
        {"default": [total, 0.0, 0.0]},
        {p: {"default": [amount, 0.0, 0.0]} for p, amount in requested.items()},
        **options,  # type: ignore[arg-type]
    )
    projects = {p: pools["default"][0] for p, pools in result.projects.items()}
    departments = {d: pools["default"][0] for d, pools in result.departments.items()}
    return projects, departments


def test_divided_level_by_level_departments_first() -> None:
    organization = Organization(
        departments={
            "1": OrgUnit("1", "research", gpus(8, weight=1)),
            "2": OrgUnit("2", "product", gpus(0, weight=3)),
        },
        projects={
            "1": OrgUnit("1", "p1", gpus(4), parent="1"),
            "2": OrgUnit("2", "p2", gpus(4), parent="1"),
            "3": OrgUnit("3", "p3", gpus(0), parent="2"),
        },
    )
    projects, departments = shares_of(organization, {"1": 12, "2": 2, "3": 16})
    # research: 8 deserved; the 8 left split 1:3 → 2 and 6; inside research p2 asks only 2
    assert departments == {"1": 10, "2": 6}
    assert projects == {"1": 8, "2": 2, "3": 6}


def test_a_department_limit_bounds_its_projects_together() -> None:
    organization = Organization(
        departments={"1": OrgUnit("1", "research", gpus(0, limit=6))},
        projects={
            "1": OrgUnit("1", "p1", gpus(0), parent="1"),
            "2": OrgUnit("2", "p2", gpus(0), parent="1"),
            "3": OrgUnit("3", "p3", gpus(0)),  # no department: beside the departments
        },
    )
    projects, departments = shares_of(organization, {"1": 16, "2": 16, "3": 16})
    assert departments == {"1": 6}
    assert projects == {"1": 3, "2": 3, "3": 10}


def test_a_project_limit_caps_what_its_department_asks_for_it() -> None:
    organization = Organization(
        departments={"1": OrgUnit("1", "research", gpus(0))},
        projects={"1": OrgUnit("1", "p1", gpus(0, limit=2), parent="1"), "2": OrgUnit("2", "p2")},
    )
    projects, departments = shares_of(organization, {"1": 16, "2": 16})
    assert (departments, projects) == ({"1": 2}, {"1": 2, "2": 14})


def test_unknown_projects_get_deserved_0_no_limit_weight_1() -> None:
    organization = Organization(projects={"1": OrgUnit("1", "p1", gpus(4))})
    projects, _ = shares_of(organization, {"1": 16, "stray": 16})
    assert projects == {"1": 10, "stray": 6}


def test_without_an_organisation_every_project_is_unlimited() -> None:
    projects, _ = shares_of(NO_ORGANIZATION, {"a": 10, "b": 10})
    # both deserve all they ask: more than there is
    assert projects == {"a": 10, "b": 10}


def test_time_aware_applies_to_departments_by_their_projects_usage() -> None:
    organization = Organization(
        departments={"1": OrgUnit("1", "d1"), "2": OrgUnit("2", "d2")},
        projects={"1": OrgUnit("1", "p1", parent="1"), "2": OrgUnit("2", "p2", parent="2")},
    )
    recent = {"1": {"default": {Resource.GPU: 0.5}}}
    off, _ = shares_of(organization, {"1": 16, "2": 16}, recent_usage=recent)
    on, departments = shares_of(
        organization, {"1": 16, "2": 16}, time_aware=TimeAware(1.0), recent_usage=recent
    )
    assert off == {"1": 8, "2": 8}
    assert (on, departments) == ({"1": 5, "2": 11}, {"1": 5, "2": 11})
