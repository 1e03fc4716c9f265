"""Recent usage for time-aware fair share: a decayed average of what each project held."""

from __future__ import annotations

import pytest

from lockstep.domain.quotas import Resource
from lockstep.reconciler.recent_usage import RecentUsage

GPU = Resource.GPU
CAPACITY = {"default": {GPU: 16.0, Resource.CPU: 0.0, Resource.MEMORY: 0.0}}


def test_what_was_held_a_half_life_ago_counts_half() -> None:
    usage = RecentUsage(half_life_seconds=100)
    usage.observe({}, CAPACITY, now=0)
    usage.observe({"a": {"default": {GPU: 16.0}}}, CAPACITY, now=100)
    assert usage.averages["a"]["default"][GPU] == pytest.approx(0.5)
    usage.observe({"a": {"default": {GPU: 16.0}}}, CAPACITY, now=200)
    assert usage.averages["a"]["default"][GPU] == pytest.approx(0.75)
    # Let go: the average decays toward zero, then is forgotten.
    usage.observe({}, CAPACITY, now=300)
    assert usage.averages["a"]["default"][GPU] == pytest.approx(0.375)
    usage.observe({}, CAPACITY, now=300 + 100 * 30)
    assert "a" not in usage.averages


def test_shares_are_fractions_of_the_pool_and_no_capacity_counts_nothing() -> None:
    usage = RecentUsage(half_life_seconds=1)
    usage.observe({}, CAPACITY, now=0)
    usage.observe({"a": {"default": {GPU: 64.0, Resource.CPU: 5.0}}}, CAPACITY, now=1e6)
    assert usage.averages["a"]["default"][GPU] == pytest.approx(1.0)  # never past the pool
    assert usage.averages["a"]["default"][Resource.CPU] == 0.0  # the pool has no CPU to share
