"""HTTP throughput and latency of lockstep under wrk (8 connections on loopback): GET of one
workload by id, the first page of the workload list, and creation of workloads that stay
Pending — on SQLite and on PostgreSQL, side by side, in one run.

    .venv/bin/python -m bench.http [--seconds 10] [--backends sqlite,postgresql]

Targets on a 2-core machine with SQLite: GET ≥ 1,000/s with p99 ≤ 20 ms; create ≥ 300/s with
p99 ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from bench.harness import Server, server, store, wrk

SEEDED = 1000
"""Workloads created before measuring, so that the list and the store are not empty."""


def pending_request(cluster_id: str, name: str) -> dict[str, object]:
    return {
        "name": name,
        "projectId": "1",
        "clusterId": cluster_id,
        "spec": {
            "image": "python:3.11",
            "distributedFramework": "PyTorch",
            "numWorkers": 2,
            "command": "python3",
            "args": "train.py",
            "compute": {"cpuCoreRequest": 100000},
        },
    }


def seed(running: Server) -> str:
    """Create the seed workloads and wait until the reconciler has placed every one of them
    (so that it is idle when measuring starts). Returns the first one's id."""
    first = ""
    for index in range(SEEDED):
        created = running.call(
            "POST",
            "/api/v1/workloads/distributed",
            pending_request(running.cluster_id, f"seed-{index}"),
        )
        first = first or created["workloadId"]
    deadline = time.monotonic() + 120
    while running.call("GET", "/api/v1/workloads/count?filterBy=phase==Creating")["count"]:
        if time.monotonic() > deadline:
            raise RuntimeError("the seeded workloads were not all scheduled within 120 s")
        time.sleep(0.2)
    return first


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--backends", default="sqlite,postgresql")
    options = parser.parse_args()
    results: dict[str, dict[str, dict[str, float]]] = {}
    print(f"{'backend':11} {'scenario':8} {'req/s':>10} {'p50 ms':>9} {'p99 ms':>9} {'errors':>7}")
    for backend in options.backends.split(","):
        with store(backend) as url, server(url) as running:
            workload_id = seed(running)
            scenarios = {
                "get": ("get.lua", {"WORKLOAD_ID": workload_id}),
                "list": ("list.lua", {}),
                "create": ("create.lua", {"RUN": f"bench-{int(time.time())}"}),
            }
            results[backend] = {}
            for scenario, (script, env) in scenarios.items():
                result = wrk(
                    running,
                    script,
                    seconds=options.seconds,
                    connections=options.connections,
                    threads=options.threads,
                    env=env,
                )
                results[backend][scenario] = result.__dict__
                print(f"{backend:11} {scenario:8} {result.row()}", flush=True)
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    record = {
        "machine": platform.node(),
        "cpus": __import__("os").cpu_count(),
        "options": vars(options),
        "results": results,
    }
    (out / f"http-{int(time.time())}.json").write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
