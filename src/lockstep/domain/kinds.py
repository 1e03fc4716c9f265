"""Workload kinds and what differs between them, as one table.

A distributed workload is a gang of a leader and workers; a training is one pod, or a Job's
`parallelism` pods at a time until `completions` have succeeded; a workspace is one pod for
interactive work. Everything else — the store, the reconciler, the scheduler, the sandbox —
is the same code for every kind. Pure; read by the service, the views, the plan and the
runtimes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from lockstep.domain.priorities import TRAIN


class WorkloadKind(StrEnum):
    """A workload's kind, as the generic workload list's `type` names it."""

    DISTRIBUTED = "Distributed"
    TRAINING = "Training"
    WORKSPACE = "Workspace"


@dataclass(frozen=True, slots=True)
class KindTraits:
    path: str
    """Its collection under /api/v1/workloads/."""
    noun: str
    """What messages call one of them."""
    default_priority_class: str
    default_category: str


BUILD = "build"

TRAITS: dict[WorkloadKind, KindTraits] = {
    WorkloadKind.DISTRIBUTED: KindTraits("distributed", "distributed workload", TRAIN, "Train"),
    WorkloadKind.TRAINING: KindTraits("trainings", "training", TRAIN, "Train"),
    WorkloadKind.WORKSPACE: KindTraits("workspaces", "workspace", BUILD, "Build"),
}
"""A training is preemptible by default (class train), a workspace is not (class build): it
runs only within its project's deserved quota."""


def kind_of_type(text: str) -> WorkloadKind | None:
    """The kind a list filter's `type` value names, in any letter case."""
    for kind in WorkloadKind:
        if kind.value.lower() == text.lower():
            return kind
    return None
