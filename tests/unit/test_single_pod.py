"""Trainings and workspaces in the pure layers: their plan (one pod per completion, named
`<name>-<index>`, `parallelism` admitted together), what their pods mean for them (a Job's
rules: completions, pods run again on their own until the backoff limit), their rules, and the
gang the scheduler sees."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lockstep.domain.kinds import TRAITS, WorkloadKind
from lockstep.domain.phases import Phase
from lockstep.domain.plan import ReplicaPlan, Role, build_single_pod_plan
from lockstep.domain.priorities import is_preemptible
from lockstep.domain.rules import check_single_pod_request
from lockstep.domain.workload import PodPhase
from lockstep.reconciler.outcome import Outcome, outcome
from lockstep.runtimes.base import PodStatus
from lockstep.schemas.pod import RestartPolicy
from lockstep.schemas.single_pod import (
    TrainingCreationRequest,
    TrainingSpec,
    WorkspaceCreationRequest,
    WorkspaceSpec,
)
from tests.unit.specs import CLUSTER_ID

AT = datetime(2026, 12, 1, tzinfo=UTC)


def training(**spec: Any) -> ReplicaPlan:
    model = TrainingSpec.model_validate({"image": "python:3.11", **spec}, strict=False)
    return build_single_pod_plan("fit", WorkloadKind.TRAINING, model)


def workspace(**spec: Any) -> ReplicaPlan:
    model = WorkspaceSpec.model_validate({"image": "python:3.11", **spec}, strict=False)
    return build_single_pod_plan("desk", WorkloadKind.WORKSPACE, model)


def status(
    name: str, phase: PodPhase, *, code: int | None = None, restarts: int = 0, ended: int = 0
) -> PodStatus:
    ended_phases = {PodPhase.SUCCEEDED, PodPhase.FAILED}
    finished = AT + timedelta(seconds=ended) if phase in ended_phases else None
    if code is None and phase is PodPhase.SUCCEEDED:
        code = 0
    return PodStatus(
        name=name,
        role="training",
        index=int(name.rsplit("-", 1)[1]),
        phase=phase,
        image="python:3.11",
        node_name="local",
        exit_code=code,
        restarts=restarts,
        message="" if code is None else f"exited with code {code}",
        ready=phase is PodPhase.RUNNING,
        finished_at=finished,
    )


def test_a_training_is_one_pod_per_completion_parallelism_admitted_together() -> None:
    plan = training(completions=4, parallelism=2)
    assert [r.pod_name for r in plan.replicas] == ["fit-0", "fit-1", "fit-2", "fit-3"]
    assert {r.role for r in plan.replicas} == {Role.TRAINING}
    assert plan.leader.pod_name == "fit-0" and plan.leader.is_leader
    assert (plan.gang_size, plan.required_pods, plan.framework) == (2, 2, None)
    assert plan.restart_policy is RestartPolicy.NEVER


def test_parallelism_never_exceeds_completions_and_defaults_to_one() -> None:
    assert training(completions=2, parallelism=5).gang_size == 2
    assert training(completions=3).gang_size == 1
    assert len(training().replicas) == 1
    one = workspace()
    assert [r.pod_name for r in one.replicas] == ["desk-0"]
    assert one.replicas[0].role is Role.WORKSPACE


def test_default_priority_classes_make_a_workspace_not_preemptible() -> None:
    train = TRAITS[WorkloadKind.TRAINING].default_priority_class
    build = TRAITS[WorkloadKind.WORKSPACE].default_priority_class
    assert (train, build) == ("train", "build")
    assert is_preemptible(train, None) and not is_preemptible(build, None)
    assert is_preemptible(build, "preemptible")


def test_a_training_completes_once_its_completions_have_succeeded() -> None:
    plan = training(completions=3, parallelism=2)
    running = [status("fit-0", PodPhase.SUCCEEDED), status("fit-1", PodPhase.RUNNING)]
    assert outcome(plan, running).phase is Phase.RUNNING
    two = [*running[:1], status("fit-1", PodPhase.SUCCEEDED), status("fit-2", PodPhase.RUNNING)]
    assert outcome(plan, two).phase is Phase.RUNNING
    done = [status(f"fit-{i}", PodPhase.SUCCEEDED) for i in range(3)]
    assert outcome(plan, done) == Outcome(Phase.COMPLETED, "all 3 completions succeeded")
    single = training()
    assert outcome(single, [status("fit-0", PodPhase.SUCCEEDED)]).message == "fit-0 completed"


def test_a_failed_pod_runs_again_alone_until_the_backoff_limit() -> None:
    plan = training(completions=2, parallelism=2, backoffLimit=2)
    first = [status("fit-0", PodPhase.FAILED, code=3), status("fit-1", PodPhase.RUNNING)]
    retry = outcome(plan, first)
    assert (retry.phase, retry.restart, retry.restart_pods) == (Phase.DEGRADED, True, ("fit-0",))
    assert retry.message == (
        "running pod fit-0 again after pod fit-0 exited with code 3 (restart 1 of 2)"
    )
    assert retry.log_tail_of == "fit-0"
    again = [
        status("fit-0", PodPhase.FAILED, code=3, restarts=1),
        status("fit-1", PodPhase.FAILED, code=4, restarts=1, ended=1),
    ]
    failed = outcome(plan, again)
    assert failed.phase is Phase.FAILED and not failed.restart
    assert failed.message == (
        "pod fit-0 exited with code 3; the workload has reached the specified backoff limit (2)"
    )


def test_backoff_limit_zero_fails_at_the_first_failure_naming_the_code() -> None:
    plan = training(backoffLimit=0)
    failed = outcome(plan, [status("fit-0", PodPhase.FAILED, code=7)])
    assert (failed.phase, failed.message) == (Phase.FAILED, "pod fit-0 exited with code 7")


def test_a_pod_that_could_not_start_fails_at_once() -> None:
    broken = status("fit-0", PodPhase.FAILED)
    failed = outcome(training(), [broken])
    assert failed.phase is Phase.FAILED and not failed.restart


def test_a_pod_lockstep_stopped_decides_nothing() -> None:
    stopped = replace(status("desk-0", PodPhase.FAILED, code=143), stopped=True)
    assert outcome(workspace(), [stopped]) == outcome(workspace(), [])


def test_a_workspace_with_restart_policy_always_runs_again_and_never_completes() -> None:
    plan = workspace(restartPolicy="Always", backoffLimit=0)
    ended = outcome(plan, [status("desk-0", PodPhase.SUCCEEDED, restarts=9)])
    assert (ended.phase, ended.restart_pods) == (Phase.DEGRADED, ("desk-0",))
    assert ended.message.endswith("(restart 10)")


def _training_request(**spec: Any) -> TrainingCreationRequest:
    body = {
        "name": "fit",
        "projectId": "1",
        "clusterId": CLUSTER_ID,
        "spec": {"image": "python:3.11", **spec},
    }
    return TrainingCreationRequest.model_validate_json(json.dumps(body))


def _fields(request: TrainingCreationRequest | WorkspaceCreationRequest) -> dict[str, str]:
    return {v.field: v.rule for v in check_single_pod_request(request)}


def test_rules_of_a_training() -> None:
    assert _fields(_training_request(completions=3, parallelism=2)) == {}
    bad = _fields(_training_request(completions=0, parallelism=-1, restartPolicy="Always"))
    assert bad == {
        "spec.completions": "must be greater than or equal to 1",
        "spec.parallelism": "must be greater than or equal to 1",
        "spec.restartPolicy": "must be Never or OnFailure: a training's pods run to "
        "completion, as a Job's do",
    }
    assert _fields(_training_request(image=None)) == {"spec.image": "required"}


def test_a_training_name_leaves_room_for_its_last_pod_index() -> None:
    body = {"name": "a" * 61, "projectId": "1", "clusterId": CLUSTER_ID}

    def named(completions: int) -> TrainingCreationRequest:
        spec = {"image": "x", "completions": completions}
        return TrainingCreationRequest.model_validate_json(json.dumps({**body, "spec": spec}))

    assert _fields(named(10)) == {}  # its last pod, <name>-9, has 63 characters
    assert _fields(named(11))["name"] == (
        "must be at most 60 characters so that pod names such as '<name>-10' fit in 63"
    )


def test_a_workspace_needs_a_spec_and_an_image() -> None:
    body = {"name": "desk", "projectId": "1", "clusterId": CLUSTER_ID}
    none = WorkspaceCreationRequest.model_validate_json(json.dumps(body))
    assert _fields(none) == {"spec": "required"}
    empty = WorkspaceCreationRequest.model_validate_json(json.dumps({**body, "spec": {}}))
    assert _fields(empty) == {"spec.image": "required"}
    always = WorkspaceCreationRequest.model_validate_json(
        json.dumps({**body, "spec": {"image": "x", "restartPolicy": "Always"}})
    )
    assert _fields(always) == {}


@pytest.mark.parametrize("kind", [WorkloadKind.TRAINING, WorkloadKind.WORKSPACE])
def test_each_kind_has_its_path(kind: WorkloadKind) -> None:
    assert TRAITS[kind].path == {"Training": "trainings", "Workspace": "workspaces"}[kind.value]
