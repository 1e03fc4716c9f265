"""The gang's one layout (domain/plan.lay_out_gang), from which the API reports a workload's
`requestedPods`, agrees with the pods its replica plan runs, for every framework, fixed and
elastic, and for trainings of every completions and parallelism; read from a stored request's
wire form, it is the layout of the validated spec."""

from __future__ import annotations

from typing import Any

import pytest

from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.plan import GangCounts, bounds_of, build_single_pod_plan, lay_out_gang
from lockstep.domain.workload_request import WorkloadRequest
from lockstep.schemas.distributed import DistributedFramework
from lockstep.schemas.single_pod import TrainingSpec
from tests.unit.specs import BASE_SPEC, plan_of

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
    wire = {**BASE_SPEC, "distributedFramework": framework.value, "numWorkers": workers, **elastic}
    layout = WorkloadRequest(WorkloadKind.DISTRIBUTED, {"spec": wire}).layout
    assert layout.together == layout.pods == len(plan.replicas)
    bounds = bounds_of(framework, elastic.get("minReplicas"), elastic.get("maxReplicas"))
    expected = None if plan.min_workers is None else (plan.min_workers, plan.max_workers)
    assert layout.bounds == bounds == expected
    names = [
        f"{group.prefix('train')}{index}"
        for group in layout.groups
        for index in range(group.first, group.first + group.count)
    ]
    assert names == [replica.pod_name for replica in plan.replicas]


@pytest.mark.parametrize(
    ("completions", "parallelism", "together"),
    [(None, None, 1), (4, None, 1), (4, 2, 2), (2, 5, 2), (None, 3, 1)],
)
def test_a_trainings_count_is_its_parallelism_within_its_completions(
    completions: int | None, parallelism: int | None, together: int
) -> None:
    fields = {"completions": completions, "parallelism": parallelism}
    spec = TrainingSpec.model_validate({"image": "python:3.11", **fields})
    plan = build_single_pod_plan("train", WorkloadKind.TRAINING, spec)
    layout = lay_out_gang(GangCounts.of_spec(WorkloadKind.TRAINING, spec))
    stored = {"spec": spec.model_dump(by_alias=True, exclude_none=True)}
    assert WorkloadRequest(WorkloadKind.TRAINING, stored).layout == layout
    assert layout.together == plan.gang_size == together
    assert layout.pods == len(plan.replicas) == (completions or 1)
