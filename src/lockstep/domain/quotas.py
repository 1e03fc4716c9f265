"""Quotas of projects and departments, read from their stored `resources[]`.

Per node pool and per resource (GPUs, CPU, memory) a quota has a `deserved` share (what is
guaranteed), a `limit` (the most that may ever be held) and an `overQuotaWeight` (how spare
capacity beyond `deserved` is divided between those that want more). Units are the
scheduler's: GPUs in devices (fractions allowed), CPU in millicores, memory in bytes — the
wire form's memory `units` (Mib, MB, GB) are converted here.

Rules (docs/quotas.md says the same):
- an entry without `nodePool` holds for every pool no other entry names (a cluster without
  node pools has one such entry);
- a pool the resources do not name gets deserved 0 (GPUs, CPU and memory alike), no limit and
  weight 1;
- `limit` -1 or absent: no limit; `deserved` -1: unlimited (KAI's convention; the default
  project created at the first start has it, so that it keeps behaving as lockstep did before
  quotas: everything it asks is within its deserved share);
- a `cpu` or `memory` quota the entry leaves out (or whose `deserved` is absent or null) is
  not enforced, as Run:ai reads it: deserved unlimited (KAI's -1), no limit unless one is
  given — so a project that sets only a GPU quota runs its non-preemptible workloads within
  its GPUs, whatever CPU and memory they ask. GPUs are always enforced: the document's
  default `gpu.deserved` is 0 (the stored form fills it in), and a GPU entry or `deserved`
  left out reads 0;
- `overQuotaWeight` absent: 1.

Pure: used by the scheduler (fair shares), the services (quota status) and the Kubernetes
runtime (KAI and Volcano queues).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

UNLIMITED = math.inf
"""A deserved share or limit with no bound."""

NO_LIMIT_WIRE = -1
"""How the wire form says "unlimited", for `deserved` and `limit` alike."""

DEFAULT_WEIGHT = 1.0


class Resource(StrEnum):
    GPU = "gpu"
    CPU = "cpu"
    MEMORY = "memory"


MEMORY_UNIT_BYTES: Mapping[str, int] = {"Mib": 2**20, "MB": 10**6, "GB": 10**9}
"""The wire form's memory `units`, in bytes each."""


@dataclass(frozen=True, slots=True)
class Quota:
    """One resource's quota in one pool, in the scheduler's units."""

    deserved: float = 0.0
    limit: float = UNLIMITED
    weight: float = DEFAULT_WEIGHT


UNBOUNDED = Quota(deserved=UNLIMITED)
"""What the default project holds in every pool."""


@dataclass(frozen=True, slots=True)
class PoolQuota:
    """The quotas of one org unit in one node pool."""

    pool: str
    gpu: Quota = field(default_factory=Quota)
    cpu: Quota = field(default_factory=Quota)
    memory: Quota = field(default_factory=Quota)
    priority: str | None = None

    def of(self, resource: Resource) -> Quota:
        return getattr(self, resource.value)  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class Quotas:
    """An org unit's quotas in every pool."""

    by_pool: Mapping[str, PoolQuota] = field(default_factory=dict)
    fallback: PoolQuota | None = None
    """The entry without a node pool: what every unnamed pool gets."""

    def in_pool(self, pool: str) -> PoolQuota:
        named = self.by_pool.get(pool)
        if named is not None:
            return named
        if self.fallback is not None:
            return PoolQuota(
                pool,
                self.fallback.gpu,
                self.fallback.cpu,
                self.fallback.memory,
                self.fallback.priority,
            )
        return PoolQuota(pool)


def quotas_of(resources: Sequence[Mapping[str, Any]]) -> Quotas:
    """The quotas that stored `resources[]` (their wire form) say."""
    by_pool: dict[str, PoolQuota] = {}
    fallback = None
    for entry in resources:
        reference = entry.get("nodePool") or {}
        pool = reference.get("name") or None
        quota = PoolQuota(
            pool or "",
            gpu=_quota(entry.get("gpu"), absent=0.0),
            cpu=_quota(entry.get("cpu"), absent=UNLIMITED),
            memory=_quota(
                entry.get("memory"), absent=UNLIMITED, scale=_memory_scale(entry.get("memory"))
            ),
            priority=entry.get("priority"),
        )
        if pool is None:
            fallback = quota
        else:
            by_pool[pool] = quota
    return Quotas(by_pool, fallback)


def _memory_scale(memory: Mapping[str, Any] | None) -> float:
    units = (memory or {}).get("units") or "MB"
    return float(MEMORY_UNIT_BYTES.get(str(units), MEMORY_UNIT_BYTES["MB"]))


def _quota(wire: Mapping[str, Any] | None, *, absent: float, scale: float = 1.0) -> Quota:
    """One resource's quota; `absent`: the deserved share when the wire form gives none (0
    for GPUs, `UNLIMITED` — not enforced — for CPU and memory)."""
    if not wire:
        return Quota(deserved=absent)
    deserved = wire.get("deserved")
    limit = wire.get("limit")
    weight = wire.get("overQuotaWeight")
    return Quota(
        deserved=_amount(deserved, scale, absent=absent),
        limit=_amount(limit, scale, absent=UNLIMITED),
        weight=DEFAULT_WEIGHT if weight is None else float(weight),
    )


def _amount(value: object, scale: float, *, absent: float) -> float:
    if value is None:
        return absent
    number = float(value)  # type: ignore[arg-type]
    if number == NO_LIMIT_WIRE:
        return UNLIMITED
    return number * scale


def unbounded_resources() -> list[dict[str, Any]]:
    """The wire form of `UNBOUNDED` in every pool: the default project's `resources[]`."""
    unlimited = {"deserved": NO_LIMIT_WIRE, "limit": NO_LIMIT_WIRE, "overQuotaWeight": 1}
    return [{"gpu": dict(unlimited), "cpu": dict(unlimited), "memory": unlimited | {"units": "MB"}}]
