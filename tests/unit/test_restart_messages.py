"""What a workload that waits to restart says (reconciler/outcome.py `Restart`): its phase
message, with the time of the next try once known, and the message of its `BackOff` event —
`pod <name> exited with code <n>; restart <k> of <limit> in <s> s (at <UTC time>Z)`, the form
the console and the CLI read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.plan import build_single_pod_plan
from lockstep.domain.workload import PodPhase
from lockstep.reconciler.outcome import Restart, outcome, utc_second
from lockstep.runtimes.base import PodStatus
from lockstep.schemas.single_pod import TrainingSpec
from tests.unit.specs import plan_of

AT = datetime(2026, 12, 4, 20, 41, 7, 250_000, tzinfo=UTC)


def _status(name: str, phase: PodPhase, *, code: int | None, restarts: int = 0) -> PodStatus:
    return PodStatus(
        name=name,
        role="worker",
        index=0,
        phase=phase,
        image="python:3.11",
        node_name="local",
        exit_code=code,
        restarts=restarts,
        message="" if code is None else f"exited with code {code}",
        finished_at=AT,
    )


def test_a_gang_restart_names_the_pod_its_exit_code_and_the_restart() -> None:
    plan = plan_of("PyTorch", 1, name="hello", spec={"restartPolicy": "OnFailure"})
    statuses = [
        _status("hello-master-0", PodPhase.FAILED, code=127, restarts=2),
        _status("hello-worker-0", PodPhase.FAILED, code=137, restarts=2),
    ]
    restart = outcome(plan, statuses).next_restart
    assert restart is not None
    assert restart.message() == (
        "restarting every pod after pod hello-master-0 exited with code 127 (restart 3 of 6)"
    )
    assert restart.message(AT) == (
        "restarting every pod after pod hello-master-0 exited with code 127 "
        "(restart 3 of 6 at 2026-12-04T20:41:07Z)"
    )
    assert restart.backoff_event(seconds=40.0, at=AT) == (
        "pod hello-master-0 exited with code 127; restart 3 of 6 in 40 s (at 2026-12-04T20:41:07Z)"
    )


def test_a_training_pod_restart_counts_every_failure_so_far() -> None:
    plan = build_single_pod_plan(
        "fit", WorkloadKind.TRAINING, TrainingSpec.model_validate({"image": "x", "backoffLimit": 4})
    )
    restart = outcome(plan, [_status("fit-0", PodPhase.FAILED, code=3, restarts=1)]).next_restart
    assert restart is not None
    assert restart.backoff_event(seconds=0.2, at=AT) == (
        "pod fit-0 exited with code 3; restart 2 of 4 in 0.2 s (at 2026-12-04T20:41:07Z)"
    )
    assert restart.message(AT) == (
        "running pod fit-0 again after pod fit-0 exited with code 3 "
        "(restart 2 of 4 at 2026-12-04T20:41:07Z)"
    )


def test_without_a_limit_the_restart_has_no_of() -> None:
    restart = Restart(
        pod="desk-0",
        exit_code=0,
        number=10,
        limit=None,
        action="running pod desk-0 again",
        reason="pod desk-0 exited with code 0",
    )
    assert restart.backoff_event(seconds=300.0, at=AT) == (
        "pod desk-0 exited with code 0; restart 10 in 300 s (at 2026-12-04T20:41:07Z)"
    )


@pytest.mark.parametrize(
    ("seconds", "shown"), [(10.0, "10"), (9.96, "10"), (160.0, "160"), (0.2, "0.2"), (-1.0, "0")]
)
def test_seconds_are_whole_from_one_up(seconds: float, shown: str) -> None:
    restart = Restart("p", 1, 1, 6, "restarting every pod", "pod p exited with code 1")
    assert f"in {shown} s " in restart.backoff_event(seconds=seconds, at=AT)


def test_times_are_utc_to_the_second() -> None:
    elsewhere = AT.astimezone(timezone(timedelta(hours=-5)))
    assert utc_second(elsewhere) == "2026-12-04T20:41:07Z"
