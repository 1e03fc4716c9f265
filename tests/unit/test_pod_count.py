"""`distributed_pod_count` (domain/plan.py), what the API reports as a distributed workload's
`requestedPods`, agrees with the pods its replica plan runs, for every framework, fixed and
elastic."""

from __future__ import annotations

from typing import Any

import pytest

from lockstep.domain.plan import bounds_of, distributed_pod_count
from lockstep.schemas.distributed import DistributedFramework
from tests.unit.specs import plan_of

SHAPES: list[tuple[int, dict[str, Any]]] = [
    (1, {}),
    (3, {}),
    (2, {"minReplicas": 2, "maxReplicas": 2}),
    (3, {"minReplicas": 1, "maxReplicas": 8}),
    (2, {"maxReplicas": 2}),
]


@pytest.mark.parametrize("framework", list(DistributedFramework))
@pytest.mark.parametrize(("workers", "elastic"), SHAPES)
def test_the_count_is_the_plans_pods(
    framework: DistributedFramework, workers: int, elastic: dict[str, Any]
) -> None:
    plan = plan_of(framework.value, workers, spec=elastic, same_as_worker=True)
    bounds = bounds_of(framework, elastic.get("minReplicas"), elastic.get("maxReplicas"))
    assert distributed_pod_count(workers, elastic=bounds is not None) == len(plan.replicas)
    expected = None if plan.min_workers is None else (plan.min_workers, plan.max_workers)
    assert bounds == expected
