"""How long the `lockstep` command takes to start, side by side with a bare interpreter, in one
run: `python -c pass` (the floor), `lockstep --help`, and `lockstep training list` against a
running server holding 20 workloads (it logs in with a token from LOCKSTEP_TOKEN, lists them
and prints the table). Each is run `--repeats` times, interleaved, after one warm-up, with
bytecode cached as it is for an installed package.

    .venv/bin/python -m bench.cli_startup [--repeats 20]

Target: at most 250 ms added to the bare interpreter's start.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.harness import server

LOCKSTEP = [sys.executable, "-m", "lockstep"]


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=20)
    options = parser.parse_args()
    with server(None) as running:
        clusters = running.call("GET", "/api/v1/clusters")
        for i in range(20):
            body = {
                "name": f"listed-{i}",
                "projectId": "1",
                "clusterId": clusters[0]["uuid"],
                "spec": {
                    "distributedFramework": "PyTorch",
                    "numWorkers": 1,
                    "image": "x",
                    "command": "true",
                    "compute": {"cpuCoreRequest": 100000},
                },
            }
            running.call("POST", "/api/v1/workloads/distributed", body)
        # Bytecode is cached, as it is for an installed package (the warm-up writes it).
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("LOCKSTEP_") and k != "PYTHONDONTWRITEBYTECODE"
        }
        env |= {
            "LOCKSTEP_URL": running.url,
            "LOCKSTEP_TOKEN": running.token,
            "LOCKSTEP_CONFIG": str(Path(running.data_dir) / "cli-config.json"),
        }
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "lockstep --help": [*LOCKSTEP, "--help"],
            "lockstep training list": [*LOCKSTEP, "training", "list"],
        }
        for argv in commands.values():
            timed(argv, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(options.repeats):
            for name, argv in commands.items():
                times[name].append(timed(argv, env))
    floor = statistics.median(times["python -c pass"])
    print(f"{'command':26} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'added ms':>9}")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:26} {median * 1000:10.0f} {min(values) * 1000:8.0f} {max(values) * 1000:8.0f}"
            f" {(median - floor) * 1000:9.0f}"
        )


if __name__ == "__main__":
    main()
