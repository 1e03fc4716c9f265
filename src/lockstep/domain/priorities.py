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


def priority_of(priority_class: str) -> int:
    return PRIORITY_OF_CLASS.get(priority_class, PRIORITY_OF_CLASS[TRAIN])
