"""What a workload's network of its own costs, side by side with this machine's network, in
one run:

- **making it**, once per workload: the namespace bound to a file, and pasta started in it;
- **a pod's start**: `/bin/true` in the sandbox of a pod that asks for nothing, in this
  machine's network and in the workload's (nsenter in front of bwrap), interleaved,
  `--repeats` times each;
- **allreduce between two ranks**: torch's gloo all_reduce of a `--megabytes` float32 tensor
  between two processes, `--iterations` times after a warm-up, both in this machine's network
  and both in the workload's (where they talk over its loopback), `--rounds` rounds
  alternating.

    .venv/bin/python -m bench.network [--repeats 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lockstep.runtimes.local import network
from lockstep.runtimes.local.sandbox.definition import SandboxSpec
from lockstep.runtimes.local.sandbox.probe import probe

RANK = """
import os, sys, time, torch, torch.distributed as dist
dist.init_process_group(backend="gloo")
tensor = torch.ones(int(sys.argv[1]) * 2**20 // 4)
for _ in range(3):
    dist.all_reduce(tensor)
dist.barrier()
start = time.perf_counter()
for _ in range(int(sys.argv[2])):
    dist.all_reduce(tensor)
elapsed = time.perf_counter() - start
if dist.get_rank() == 0:
    print(int(sys.argv[1]) * int(sys.argv[2]) / elapsed)
dist.destroy_process_group()
"""


def free_port() -> int:
    with socket.socket() as probe_socket:
        probe_socket.bind(("127.0.0.1", 0))
        return int(probe_socket.getsockname()[1])


def start_times(argv: list[str], repeats: int) -> list[float]:
    found = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, check=True)
        found.append(time.perf_counter() - start)
    return found


def allreduce(prefix: list[str], megabytes: int, iterations: int) -> float:
    """MB/s of the all_reduce between two ranks, each started behind `prefix`."""
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}
    env["WORLD_SIZE"] = "2"
    ranks = [
        subprocess.Popen(
            [*prefix, sys.executable, "-c", RANK, str(megabytes), str(iterations)],
            env={**env, "RANK": str(rank)},
            stdout=subprocess.PIPE,
            text=True,
        )
        for rank in range(2)
    ]
    outputs = [rank.communicate(timeout=600)[0] for rank in ranks]
    if any(rank.returncode for rank in ranks):
        raise SystemExit(f"a rank failed: {outputs}")
    return float(outputs[0].strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--megabytes", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=20)
    options = parser.parse_args()
    networking = network.probe()
    sandboxing = probe(try_layers=False)
    if not networking.available or not sandboxing.available:
        raise SystemExit(f"not here: {networking.problem or sandboxing.problem}")
    root = Path(tempfile.mkdtemp(prefix="lockstep-bench-network-", dir="/var/tmp"))
    try:
        made = []
        for index in range(5):
            workload = root / f"w{index}"
            workload.mkdir()
            start = time.perf_counter()
            network.ensure(networking, workload, [])
            made.append(time.perf_counter() - start)
        workload = root / "w0"
        spec = SandboxSpec(seccomp=False, private_ipc=True)
        own = SandboxSpec(seccomp=False, network=str(network.namespace(workload)))
        host_line = sandboxing.command(spec, ["/bin/true"])
        own_line = sandboxing.command(own, ["/bin/true"])
        start_times(host_line, 3)
        start_times(own_line, 3)
        host_starts: list[float] = []
        own_starts: list[float] = []
        for _ in range(options.repeats):
            host_starts += start_times(host_line, 1)
            own_starts += start_times(own_line, 1)
        host_rates: list[float] = []
        own_rates: list[float] = []
        enter = network.enter(networking, workload)
        for _ in range(options.rounds):
            host_rates.append(allreduce([], options.megabytes, options.iterations))
            own_rates.append(allreduce(enter, options.megabytes, options.iterations))
        print(f"making a workload's network: median {statistics.median(made) * 1000:.1f} ms")
        print(f"{'pod start (/bin/true)':28} {'median ms':>10} {'p90 ms':>8}")
        for name, values in (("this machine's network", host_starts), ("its own", own_starts)):
            p90 = statistics.quantiles(values, n=10)[-1]
            print(f"{name:28} {statistics.median(values) * 1000:10.2f} {p90 * 1000:8.2f}")
        print(f"{'allreduce, 2 ranks':28} {'median MB/s':>12} {'min':>8} {'max':>8}")
        for name, rates in (("this machine's network", host_rates), ("its own", own_rates)):
            print(f"{name:28} {statistics.median(rates):12.0f} {min(rates):8.0f} {max(rates):8.0f}")
    finally:
        for workload in root.iterdir():
            network.release(workload)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
