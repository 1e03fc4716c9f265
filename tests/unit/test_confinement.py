"""Pod limits (runtimes/local/sandbox/limits.py): finding the cgroup v2 mount, what a pod's group
gets written, pinning to the least used cores, and the watchdog's view of a real process.

This machine has no cgroup v2 memory or cpu controller, so the group's files are checked in a
directory standing in for a delegated cgroup; the kernel's side is not exercised here."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lockstep.runtimes.local.pod_launch import Limits
from lockstep.runtimes.local.sandbox.limits import (
    Cgroups,
    CpuPinning,
    MemoryWatchdog,
    cgroup1_mount,
    cgroup2_mount,
    sample_processes,
)
from tests.support.api import poll

MOUNTINFO = """\
22 1 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw
30 22 0:26 / /sys/fs/cgroup rw,nosuid shared:9 - tmpfs tmpfs ro,mode=755
35 30 0:30 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw,nsdelegate
36 30 0:31 / /sys/fs/cgroup/memory rw,nosuid shared:11 - cgroup cgroup rw,memory
"""


def test_the_cgroup2_mount_is_found_among_v1_hierarchies() -> None:
    assert cgroup2_mount(MOUNTINFO) == Path("/sys/fs/cgroup/unified")
    assert cgroup2_mount(MOUNTINFO.replace("cgroup2 cgroup2", "tmpfs tmpfs")) is None


def test_a_v1_hierarchy_is_found_by_its_controller() -> None:
    assert cgroup1_mount(MOUNTINFO, "memory") == Path("/sys/fs/cgroup/memory")
    assert cgroup1_mount(MOUNTINFO, "pids") is None


def test_this_machine_confines_without_cgroups() -> None:
    assert Cgroups.open(None) is None


@pytest.fixture
def delegated(tmp_path: Path) -> Path:
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    return tmp_path / "lockstep"


def test_a_delegated_directory_gets_its_controllers_enabled(delegated: Path) -> None:
    cgroups = Cgroups.open(delegated)
    assert cgroups is not None and cgroups.limits_pids
    assert (delegated / "cgroup.subtree_control").read_text() == "+memory +cpu +pids"


def test_a_directory_without_the_pids_controller_limits_no_pids(delegated: Path) -> None:
    (delegated.parent / "cgroup.controllers").write_text("cpu memory\n")
    cgroups = Cgroups.open(delegated)
    assert cgroups is not None and not cgroups.limits_pids
    group = Path(cgroups.create("uid-1", Limits(pids=64), 4242))
    assert not (group / "pids.max").exists()


def test_a_directory_without_the_memory_controller_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu pids\n")
    assert Cgroups.open(tmp_path / "lockstep") is None


def test_a_pod_group_holds_its_limits_and_its_wrapper(delegated: Path) -> None:
    cgroups = Cgroups.open(delegated)
    assert cgroups is not None
    (delegated / "uid-1").mkdir()
    (delegated / "uid-1" / "pids.max").write_text("max")  # the kernel makes it, with pids on
    limits = Limits(memory_bytes=2**30, cpu_cores=1.5, pids=64)
    group = Path(cgroups.create("uid-1", limits, 4242))
    assert group == delegated / "uid-1"
    assert (group / "pids.max").read_text() == "64"
    assert (group / "memory.max").read_text() == str(2**30)
    assert (group / "memory.swap.max").read_text() == "0"
    assert (group / "cpu.max").read_text() == "150000 100000"
    assert (group / "cgroup.procs").read_text() == "4242"
    assert not Cgroups.oom_killed(str(group))
    (group / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert Cgroups.oom_killed(str(group))


def test_pinning_spreads_pods_over_the_least_used_cores() -> None:
    pinning = CpuPinning((0, 1, 2, 3))
    assert pinning.assign("a", 2) == (0, 1)
    assert pinning.assign("b", 1) == (2,)
    assert pinning.assign("c", 2) == (0, 3)
    pinning.forget("a")
    pinning.forget("c")
    assert pinning.assign("d", 3) == (0, 1, 3)
    pinning.restore("e", (0, 1))
    assert pinning.assign("f", 1) == (2,)


@pytest.fixture
def holder() -> Iterator[subprocess.Popen[bytes]]:
    """A process in a session of its own holding 64 MiB, once it says it does."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; b = bytearray(64 * 2**20); b[::4096] = b'x' * len(b[::4096]);"
            " print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"held\n"
    yield process
    process.kill()
    process.wait()
    process.stdout.close()


def test_the_watchdog_sees_a_session_over_its_limit(holder: subprocess.Popen[bytes]) -> None:
    resident = sum(s.resident_bytes for s in sample_processes() if s.session == holder.pid)
    assert resident > 64 * 2**20
    exceeded: list[str] = []
    watchdog = MemoryWatchdog(exceeded.append, every=0.02)
    try:
        watchdog.watch("roomy", holder.pid, 2**30)
        watchdog.watch("tight", holder.pid, 32 * 2**20)
        poll(lambda: exceeded or None, timeout=10, what="the watchdog's verdict")
        assert set(exceeded) == {"tight"}
        watchdog.forget("tight")
        exceeded.clear()
        assert MemoryWatchdog.over_limit({}) == []
    finally:
        watchdog.close()
    assert os.getsid(holder.pid) == holder.pid
