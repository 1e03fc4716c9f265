"""Workload phases and the one table of transitions between them.

The reconciler is the only writer of a workload's actual phase and asks this module
whether a change is allowed; a forbidden change raises `PhaseTransitionError`.
"""

from __future__ import annotations

from enum import StrEnum

from lockstep.domain.errors import LockstepError


class Phase(StrEnum):
    """The actual phase of a workload, as the Run:ai API names it."""

    CREATING = "Creating"
    INITIALIZING = "Initializing"
    RESUMING = "Resuming"
    PENDING = "Pending"
    DELETING = "Deleting"
    RUNNING = "Running"
    UPDATING = "Updating"
    STOPPED = "Stopped"
    STOPPING = "Stopping"
    DEGRADED = "Degraded"
    FAILED = "Failed"
    COMPLETED = "Completed"
    TERMINATING = "Terminating"
    UNKNOWN = "Unknown"

    @property
    def is_terminal(self) -> bool:
        """A terminal phase never changes again."""
        return self in TERMINAL

    @property
    def has_pods(self) -> bool:
        """Whether pods of the workload may exist in this phase."""
        return self in _WITH_PODS


class DesiredPhase(StrEnum):
    """What the user asked for: the reconciler drives the actual phase toward it."""

    RUNNING = "Running"
    STOPPED = "Stopped"
    DELETED = "Deleted"


TERMINAL = frozenset({Phase.COMPLETED, Phase.FAILED})

_WITH_PODS = frozenset(
    {
        Phase.INITIALIZING,
        Phase.RUNNING,
        Phase.DEGRADED,
        Phase.STOPPING,
        Phase.DELETING,
        Phase.TERMINATING,
    }
)

_ALLOWED: dict[Phase, frozenset[Phase]] = {
    Phase.CREATING: frozenset({Phase.PENDING, Phase.FAILED, Phase.STOPPED, Phase.DELETING}),
    Phase.PENDING: frozenset({Phase.INITIALIZING, Phase.FAILED, Phase.STOPPED, Phase.DELETING}),
    Phase.INITIALIZING: frozenset(
        {
            Phase.RUNNING,
            Phase.DEGRADED,
            Phase.COMPLETED,
            Phase.FAILED,
            Phase.STOPPING,
            Phase.DELETING,
            Phase.TERMINATING,
        }
    ),
    Phase.RUNNING: frozenset(
        {
            Phase.DEGRADED,
            Phase.COMPLETED,
            Phase.FAILED,
            Phase.STOPPING,
            Phase.DELETING,
            Phase.TERMINATING,
        }
    ),
    Phase.DEGRADED: frozenset(
        {
            Phase.RUNNING,
            Phase.COMPLETED,
            Phase.FAILED,
            Phase.STOPPING,
            Phase.DELETING,
            Phase.TERMINATING,
        }
    ),
    # Preempted: its pods are stopped, then it waits to be scheduled again (or, with
    # terminateAfterPreemption, fails).
    Phase.TERMINATING: frozenset({Phase.PENDING, Phase.FAILED, Phase.STOPPING, Phase.DELETING}),
    Phase.STOPPING: frozenset({Phase.STOPPED, Phase.DELETING}),
    Phase.STOPPED: frozenset({Phase.RESUMING, Phase.DELETING}),
    Phase.RESUMING: frozenset({Phase.PENDING, Phase.STOPPED, Phase.FAILED, Phase.DELETING}),
    Phase.DELETING: frozenset(),
    Phase.COMPLETED: frozenset(),
    Phase.FAILED: frozenset(),
}


class PhaseTransitionError(LockstepError):
    """A change of phase that the transition table forbids."""

    def __init__(self, current: Phase, target: Phase) -> None:
        super().__init__(f"a workload cannot go from {current} to {target}")
        self.current = current
        self.target = target


def can_transition(current: Phase, target: Phase) -> bool:
    """Whether `current` may become `target` (staying in the same phase is always allowed)."""
    return current == target or target in _ALLOWED.get(current, frozenset())


def check_transition(current: Phase, target: Phase) -> Phase:
    """Return `target` when the table allows it, otherwise raise `PhaseTransitionError`."""
    if not can_transition(current, target):
        raise PhaseTransitionError(current, target)
    return target


def path_to(current: Phase, target: Phase) -> tuple[Phase, ...]:
    """The shortest way the table allows from `current` to `target` (the phases after
    `current`, ending in `target`; empty when they are the same or no way exists). For a
    runtime that reports the phase it sees, which may be several steps on (Pending, then
    Running once looked at again)."""
    reached: dict[Phase, Phase] = {current: current}
    frontier = [current]
    while frontier and target not in reached:
        following = []
        for phase in frontier:
            for step in sorted(_ALLOWED.get(phase, frozenset())):
                if step not in reached:
                    reached[step] = phase
                    following.append(step)
        frontier = following
    if current == target or target not in reached:
        return ()
    steps = [target]
    while reached[steps[-1]] != current:
        steps.append(reached[steps[-1]])
    return tuple(reversed(steps))
