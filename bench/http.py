"""HTTP throughput and latency of lockstep under wrk (8 connections on loopback): GET of one
workload by id, the first page of the workload list, and creation of workloads that stay
Pending — on SQLite and on PostgreSQL, side by side, in one run.

    .venv/bin/python -m bench.http [--seconds 10] [--backends sqlite,postgresql]
        [--scenarios get,list,create] [--baseline REF] [--api-processes 1,2]

`--baseline REF` also measures the lockstep of that git revision, each backend's servers one
after the other in the same run. `--api-processes` measures the working tree's lockstep on
PostgreSQL once with each number of API processes (LOCKSTEP_API_PROCESSES); the baseline runs
with one.

Targets on a 2-core machine with SQLite: GET ≥ 1,000/s with p99 ≤ 20 ms; create ≥ 300/s with
p99 ≤ 50 ms; the list (50 a page) ≥ 600/s, and ≥ 400/s with PostgreSQL.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from bench.harness import Server, analyze, never_fitting, revisions, server, store, wrk

SEEDED = 1000
"""Workloads created before measuring, so that the list and the store are not empty."""


def pending_request(cluster_id: str, name: str) -> dict[str, object]:
    """A 1 master + 2 workers PyTorch workload that stays Pending."""
    return never_fitting(cluster_id, name, distributedFramework="PyTorch", numWorkers=2)


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
    parser.add_argument("--scenarios", default="get,list,create")
    parser.add_argument("--baseline", metavar="REF", help="also the lockstep of this revision")
    parser.add_argument(
        "--api-processes",
        default="1",
        metavar="N,...",
        help="on PostgreSQL, the working tree's lockstep with each of these API processes",
    )
    options = parser.parse_args()
    results: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    print(
        f"{'code':9} {'backend':11} {'scenario':8} {'req/s':>10} {'p50 ms':>9} {'p99 ms':>9}"
        f" {'errors':>7}"
    )
    counts = [int(count) for count in options.api_processes.split(",")]
    with revisions(options.baseline) as sources:
        for backend in options.backends.split(","):
            for code, source in sources.items():
                several = backend == "postgresql" and source is None
                for processes in counts if several else [1]:
                    name = backend if processes == 1 else f"{backend}-{processes}p"
                    results.setdefault(code, {})[name] = measure(
                        backend,
                        source,
                        options,
                        processes=processes,
                        label=f"{code[:9]:9} {name:11}",
                    )
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    record = {
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "options": vars(options),
        "results": results,
    }
    (out / f"http-{int(time.time())}.json").write_text(json.dumps(record, indent=2))


def measure(
    backend: str,
    source: Path | None,
    options: argparse.Namespace,
    *,
    processes: int,
    label: str,
) -> dict[str, dict[str, float]]:
    """Each scenario asked, on a fresh server of `backend` running the lockstep at `source`
    with `processes` API processes."""
    results = {}
    # Seeds 1,000 workloads in one project and creates as many as it can: no per-project limit.
    settings = {"LOCKSTEP_MAX_WORKLOADS_PER_PROJECT": "0"}
    if processes > 1:
        settings["LOCKSTEP_API_PROCESSES"] = str(processes)
    with store(backend) as url, server(url, source=source, settings=settings) as running:
        workload_id = seed(running)
        analyze(url)
        scenarios = {
            "get": ("get.lua", {"WORKLOAD_ID": workload_id}),
            "list": ("list.lua", {}),
            "create": ("create.lua", {"RUN": f"bench-{int(time.time())}"}),
        }
        for scenario in options.scenarios.split(","):
            script, env = scenarios[scenario]
            result = wrk(
                running,
                script,
                seconds=options.seconds,
                connections=options.connections,
                threads=options.threads,
                env=env,
            )
            results[scenario] = result.__dict__
            print(f"{label} {scenario:8} {result.row()}", flush=True)
    return results


if __name__ == "__main__":
    main()
