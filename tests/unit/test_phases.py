"""The phase transition table (domain/phases.py): every allowed change, every forbidden one,
terminal phases, and the phase names against the Run:ai API contract."""

from __future__ import annotations

import pytest

from lockstep.domain.errors import LockstepError
from lockstep.domain.phases import (
    DesiredPhase,
    Phase,
    PhaseTransitionError,
    can_transition,
    check_transition,
    path_to,
)
from tests.support.contract import document

P = Phase

# The lifecycle, written out pair by pair: submit → queue → start → run → finish, with stop,
# resume, preemption and delete branching off. Phases lockstep never enters (Updating,
# Unknown) have no way in or out.
ALLOWED: dict[Phase, set[Phase]] = {
    P.CREATING: {P.PENDING, P.FAILED, P.STOPPED, P.DELETING},
    P.PENDING: {P.INITIALIZING, P.FAILED, P.STOPPED, P.DELETING},
    P.INITIALIZING: {
        P.RUNNING,
        P.DEGRADED,
        P.COMPLETED,
        P.FAILED,
        P.STOPPING,
        P.DELETING,
        P.TERMINATING,
    },
    P.RUNNING: {P.DEGRADED, P.COMPLETED, P.FAILED, P.STOPPING, P.DELETING, P.TERMINATING},
    P.DEGRADED: {P.RUNNING, P.COMPLETED, P.FAILED, P.STOPPING, P.DELETING, P.TERMINATING},
    P.TERMINATING: {P.PENDING, P.FAILED, P.STOPPING, P.DELETING},
    P.STOPPING: {P.STOPPED, P.DELETING},
    P.STOPPED: {P.RESUMING, P.DELETING},
    P.RESUMING: {P.PENDING, P.STOPPED, P.FAILED, P.DELETING},
}

ALLOWED_PAIRS = [(current, target) for current, targets in ALLOWED.items() for target in targets]
FORBIDDEN_PAIRS = [
    (current, target)
    for current in Phase
    for target in Phase
    if current != target and target not in ALLOWED.get(current, set())
]
TERMINAL = [P.COMPLETED, P.FAILED]


def _ids(pair: tuple[Phase, Phase]) -> str:
    return f"{pair[0].value}->{pair[1].value}"


@pytest.mark.parametrize("pair", ALLOWED_PAIRS, ids=_ids)
def test_allowed_transition(pair: tuple[Phase, Phase]) -> None:
    current, target = pair
    assert can_transition(current, target)
    assert check_transition(current, target) is target


@pytest.mark.parametrize("pair", FORBIDDEN_PAIRS, ids=_ids)
def test_forbidden_transition_raises(pair: tuple[Phase, Phase]) -> None:
    current, target = pair
    assert not can_transition(current, target)
    with pytest.raises(PhaseTransitionError) as caught:
        check_transition(current, target)
    assert caught.value.current is current
    assert caught.value.target is target
    assert current.value in caught.value.message
    assert target.value in caught.value.message


@pytest.mark.parametrize("phase", list(Phase), ids=str)
def test_staying_in_the_same_phase_is_always_allowed(phase: Phase) -> None:
    assert can_transition(phase, phase)
    assert check_transition(phase, phase) is phase


@pytest.mark.parametrize("terminal", TERMINAL, ids=str)
@pytest.mark.parametrize("target", list(Phase), ids=str)
def test_terminal_phases_never_change(terminal: Phase, target: Phase) -> None:
    assert terminal.is_terminal
    if target is terminal:
        return
    with pytest.raises(PhaseTransitionError):
        check_transition(terminal, target)


def test_only_completed_and_failed_are_terminal() -> None:
    assert {phase for phase in Phase if phase.is_terminal} == set(TERMINAL)


def test_the_table_has_no_dead_ends_except_terminal_and_deleting() -> None:
    """Every phase lockstep moves through can be left, so a workload is never stuck."""
    for phase in ALLOWED:
        assert not phase.is_terminal
        assert any(can_transition(phase, target) for target in Phase if target is not phase)
    for stuck in (P.DELETING, *TERMINAL):
        assert not any(can_transition(stuck, target) for target in Phase if target is not stuck)


def test_every_live_phase_can_be_deleted() -> None:
    for phase in ALLOWED:
        assert can_transition(phase, P.DELETING), phase


def test_phases_with_pods() -> None:
    with_pods = {phase for phase in Phase if phase.has_pods}
    assert with_pods == {
        P.INITIALIZING,
        P.RUNNING,
        P.DEGRADED,
        P.STOPPING,
        P.DELETING,
        P.TERMINATING,
    }
    assert not P.PENDING.has_pods
    assert not P.STOPPED.has_pods


def test_transition_error_is_a_permanent_lockstep_error() -> None:
    error = PhaseTransitionError(P.COMPLETED, P.RUNNING)
    assert isinstance(error, LockstepError)
    assert not isinstance(error, AssertionError)
    assert not error.transient
    assert str(error) == "a workload cannot go from Completed to Running"


def _enum(name: str) -> list[str]:
    values: list[str] = document()["components"]["schemas"][name]["enum"]
    return values


def test_phase_names_are_the_run_ai_ones() -> None:
    assert [phase.value for phase in Phase] == _enum("Phase")


def test_desired_phase_names_are_the_run_ai_ones() -> None:
    assert sorted(phase.value for phase in DesiredPhase) == sorted(_enum("WorkloadDesiredPhase"))


@pytest.mark.parametrize(
    ("current", "target", "path"),
    [
        (Phase.CREATING, Phase.RUNNING, (Phase.PENDING, Phase.INITIALIZING, Phase.RUNNING)),
        (Phase.PENDING, Phase.COMPLETED, (Phase.INITIALIZING, Phase.COMPLETED)),
        (Phase.RUNNING, Phase.STOPPED, (Phase.STOPPING, Phase.STOPPED)),
        (
            Phase.STOPPED,
            Phase.RUNNING,
            (Phase.RESUMING, Phase.PENDING, Phase.INITIALIZING, Phase.RUNNING),
        ),
        (Phase.RUNNING, Phase.RUNNING, ()),
        (Phase.COMPLETED, Phase.RUNNING, ()),
    ],
)
def test_the_shortest_path_the_table_allows(
    current: Phase, target: Phase, path: tuple[Phase, ...]
) -> None:
    assert path_to(current, target) == path
    for before, after in zip((current, *path), path, strict=False):
        assert can_transition(before, after)
