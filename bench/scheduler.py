"""One scheduling cycle of the pure scheduler (`scheduler.cycle.schedule`) on a synthetic cluster.

The cluster is generated from a seed: nodes of 8 GPUs, 128 CPU cores and 1Ti of memory in 4
node pools; 20 departments and 200 projects whose GPU deserved shares add up to each pool's
GPUs (passed to `schedule` as `organization=`, each running and pending gang in one of the
projects at random; a baseline from before quotas sees one queue); running workloads (gangs of
1-4 pods of 1 GPU, already placed: the snapshot) and pending gangs of 1-64 pods, each pod
asking 1, 2, 4 or 8 whole GPUs and 8 cores per GPU in one pool. Measured: building the snapshot
(the nodes indexed and the running workloads counted), the cycle (`schedule` on the pending
gangs, the could-ever-fit judgement of each included, on a node list it has not seen, as each
reconciler cycle's is), the pods it admitted and pods per second; then the same gangs admitted
on an idle cluster until it is full.

    .venv/bin/python -m bench.scheduler                   # target, growth tables
    .venv/bin/python -m bench.scheduler --quick           # small sizes only
    .venv/bin/python -m bench.scheduler --baseline REF    # also REF's scheduler, side by side

`--baseline` imports the scheduler of a git revision (`git show REF:src/lockstep/scheduler/…`)
from a temporary copy and runs it on the same clusters, at the sizes where it takes under a
minute (`--baseline-max-work`, nodes times pending gangs).

Target (2 cores): at 1,000 nodes, 2,000 running and 10,000 pending, one cycle ≤ 0.5 s and
admission ≥ 2,000 pods/s.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

from lockstep.domain.cluster import Gpu, Node

POOLS = 4
GPUS_PER_NODE = 8
CORES_PER_GPU = 8
DEPARTMENTS = 20
PROJECTS = 200
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Quota:
    """A project's or a department's GPU quota in one pool (deserved, limit -1: none)."""

    pool: str
    deserved: int
    limit: int = -1
    over_quota_weight: int = 1


@dataclass(frozen=True)
class OrgUnit:
    name: str
    parent: str | None
    quotas: tuple[Quota, ...]


def organization(nodes: int, seed: int) -> list[OrgUnit]:
    """20 departments, 200 projects; in each pool the projects' deserved GPUs add up to the
    pool's GPUs, and each department deserves what its projects do."""
    rng = random.Random(seed)
    per_pool = nodes // POOLS * GPUS_PER_NODE
    units: list[OrgUnit] = []
    project_quotas: dict[int, list[Quota]] = {p: [] for p in range(PROJECTS)}
    for pool in range(POOLS):
        weights = [rng.randint(1, 10) for _ in range(PROJECTS)]
        shares = [per_pool * w // sum(weights) for w in weights]
        shares[0] += per_pool - sum(shares)
        for project, share in enumerate(shares):
            project_quotas[project].append(Quota(f"pool-{pool}", share, -1, rng.randint(1, 3)))
    for department in range(DEPARTMENTS):
        members = range(department, PROJECTS, DEPARTMENTS)
        quotas = tuple(
            Quota(f"pool-{pool}", sum(project_quotas[p][pool].deserved for p in members))
            for pool in range(POOLS)
        )
        units.append(OrgUnit(f"department-{department}", None, quotas))
    for project in range(PROJECTS):
        units.append(
            OrgUnit(
                f"project-{project}",
                f"department-{project % DEPARTMENTS}",
                tuple(project_quotas[project]),
            )
        )
    return units


def cluster(count: int) -> list[Node]:
    return [
        Node(
            f"node-{i}",
            f"pool-{i % POOLS}",
            Decimal(GPUS_PER_NODE * CORES_PER_GPU * 2),
            Decimal(2**40),
            tuple(Gpu(g) for g in range(GPUS_PER_NODE)),
        )
        for i in range(count)
    ]


@dataclass
class Scenario:
    nodes: list[Node]
    running: list[Any]
    """Holders, placed."""
    pending: list[Any]
    """Candidates, in queue order."""
    units: list[OrgUnit]


def scenario(sched: ModuleType, nodes: int, running: int, pending: int, seed: int) -> Scenario:
    """The cluster, built with the scheduler's names `sched` (see `NAMES`), running workloads
    placed on it."""
    rng = random.Random(seed)
    node_list = cluster(nodes)
    usage = sched.Usage(node_list)
    holders = []
    for index in range(running):
        pool = f"pool-{rng.randrange(POOLS)}"
        needs = [
            sched.PodNeed(
                f"run-{index}-{p}",
                cpu=Decimal(CORES_PER_GPU),
                gpu=sched.GpuNeed(devices=1),
                selector=sched.Selector(pools=(pool,)),
            )
            for p in range(rng.randint(1, 4))
        ]
        placed = sched.place(usage, needs)
        if isinstance(placed, dict):
            holders.append(
                sched.Holder(
                    f"run-{index}",
                    f"run-{index}",
                    needs,
                    placed,
                    preemptible=True,
                    **_project_of(sched.Holder, rng),
                )
            )
    candidates = []
    for index in range(pending):
        gpus = rng.choice((1, 2, 4, 8))
        need = sched.PodNeed(
            "",
            cpu=Decimal(CORES_PER_GPU * gpus),
            gpu=sched.GpuNeed(devices=gpus),
            selector=sched.Selector(pools=(f"pool-{rng.randrange(POOLS)}",)),
        )
        size = rng.randint(1, 64)
        names = sched.NumberedNames(f"gang-{index}-worker-", 0, size)
        gang = sched.GangShape((sched.PodGroup(need, names),))
        candidates.append(
            sched.Candidate(
                f"gang-{index}",
                f"gang-{index}",
                gang,
                **_project_of(sched.Candidate, rng),
            )
        )
    return Scenario(node_list, holders, candidates, organization(nodes, seed))


def _project_of(kind: type, rng: random.Random) -> dict[str, str]:
    """A random project, for a scheduler whose gangs belong to projects."""
    if "project_id" not in inspect.signature(kind).parameters:
        return {}
    return {"project_id": f"project-{rng.randrange(PROJECTS)}"}


def as_organization(sched: ModuleType, units: list[OrgUnit]) -> Any:
    """The scheduler's own organization (scheduler/quota/organization.py) of the generated
    units."""
    from lockstep.domain.quotas import quotas_of

    def quotas(unit: OrgUnit) -> Any:
        return quotas_of(
            [
                {
                    "nodePool": {"id": q.pool, "name": q.pool},
                    "gpu": {
                        "deserved": q.deserved,
                        "limit": q.limit,
                        "overQuotaWeight": q.over_quota_weight,
                    },
                }
                for q in unit.quotas
            ]
        )

    return sched.Organization(
        departments={
            u.name: sched.OrgUnit(u.name, u.name, quotas(u)) for u in units if u.parent is None
        },
        projects={
            u.name: sched.OrgUnit(u.name, u.name, quotas(u), parent=u.parent)
            for u in units
            if u.parent is not None
        },
    )


def snapshot(sched: ModuleType, world: Scenario) -> tuple[Any, float]:
    """What the reconciler builds before a cycle: usage of a fresh node list, holders counted."""
    started = time.perf_counter()
    usage = sched.Usage(list(world.nodes))
    for holder in world.running:
        usage.hold(holder.needs, holder.placement)
    return usage, time.perf_counter() - started


def one_cycle(sched: ModuleType, world: Scenario, usage: Any) -> tuple[float, int, int]:
    """Seconds, gangs admitted, pods admitted."""
    schedule = sched.schedule
    extra: dict[str, Any] = {}
    if "organization" in inspect.signature(schedule).parameters:
        extra["organization"] = as_organization(sched, world.units)
    started = time.perf_counter()
    decisions = schedule(usage, world.pending, world.running, **extra)
    seconds = time.perf_counter() - started
    pods = sum(len(placed) for placed in decisions.admitted.values())
    return seconds, len(decisions.admitted), pods


def measure(
    sched: ModuleType, nodes: int, running: int, pending: int, *, seed: int, repeats: int
) -> dict[str, Any]:
    world = scenario(sched, nodes, running, pending, seed)
    rows = []
    for _ in range(repeats):
        usage, built = snapshot(sched, world)
        seconds, gangs, pods = one_cycle(sched, world, usage)
        idle, _ = snapshot(sched, Scenario(world.nodes, [], world.pending, world.units))
        fill_seconds, _, fill_pods = one_cycle(
            sched, Scenario(world.nodes, [], world.pending, world.units), idle
        )
        rows.append((seconds, built, gangs, pods, fill_seconds, fill_pods))
    rows.sort()
    seconds, built, gangs, pods, fill_seconds, fill_pods = rows[len(rows) // 2]
    return {
        "nodes": nodes,
        "running": running,
        "pending": pending,
        "snapshot_s": round(built, 4),
        "cycle_s": round(seconds, 4),
        "admitted_gangs": gangs,
        "admitted_pods": pods,
        "pods_per_s": round(pods / seconds) if seconds else 0,
        "fill_s": round(fill_seconds, 4),
        "fill_pods": fill_pods,
        "fill_pods_per_s": round(fill_pods / fill_seconds) if fill_seconds else 0,
    }


def current() -> ModuleType:
    return _namespace("lockstep.scheduler")


NAMES: dict[str, tuple[str, ...]] = {
    "schedule": ("cycle",),
    "Candidate": ("gang.candidates", "cycle"),
    "Holder": ("gang.candidates", "cycle"),
    "Usage": ("nodes.usage", "placement"),
    "place": ("nodes.placement", "placement"),
    "PodNeed": ("gang.needs", "placement"),
    "GpuNeed": ("gang.needs", "placement"),
    "Selector": ("gang.selectors", "selectors"),
    "NumberedNames": ("gang.shape", "shape"),
    "PodGroup": ("gang.shape", "shape"),
    "GangShape": ("gang.shape", "shape"),
    "Organization": ("quota.organization", "snapshot"),
    "OrgUnit": ("quota.organization", "snapshot"),
}
"""Each name the benchmark uses → the scheduler's modules that may hold it: where it is now
first, then where a scheduler of before its subpackages (quota, nodes, gang) kept it."""


def _namespace(package: str) -> ModuleType:
    space = ModuleType(package)
    for name, modules in NAMES.items():
        for module in modules:
            try:
                found = importlib.import_module(f"{package}.{module}")
            except ModuleNotFoundError:
                continue
            if hasattr(found, name):
                setattr(space, name, getattr(found, name))
                break
    # A baseline from before quotas has no organization (as_organization is then not used).
    return space


def baseline(ref: str) -> ModuleType:
    """The scheduler of git revision `ref`, imported from a temporary copy as its own package."""
    directory = Path(tempfile.mkdtemp(prefix="lockstep-bench-scheduler-"))
    package = directory / "baseline_scheduler"
    package.mkdir()
    listing = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", f"{ref}:src/lockstep/scheduler"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in listing:
        if not name.endswith(".py"):
            continue
        text = subprocess.run(
            ["git", "show", f"{ref}:src/lockstep/scheduler/{name}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        target = package / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(re.sub(r"\blockstep\.scheduler\b", "baseline_scheduler", text))
    sys.path.insert(0, str(directory))
    return _namespace("baseline_scheduler")


def row(label: str, result: dict[str, Any]) -> str:
    return (
        f"| {label} | {result['nodes']:,} | {result['running']:,} | {result['pending']:,} "
        f"| {result['snapshot_s']:.3f} | **{result['cycle_s']:.3f}** | {result['admitted_pods']:,} "
        f"| **{result['pods_per_s']:,}** | {result['fill_s']:.3f} | {result['fill_pods']:,} "
        f"| {result['fill_pods_per_s']:,} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--baseline", metavar="REF", help="also the scheduler of this revision")
    parser.add_argument("--baseline-max-work", type=int, default=1_000_000)
    args = parser.parse_args()
    if args.quick:
        sizes = [(100, 200, 1_000), (1_000, 2_000, 1_000), (1_000, 2_000, 10_000)]
    else:
        sizes = [
            (1_000, 2_000, 10_000),
            (1_000, 2_000, 1_000),
            (1_000, 2_000, 50_000),
            (4_000, 8_000, 1_000),
            (4_000, 8_000, 10_000),
            (4_000, 8_000, 50_000),
        ]
    implementations = [("this tree", current())]
    if args.baseline:
        implementations.append((args.baseline, baseline(args.baseline)))
    print(
        "| scheduler | nodes | running | pending gangs | snapshot s | cycle s | pods admitted "
        "| pods/s | fill s | fill pods | fill pods/s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    results = []
    for nodes, running, pending in sizes:
        for label, sched in implementations:
            if label != "this tree" and nodes * pending > args.baseline_max_work:
                continue
            repeats = args.repeats if label == "this tree" else 1
            result = measure(sched, nodes, running, pending, seed=args.seed, repeats=repeats)
            results.append({"scheduler": label, **result})
            print(row(label, result), flush=True)
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "scheduler.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
