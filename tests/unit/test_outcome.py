"""What a workload's pods mean for the workload (reconciler/outcome.py): success of the
leader (or, for JAX, of every worker), failure under restartPolicy Never, restarts of the whole
gang until the backoff limit, and Initializing versus Running."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lockstep.domain.phases import Phase
from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.workload import PodPhase
from lockstep.reconciler.outcome import (
    Outcome,
    Restart,
    gang_restarts,
    outcome,
    restart_backoff,
)
from lockstep.runtimes.base import PodStatus
from tests.unit.specs import plan_of

S, R, F, P, U = (
    PodPhase.SUCCEEDED,
    PodPhase.RUNNING,
    PodPhase.FAILED,
    PodPhase.PENDING,
    PodPhase.UNKNOWN,
)


def pods(
    plan: ReplicaPlan,
    phases: list[PodPhase],
    *,
    exit_codes: dict[int, int | None] | None = None,
    restarts: dict[int, int] | None = None,
    messages: dict[int, str] | None = None,
    unready: frozenset[int] = frozenset(),
) -> list[PodStatus]:
    """One status per replica, in plan order; failed pods exit 1 unless told otherwise, and
    running ones are ready unless their index is `unready`."""
    statuses = []
    for i, (replica, phase) in enumerate(zip(plan.replicas, phases, strict=False)):
        exit_code: int | None = None
        if phase is S:
            exit_code = 0
        elif phase is F:
            exit_code = 1
        if exit_codes and i in exit_codes:
            exit_code = exit_codes[i]
        statuses.append(
            PodStatus(
                name=replica.pod_name,
                role=replica.role.value,
                index=replica.index,
                phase=phase,
                image="python:3.11",
                node_name="local",
                exit_code=exit_code,
                restarts=(restarts or {}).get(i, 0),
                message=(messages or {}).get(i, ""),
                ready=phase is R and i not in unready,
            )
        )
    return statuses


AT = datetime(2026, 11, 30, tzinfo=UTC)


def plan(framework: str = "PyTorch", workers: int = 2, **spec: Any) -> ReplicaPlan:
    return plan_of(framework, workers, name="job", spec=spec)


# --- success --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("framework", "leader"),
    [
        ("PyTorch", "job-master-0"),
        ("XGBoost", "job-master-0"),
        ("TF", "job-chief-0"),
        ("MPI", "job-launcher-0"),
    ],
)
def test_leader_success_completes_the_workload(framework: str, leader: str) -> None:
    the_plan = plan(framework)
    result = outcome(the_plan, pods(the_plan, [S, R, R]))
    assert result == Outcome(Phase.COMPLETED, f"{leader} completed")


@pytest.mark.parametrize("framework", ["PyTorch", "XGBoost", "TF", "MPI"])
def test_leader_success_wins_over_failed_workers(framework: str) -> None:
    the_plan = plan(framework, restartPolicy="Never")
    assert outcome(the_plan, pods(the_plan, [S, F, F])).phase is Phase.COMPLETED


@pytest.mark.parametrize("framework", ["PyTorch", "XGBoost", "TF", "MPI"])
def test_workers_succeeding_without_the_leader_do_not_complete(framework: str) -> None:
    the_plan = plan(framework)
    assert outcome(the_plan, pods(the_plan, [R, S, S])) == Outcome(Phase.RUNNING)


def test_elastic_pytorch_completes_when_any_worker_does() -> None:
    """An elastic PyTorch workload is worker pods only, as a PyTorchJob without a Master, so
    the operator's rule for those applies: any worker succeeding completes it."""
    the_plan = plan("PyTorch", 3, minReplicas=2, maxReplicas=3)
    assert the_plan.is_elastic
    assert the_plan.leader.pod_name == "job-worker-0"
    assert outcome(the_plan, pods(the_plan, [R, S, R])) == Outcome(
        Phase.COMPLETED, "job-worker-1 completed"
    )
    assert outcome(the_plan, pods(the_plan, [R, R, R])) == Outcome(Phase.RUNNING)


def test_jax_completes_only_when_every_worker_succeeds() -> None:
    the_plan = plan("JAX", 2)
    assert outcome(the_plan, pods(the_plan, [S, S, S])) == Outcome(
        Phase.COMPLETED, "every worker completed"
    )
    assert outcome(the_plan, pods(the_plan, [S, S, R])) == Outcome(Phase.RUNNING)
    assert outcome(the_plan, pods(the_plan, [S, R, S])).phase is Phase.RUNNING


def test_jax_with_a_missing_pod_is_not_complete() -> None:
    the_plan = plan("JAX", 2)
    assert outcome(the_plan, pods(the_plan, [S, S])).phase is Phase.INITIALIZING


# --- failure --------------------------------------------------------------------------------


@pytest.mark.parametrize("framework", ["PyTorch", "XGBoost", "TF", "MPI", "JAX"])
def test_a_failed_pod_fails_the_workload_when_restart_policy_is_never(framework: str) -> None:
    the_plan = plan(framework, restartPolicy="Never")
    result = outcome(the_plan, pods(the_plan, [R, F, R], messages={1: "exited with code 1"}))
    failed = the_plan.replicas[1].pod_name
    assert result == Outcome(Phase.FAILED, f"pod {failed} exited with code 1", log_tail_of=failed)
    assert not result.restart


def test_default_never_policy_of_tf_fails_on_first_failure() -> None:
    the_plan = plan("TF")
    assert outcome(the_plan, pods(the_plan, [R, R, F])).phase is Phase.FAILED


def test_failure_message_without_a_pod_message_has_no_trailing_space() -> None:
    the_plan = plan(restartPolicy="Never")
    assert outcome(the_plan, pods(the_plan, [F, R, R])).message == "pod job-master-0"


def test_the_first_pod_to_fail_is_named() -> None:
    the_plan = plan(restartPolicy="Never")
    statuses = pods(the_plan, [R, F, F], messages={1: "one", 2: "two"})
    statuses[1] = replace(statuses[1], finished_at=AT + timedelta(seconds=2))
    statuses[2] = replace(statuses[2], finished_at=AT + timedelta(seconds=1))
    result = outcome(the_plan, statuses)
    assert result.message == "pod job-worker-1 two"
    assert result.log_tail_of == "job-worker-1"


def test_a_pod_that_said_why_it_ended_is_not_followed_by_its_log() -> None:
    the_plan = plan(restartPolicy="Never")
    statuses = pods(the_plan, [R, F, R], messages={1: "could not make its volumes ready: x"})
    statuses[1] = replace(statuses[1], explained=True)
    result = outcome(the_plan, statuses)
    assert result.message == "pod job-worker-0 could not make its volumes ready: x"
    assert result.log_tail_of is None


def test_pods_stopped_by_lockstep_are_not_failures() -> None:
    the_plan = plan(restartPolicy="Never")
    statuses = pods(the_plan, [R, F, R])
    statuses[1] = replace(statuses[1], stopped=True)
    result = outcome(the_plan, statuses)
    assert result.phase is not Phase.FAILED
    assert result.log_tail_of is None
    assert not result.restart


@pytest.mark.parametrize("policy", ["OnFailure", "Always"])
def test_a_failed_pod_restarts_the_whole_gang_under_a_restarting_policy(policy: str) -> None:
    the_plan = plan(restartPolicy=policy)
    statuses = pods(the_plan, [R, F, R], exit_codes={1: 3}, messages={1: "exited with code 3"})
    result = outcome(the_plan, statuses)
    assert result == Outcome(
        Phase.DEGRADED,
        "restarting every pod after pod job-worker-0 exited with code 3 (restart 1 of 6)",
        log_tail_of="job-worker-0",
        restart=True,
        next_restart=Restart(
            pod="job-worker-0",
            exit_code=3,
            number=1,
            limit=6,
            action="restarting every pod",
            reason="pod job-worker-0 exited with code 3",
        ),
    )


def test_pytorch_restarts_by_default() -> None:
    the_plan = plan("PyTorch")
    assert outcome(the_plan, pods(the_plan, [R, F, R])).restart


def test_a_pod_that_failed_without_an_exit_code_fails_the_workload() -> None:
    """No exit code: it never ran (it could not start), so restarting would not help."""
    the_plan = plan(restartPolicy="OnFailure")
    result = outcome(the_plan, pods(the_plan, [R, F, R], exit_codes={1: None}))
    assert result.phase is Phase.FAILED
    assert not result.restart


@pytest.mark.parametrize(
    ("backoff", "gang_restarts_so_far", "phase"),
    [
        (6, 0, Phase.DEGRADED),
        (6, 5, Phase.DEGRADED),  # the sixth restart is still allowed
        (6, 6, Phase.FAILED),  # a seventh is not
        (0, 0, Phase.FAILED),  # no restarts at all
        (1, 0, Phase.DEGRADED),
        (1, 1, Phase.FAILED),
    ],
)
def test_the_gang_restarts_until_the_backoff_limit(
    backoff: int, gang_restarts_so_far: int, phase: Phase
) -> None:
    the_plan = plan(restartPolicy="OnFailure", backoffLimit=backoff)
    attempts = dict.fromkeys(range(3), gang_restarts_so_far)
    result = outcome(the_plan, pods(the_plan, [R, F, R], restarts=attempts))
    assert result.phase is phase
    assert result.restart is (phase is Phase.DEGRADED)
    if phase is Phase.FAILED:
        assert result.message.endswith(
            f"; the workload has reached the specified backoff limit ({backoff})"
        )


def test_default_backoff_limit_is_six() -> None:
    the_plan = plan(restartPolicy="OnFailure")
    five = dict.fromkeys(range(3), 5)
    six = dict.fromkeys(range(3), 6)
    assert outcome(the_plan, pods(the_plan, [R, F, R], restarts=five)).restart
    assert outcome(the_plan, pods(the_plan, [R, F, R], restarts=six)).phase is Phase.FAILED


@pytest.mark.parametrize(
    ("restarts", "seconds"), [(0, 10.0), (1, 20.0), (2, 40.0), (4, 160.0), (5, 300.0), (20, 300.0)]
)
def test_restart_backoff_doubles_up_to_five_minutes(restarts: int, seconds: float) -> None:
    assert restart_backoff(restarts, base_seconds=10.0) == seconds


def test_gang_restarts_count_the_leaders_attempts() -> None:
    the_plan = plan()
    assert gang_restarts(the_plan, pods(the_plan, [R, R, R], restarts={0: 3, 1: 3, 2: 3})) == 3
    assert gang_restarts(the_plan, []) == 0


# --- starting and running -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phases", "phase"),
    [
        ([], Phase.INITIALIZING),
        ([P, P, P], Phase.INITIALIZING),
        ([R, P, R], Phase.INITIALIZING),
        ([R, R, U], Phase.INITIALIZING),
        ([R, R], Phase.INITIALIZING),  # a pod is still missing
        ([R, R, R], Phase.RUNNING),
        ([R, S, R], Phase.RUNNING),  # a finished worker does not end the gang
    ],
)
def test_initializing_until_every_pod_has_started(phases: list[PodPhase], phase: Phase) -> None:
    the_plan = plan()
    result = outcome(the_plan, pods(the_plan, phases))
    assert result.phase is phase
    assert not result.restart
    if phase is Phase.INITIALIZING:
        assert result.message == "starting pods"


def test_outcome_is_a_pure_function_of_its_inputs() -> None:
    the_plan = plan(restartPolicy="OnFailure")
    statuses = pods(the_plan, [R, F, R])
    assert outcome(the_plan, statuses) == outcome(the_plan, list(reversed(statuses)))


def test_a_running_pod_that_is_not_ready_holds_the_workload_initializing() -> None:
    plan = plan_of("PyTorch", 2)
    result = outcome(plan, pods(plan, [R, R, R], unready=frozenset({0, 2})))
    assert result == Outcome(
        Phase.INITIALIZING, "waiting for train-master-0, train-worker-1 to be ready"
    )
    assert outcome(plan, pods(plan, [R, R, R])).phase is Phase.RUNNING


def test_an_elastic_workload_runs_once_its_minimum_runs() -> None:
    """minReplicas 2 of 3 pods: two running pods (the third waiting for room, so not among the
    statuses) make the workload Running; one does not."""
    the_plan = plan("PyTorch", 3, minReplicas=2, maxReplicas=3)
    assert the_plan.required_pods == 2
    statuses = pods(the_plan, [R, R, R])
    assert outcome(the_plan, statuses[:2]) == Outcome(Phase.RUNNING)
    assert outcome(the_plan, statuses[:1]).phase is Phase.INITIALIZING
    fixed = plan("PyTorch", 2)
    assert fixed.required_pods == 3
    assert outcome(fixed, pods(fixed, [R, R, R])[:2]).phase is Phase.INITIALIZING
