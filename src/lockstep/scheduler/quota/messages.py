"""The messages a waiting workload shows when a quota, not the nodes, holds it back, in the
units users think in: GPUs, CPU cores, memory as a quantity."""

from __future__ import annotations

import math

from lockstep.domain.quantities import binary_quantity
from lockstep.scheduler.quota.books import Account

NOUNS = ("GPU", "CPU", "memory")
"""Each resource of `RESOURCES` (amounts.py) as a message names its quota."""


def number(r: int, value: float) -> str:
    """An amount of resource `r` as a bare number (`8`, `0.5`, `4Gi`, `unlimited`)."""
    if math.isinf(value):
        return "unlimited"
    if r == 2:
        return binary_quantity(max(int(value), 0))
    scaled = value / 1000.0 if r == 1 else value
    return f"{scaled:.3f}".rstrip("0").rstrip(".") or "0"


def amount(r: int, value: float) -> str:
    """An amount with its noun: `2 GPUs`, `1 GPU`, `4 CPU cores`, `16Gi of memory`."""
    text = number(r, value)
    if r == 2:
        return f"{text} of memory"
    noun = "GPU" if r == 0 else "CPU core"
    return f"{text} {noun}{'' if text == '1' else 's'}"


def over_quota(account: Account, r: int, wanted: float) -> str:
    """`project team-a is over its GPU quota in pool default (8 deserved, 8 allocated);
    waiting for 2 GPUs to be freed or reclaimed`."""
    deserved, allocated = account.deserved[r], account.allocated[r]
    verb = "is over" if allocated >= deserved else "would go over"
    return (
        f"{account.kind} {account.name} {verb} its {NOUNS[r]} quota in pool {account.pool} "
        f"({number(r, deserved)} deserved, {number(r, allocated)} allocated); "
        f"waiting for {amount(r, wanted)} to be freed or reclaimed"
    )


def over_limit(account: Account, r: int, asked: float) -> str:
    return (
        f"{account.kind} {account.name} would pass its {NOUNS[r]} limit in pool {account.pool} "
        f"({number(r, account.limit[r])} limit, {number(r, account.allocated[r])} allocated, "
        f"{number(r, asked)} asked)"
    )


def beyond_limit(account: Account, r: int, asked: float) -> str:
    return (
        f"the workload asks {amount(r, asked)} in pool {account.pool}, more than the "
        f"{NOUNS[r]} limit of {account.kind} {account.name} ({number(r, account.limit[r])}): "
        "it cannot run unless the limit is raised"
    )


POD_LIMIT_SETTING = "LOCKSTEP_MAX_PODS_PER_PROJECT"
"""The setting that sets every project's pod limit, named in messages so that it can be found."""


def over_pod_limit(project: str, *, limit: int, held: int, asked: int) -> str:
    """`project team-a would pass its pod limit (3 limit, 2 held, 2 asked; …); waiting for
    pods of the project to end`."""
    return (
        f"project {project} would pass its pod limit ({limit} limit, {held} held, {asked} "
        f"asked; {POD_LIMIT_SETTING}); waiting for pods of the project to end"
    )


def beyond_pod_limit(project: str, *, limit: int, asked: int) -> str:
    return (
        f"the workload asks {asked} pod{'' if asked == 1 else 's'}, more than the pod limit of "
        f"project {project} ({limit}; {POD_LIMIT_SETTING}): it cannot run unless the limit "
        "is raised"
    )


def non_preemptible(account: Account, r: int, asked: float, *, ever: bool = False) -> str:
    """A non-preemptible workload beyond deserved (`ever`: it asks more than all of it)."""
    allocated = 0.0 if ever else account.non_preemptible[r]
    return (
        f"{account.kind} {account.name} has {number(r, account.deserved[r])} deserved "
        f"{NOUNS[r]} in pool {account.pool} ({number(r, allocated)} held by non-preemptible "
        "workloads) and a "
        "non-preemptible workload runs only within its deserved quota; this one asks "
        f"{amount(r, asked)}"
    )


def held_for(name: str, pool: str) -> str:
    return (
        f"waiting: what frees in pool {pool} is held for workload {name}, "
        "which is taking back its project's fair share"
    )
