"""What the local runtime's sandbox adds to a pod's start, in one run: the same command
(`/bin/true`, so that the start is all there is) started as lockstep starts a pod without a
sandbox; in a bare sandbox (pid namespace, this machine's root); in the sandbox of a pod that
asks for nothing (a container's defaults: its capabilities, the default seccomp filter, a pid
namespace, a root of its own overlaid on this machine's, lockstep's data directory veiled with
the workload's directory bound back); and in the sandbox of a pod that asks for a lot (the same,
plus a host path kept out of this machine's later mounts, as mountPropagation None asks, a
claim, a memory emptyDir, another uid/gid and groups, who reaches lockstep's installation and
the workload's directory through veiled directories where it may not enter them, an added
capability), interleaved, `--repeats` times each. A root layer is removed before each start, as
the runtime does. Target: at most 30 ms per pod.

    .venv/bin/python -m bench.sandbox [--repeats 200]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from lockstep.runtimes.local.sandbox.definition import (
    Identity,
    Mount,
    MountKind,
    RootLayer,
    SandboxSpec,
    veil,
)
from lockstep.runtimes.local.sandbox.policy import (
    CONTAINER_CAPABILITIES,
    SECCOMP_FD,
    SandboxPolicy,
    fresh_root_layer,
    installation,
    seccomp_descriptor,
)
from lockstep.runtimes.local.sandbox.probe import probe

COMMAND = ["/bin/true"]


def timed(argv: list[str], *, seccomp: bool, layer: RootLayer | None = None) -> float:
    start = time.perf_counter()
    if layer is not None:
        fresh_root_layer(layer)
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
    root = Path(tempfile.mkdtemp(prefix="lockstep-bench-sandbox-", dir="/var/tmp"))
    sandboxing = probe(scratch=root)
    if not sandboxing.available or sandboxing.bwrap is None:
        raise SystemExit(f"no sandbox here: {sandboxing.problem}")
    if sandboxing.layers is None:
        raise SystemExit(f"no root of a pod's own here: {sandboxing.layer_problem}")
    try:
        data_dir = root / "lockstep-data"
        workload = data_dir / "runtime" / "local" / "w"
        for path in (workload, root / "data", root / "claim", root / "mnt"):
            path.mkdir(parents=True)
        layer = workload / "pod" / "rootfs"
        identity = Identity(1000, 1000, (2000,))
        policy = SandboxPolicy(
            sandboxing, root / "claim", root / "memory", os.geteuid(), installation=installation()
        )
        defaults = SandboxSpec(
            mounts=(
                veil(str(data_dir)),
                Mount(str(workload), source=str(workload)),
                veil(str(layer)),
            ),
            root_layer=RootLayer(str(layer), sandboxing.layers),
            capabilities=CONTAINER_CAPABILITIES,
            seccomp=True,
        )
        full = dataclasses.replace(
            defaults,
            mounts=(
                *defaults.mounts,
                *policy.reachable(identity, str(workload)),
                Mount(str(root / "mnt/data"), source=str(root / "data"), read_only=True),
                Mount(str(root / "mnt/claim"), source=str(root / "claim")),
                Mount(str(root / "mnt/fast"), MountKind.TMPFS, size_bytes=64 * 2**20),
            ),
            identity=identity,
            capabilities=(*CONTAINER_CAPABILITIES, "SYS_PTRACE"),
            ambient_capabilities=("SYS_PTRACE",),
            private_sources=(str(root / "data"),),
        )
        own_root = defaults.root_layer
        variants: dict[str, tuple[list[str], bool, RootLayer | None]] = {
            "without a sandbox": (COMMAND, False, None),
            "bare sandbox": (sandboxing.command(SandboxSpec(), COMMAND), False, None),
            "a pod asking nothing": (
                sandboxing.command(defaults, COMMAND, seccomp_fd=SECCOMP_FD),
                True,
                own_root,
            ),
            "full": (sandboxing.command(full, COMMAND, seccomp_fd=SECCOMP_FD), True, own_root),
        }
        runs: dict[str, list[float]] = {name: [] for name in variants}
        for argv, seccomp, own in variants.values():
            timed(argv, seccomp=seccomp, layer=own)  # warm-up
        for _ in range(options.repeats):
            for name, (argv, seccomp, own) in variants.items():
                runs[name].append(timed(argv, seccomp=seccomp, layer=own))
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
