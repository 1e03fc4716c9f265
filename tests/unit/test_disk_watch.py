"""What a pod's writable layers hold on disk (runtimes/local/disk_watch.py): each file once,
in the blocks it uses, no link followed out of the directories measured."""

from __future__ import annotations

import os
from pathlib import Path

from lockstep.runtimes.local.disk_watch import DiskWatchdog, disk_usage
from tests.support.api import poll

MIB = 2**20


def written(path: Path, size: int) -> None:
    with path.open("wb") as handle:
        handle.write(os.urandom(size))
        handle.flush()
        os.fsync(handle.fileno())


def test_usage_counts_each_file_once_and_follows_no_link(tmp_path: Path) -> None:
    layer, outside = tmp_path / "layer", tmp_path / "outside"
    (layer / "deep" / "er").mkdir(parents=True)
    outside.mkdir()
    written(layer / "deep" / "er" / "a", 2 * MIB)
    os.link(layer / "deep" / "er" / "a", layer / "again")  # the same blocks, counted once
    written(outside / "big", 8 * MIB)
    (layer / "to-big").symlink_to(outside / "big")
    (layer / "to-outside").symlink_to(outside)
    usage = disk_usage([layer])
    assert 2 * MIB <= usage < 3 * MIB
    assert disk_usage([layer, outside]) >= 10 * MIB
    assert disk_usage([tmp_path / "missing"]) == 0


def test_the_watchdog_tells_of_a_pod_past_its_limit_only(tmp_path: Path) -> None:
    small, large = tmp_path / "small", tmp_path / "large"
    small.mkdir()
    large.mkdir()
    written(small / "a", MIB)
    written(large / "a", 4 * MIB)
    told: list[str] = []
    watchdog = DiskWatchdog(told.append, every=0.05)
    try:
        watchdog.watch("small", [small], 2 * MIB)
        watchdog.watch("large", [large], 2 * MIB)
        poll(lambda: told or None, timeout=10, what="the watchdog's verdict")
        watchdog.forget("large")
        assert set(told) == {"large"}
    finally:
        watchdog.close()
