"""What the local runtime's sandbox adds to a pod's start, in one run: the same command
(`/bin/true`, so that the start is all there is) started as lockstep starts a pod without a
sandbox, and inside the sandbox lockstep builds for a pod that asks for a lot (a host path kept
out of this machine's later mounts, as mountPropagation None asks, a claim, a memory emptyDir,
another uid/gid and groups, who reaches lockstep's installation and the workload's directory
through veiled directories where it may not enter them, a read-only root, capabilities, the
default seccomp filter),
interleaved, `--repeats` times each. Target: at most 30 ms per pod.

    .venv/bin/python -m bench.sandbox [--repeats 200]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from lockstep.runtimes.local.sandbox.definition import Identity, Mount, MountKind, SandboxSpec
from lockstep.runtimes.local.sandbox.policy import (
    SECCOMP_FD,
    SandboxPolicy,
    installation,
    seccomp_descriptor,
)
from lockstep.runtimes.local.sandbox.probe import probe

COMMAND = ["/bin/true"]


def timed(argv: list[str], *, seccomp: bool) -> float:
    start = time.perf_counter()
    descriptor = seccomp_descriptor(()) if seccomp else None
    try:
        subprocess.run(
            argv,
            check=True,
            pass_fds=() if descriptor is None else (SECCOMP_FD,),
            preexec_fn=None if descriptor is None else (lambda: os.dup2(descriptor, SECCOMP_FD)),
        )
    finally:
        if descriptor is not None:
            os.close(descriptor)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=200)
    options = parser.parse_args()
    sandboxing = probe()
    if not sandboxing.available or sandboxing.bwrap is None:
        raise SystemExit(f"no sandbox here: {sandboxing.problem}")
    root = Path(tempfile.mkdtemp(prefix="lockstep-bench-sandbox-", dir="/var/tmp"))
    try:
        for name in ("workload", "data", "claim", "mnt/data", "mnt/claim", "mnt/fast"):
            (root / name).mkdir(parents=True)
        identity = Identity(1000, 1000, (2000,))
        policy = SandboxPolicy(
            sandboxing, root / "claim", root / "memory", os.geteuid(), installation=installation()
        )
        spec = SandboxSpec(
            mounts=(
                Mount(str(root / "workload"), source=str(root / "workload")),
                *policy.reachable(identity, str(root / "workload")),
                Mount(str(root / "mnt/data"), source=str(root / "data"), read_only=True),
                Mount(str(root / "mnt/claim"), source=str(root / "claim")),
                Mount(str(root / "mnt/fast"), MountKind.TMPFS, size_bytes=64 * 2**20),
            ),
            read_only_root=True,
            identity=identity,
            capabilities=("CHOWN",),
            seccomp=True,
            private_sources=(str(root / "data"),),
        )
        sandboxed = sandboxing.command(spec, COMMAND, seccomp_fd=SECCOMP_FD)
        minimal = sandboxing.command(SandboxSpec(), COMMAND)
        runs: dict[str, list[float]] = {"without a sandbox": [], "plain sandbox": [], "full": []}
        for argv, seccomp in ((COMMAND, False), (minimal, False), (sandboxed, True)):
            timed(argv, seccomp=seccomp)  # warm-up
        for _ in range(options.repeats):
            runs["without a sandbox"].append(timed(COMMAND, seccomp=False))
            runs["plain sandbox"].append(timed(minimal, seccomp=False))
            runs["full"].append(timed(sandboxed, seccomp=True))
        floor = statistics.median(runs["without a sandbox"])
        print(f"{'start of /bin/true':24} {'median ms':>10} {'p90 ms':>8} {'added ms':>9}")
        for name, values in runs.items():
            median = statistics.median(values)
            p90 = statistics.quantiles(values, n=10)[-1]
            print(
                f"{name:24} {median * 1000:10.2f} {p90 * 1000:8.2f} {(median - floor) * 1000:9.2f}"
            )

    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
