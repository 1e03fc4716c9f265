"""Priority classes of workloads and the numeric priority each one stands for."""

from __future__ import annotations

TRAIN = "train"

PRIORITY_OF_CLASS: dict[str, int] = {
    "train": 50,
    "interactive-preemptible": 75,
    "build": 100,
    "inference": 125,
}
"""Run:ai's built-in priority classes; an unknown class counts as training."""


PREEMPTIBLE_CLASSES = frozenset({"train", "interactive-preemptible"})
"""Classes whose workloads may be preempted unless their spec says otherwise."""


def priority_of(priority_class: str) -> int:
    return PRIORITY_OF_CLASS.get(priority_class, PRIORITY_OF_CLASS[TRAIN])


def is_preemptible(priority_class: str, preemptibility: str | None) -> bool:
    """The spec's `preemptibility` when set, else what its priority class implies."""
    if preemptibility is not None:
        return preemptibility == "preemptible"
    return priority_class in PREEMPTIBLE_CLASSES or priority_class not in PRIORITY_OF_CLASS
