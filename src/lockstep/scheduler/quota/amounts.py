"""Amounts in the scheduler's units, one per resource quotas divide — GPUs in devices
(fractions allowed), CPU in millicores, memory in bytes — and how they compare, floating-point
noise aside."""

from __future__ import annotations

from lockstep.domain.quotas import Resource

RESOURCES: tuple[Resource, ...] = (Resource.GPU, Resource.CPU, Resource.MEMORY)
"""The resources quotas divide, in the order amounts list them."""

Amounts = list[float]
"""One amount per resource of `RESOURCES`."""

EPSILON = 1e-9


def zero() -> Amounts:
    return [0.0] * len(RESOURCES)


def exceeds(value: float, bound: float) -> bool:
    """`value` is beyond `bound`, floating-point noise aside (an infinite bound: never)."""
    return value > bound + EPSILON * max(1.0, abs(bound))


def first_over(held: Amounts, more: Amounts, bounds: Amounts) -> int | None:
    """The first resource for which `held` + `more` passes `bounds` (only those `more` asks)."""
    for r in range(len(RESOURCES)):
        if more[r] > EPSILON and exceeds(held[r] + more[r], bounds[r]):
            return r
    return None
