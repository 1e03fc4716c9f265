"""The default seccomp filter for real: bwrap loads it from the descriptor `filter_fd` makes,
and a Python process inside tries denied calls (they fail with EPERM, clone3 with ENOSYS),
and ordinary work (files, threads, subprocesses) keeps working."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Collection
from typing import Any

import pytest

from lockstep.runtimes.local.sandbox.policy import installation
from lockstep.runtimes.local.sandbox.seccomp import (
    SYSCALL_NUMBERS,
    default_filter,
    filter_fd,
    machine,
)

BWRAP = shutil.which("bwrap")

PROBE = r"""
import ctypes, errno, json, os, subprocess, sys, threading
from concurrent.futures import ThreadPoolExecutor

numbers = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)


def call(name, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(numbers[name]), *(ctypes.c_long(a) for a in args))
    return errno.errorcode.get(ctypes.get_errno(), "OK") if result == -1 else "OK"


def clone_new_user():
    pid = libc.syscall(ctypes.c_long(numbers["clone"]), ctypes.c_long(0x10000000 | 17),
                       *(ctypes.c_long(0) for _ in range(4)))
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
        return "OK"
    return errno.errorcode[ctypes.get_errno()]


status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
results = {
    "seccomp": status["Seccomp"].strip(),
    "clone_newuser": clone_new_user(),  # first: once in a new user namespace, it would fail
    "unshare": call("unshare", 0x10000000),
    "keyctl": call("keyctl", 0, -3, 0),
    "ptrace": call("ptrace", 2, 0x7FFFFFFF, 0, 0),
    "clone3": call("clone3", 0, 0),
    "personality_no_aslr": call("personality", 0x0040000),
    "personality_query": call("personality", 0xFFFFFFFF),
    "vsock": call("socket", 40, 1, 0),
}
with open("/tmp/data", "w") as f:
    f.write("written")
with open("/tmp/data") as f:
    results["file"] = f.read()
with ThreadPoolExecutor(4) as pool:
    results["threads"] = sum(pool.map(lambda n: n * n, range(10)))
results["subprocess"] = subprocess.run(["sh", "-c", "echo from a child"], capture_output=True,
                                       text=True).stdout.strip()
print(json.dumps(results))
"""


def sandboxed(
    script: str, *args: str, capabilities: Collection[str] = ()
) -> subprocess.CompletedProcess[str]:
    """`python -c script args` inside bwrap with the default filter."""
    assert BWRAP is not None
    fd = filter_fd(default_filter(capabilities=capabilities))
    try:
        line = [BWRAP, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        for path in installation():  # the interpreter may live under /tmp
            if path.startswith("/tmp/"):
                line += ["--ro-bind", path, path]
        line += ["--seccomp", str(fd), "--", sys.executable, "-c", script]
        return subprocess.run(
            [*line, *args], pass_fds=(fd,), capture_output=True, text=True, timeout=60, check=False
        )
    finally:
        os.close(fd)  # bwrap has its own copy, read and closed before the script runs


@pytest.fixture(scope="module")
def numbers() -> str:
    """The syscall numbers of this machine, for the probe (bwrap is installed by the project's
    set-up: the tests need it)."""
    if BWRAP is None:
        pytest.fail("bubblewrap (bwrap) is not installed: run scripts/install test")
    trial = subprocess.run(
        [BWRAP, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    if trial.returncode != 0:
        pytest.fail(f"bwrap cannot create a sandbox here: {trial.stderr.strip()}")
    return json.dumps(SYSCALL_NUMBERS[machine()])


def probe(numbers: str, *, capabilities: Collection[str] = ()) -> dict[str, Any]:
    done = sandboxed(PROBE, numbers, capabilities=capabilities)
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout)
    return results


def test_privileged_calls_are_denied_and_ordinary_work_runs(numbers: str) -> None:
    results = probe(numbers)
    assert results == {
        "seccomp": "2",  # filter mode
        "unshare": "EPERM",
        "keyctl": "EPERM",
        "ptrace": "EPERM",
        "clone3": "ENOSYS",
        "clone_newuser": "EPERM",
        "personality_no_aslr": "EPERM",
        "personality_query": "OK",
        "vsock": "EPERM",
        "file": "written",
        "threads": 285,
        "subprocess": "from a child",
    }


def test_a_kept_capability_lifts_its_calls(numbers: str) -> None:
    results = probe(numbers, capabilities=("SYS_PTRACE",))
    assert results["ptrace"] == "ESRCH"  # past the filter: the kernel finds no such process
    assert results["unshare"] == "EPERM"


def test_unshare_command_fails(numbers: str) -> None:
    script = (
        "import subprocess, sys; sys.exit(subprocess.run(['unshare', '-U', 'true']).returncode)"
    )
    done = sandboxed(script)
    assert done.returncode != 0
    assert "Operation not permitted" in done.stderr


@pytest.mark.skipif(machine() != "x86_64", reason="x32 is an x86_64 ABI")
def test_an_x32_call_kills_the_process(numbers: str) -> None:
    x32_getpid = 0x40000000 | 39
    script = f"import ctypes; ctypes.CDLL(None).syscall({x32_getpid}); print('alive')"
    done = sandboxed(script)
    assert "alive" not in done.stdout
    assert done.returncode in (128 + signal.SIGSYS, -signal.SIGSYS)
