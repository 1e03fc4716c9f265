"""Scheduling cycles of the running reconciler on a synthetic cluster, from its store.

The store (SQLite, in a fresh data dir) is filled directly with 20 departments and 200
projects with GPU quotas (deserved shares adding up to each pool's GPUs), running workloads
(placed, Running) and pending gangs of 1-64 pods asking 1-8 whole GPUs in one of 4 pools, each
in a project at random. The reconciler (`LocalReconciler.schedule`, the code `lockstep serve`
runs) is given a runtime of 1,000 virtual nodes of 8 GPUs that starts nothing (this measures
scheduling, not launching processes: bench.launch does that). Measured per cycle: reading the
queue heads (at most 64 per project and 1,024 in all), the admitted workloads and the
organization; the quota-aware cycle; storing the shares; and writing its decisions (admitted,
waiting with their reasons) in one transaction. Cycles run until the queue is decided.

    .venv/bin/python -m bench.reconciler_cycle [--nodes 1000] [--running 2000] [--pending 10000]

Target (2 cores): one cycle ≤ 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from lockstep.assembly import bootstrap, open_core
from lockstep.config import Settings
from lockstep.domain.cluster import Assignment, Gpu, Node
from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.phases import DesiredPhase, Phase
from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.workload import Workload, WorkloadUpdate
from lockstep.domain.workload_request import WorkloadRequest
from lockstep.reconciler.queue import WorkQueue
from lockstep.runtimes.base import PodStatus
from lockstep.runtimes.local.reconciler import LocalReconciler
from lockstep.scheduler.gang.of_workload import gang_needs
from lockstep.scheduler.nodes.placement import place
from lockstep.scheduler.nodes.usage import Usage
from lockstep.schemas.distributed import DistributedFramework
from lockstep.store.database import Database

POOLS = 4
GPUS_PER_NODE = 8
DEPARTMENTS = 20
PROJECTS = 200
ROOT = Path(__file__).resolve().parent.parent


class SchedulingOnly:
    """A runtime of virtual nodes that starts nothing (only what a cycle calls does anything)."""

    name = "scheduling-only"

    def __init__(self, nodes: Sequence[Node]) -> None:
        self._nodes = list(nodes)

    def render(self, workload: Workload, plan: ReplicaPlan) -> dict[str, Any]:
        return {}

    def waiting_for(self, workload: Workload, plan: ReplicaPlan) -> str | None:
        return None

    def start(
        self, workload: Workload, plan: ReplicaPlan, placement: Mapping[str, Assignment] | None
    ) -> None:
        return None

    def observe(self, workload_id: str) -> list[PodStatus]:
        return []

    def restart(
        self, workload: Workload, plan: ReplicaPlan, only: Collection[str] | None = None
    ) -> None:
        return None

    def log_tail(self, workload_id: str, pod_name: str, *, lines: int) -> list[str]:
        return []

    def stop(self, workload_id: str, *, grace_seconds: float) -> bool:
        return True

    def delete(self, workload_id: str, *, keep_logs: bool = False) -> None:
        return None

    def workload_ids(self) -> set[str]:
        return set()

    def nodes(self) -> Sequence[Node]:
        return list(self._nodes)

    def close(self) -> None:
        return None


def cluster(count: int) -> list[Node]:
    return [
        Node(
            f"node-{i}",
            f"pool-{i % POOLS}",
            Decimal(GPUS_PER_NODE * 16),
            Decimal(2**40),
            tuple(Gpu(g) for g in range(GPUS_PER_NODE)),
        )
        for i in range(count)
    ]


def request(pool: str, pods: int, gpus: int) -> dict[str, Any]:
    return {
        "spec": {
            "image": "trainer",
            "distributedFramework": "PyTorch",
            "numWorkers": pods - 1 if pods > 1 else 1,
            "command": "python3",
            "args": "train.py",
            "nodePools": [pool],
            "compute": {"gpuDevicesRequest": gpus, "cpuCoreRequest": 8 * gpus},
        },
        "masterSpecSameAsWorker": True,
    }


def fill(database: Database, nodes: list[Node], *, running: int, pending: int, seed: int) -> None:
    rng = random.Random(seed)
    now = datetime.now(UTC)
    per_pool = len(nodes) // POOLS * GPUS_PER_NODE
    with database.write() as unit:
        cluster_id = unit.organization.clusters()[0].id
        departments = [
            unit.organization.add_department(
                name=f"department-{d}",
                cluster_id=cluster_id,
                created_by="bench",
                resources=[],  # each deserves what its projects deserve together
                now=now,
            )
            for d in range(DEPARTMENTS)
        ]
        projects = []
        for p in range(PROJECTS):
            resources = [
                {
                    "nodePool": {"id": str(pool), "name": f"pool-{pool}"},
                    "gpu": {"deserved": per_pool // PROJECTS, "overQuotaWeight": rng.randint(1, 3)},
                }
                for pool in range(POOLS)
            ]
            projects.append(
                unit.organization.add_project(
                    name=f"project-{p}",
                    cluster_id=cluster_id,
                    department_id=departments[p % DEPARTMENTS].id,
                    created_by="bench",
                    requested_namespace=None,
                    resources=resources,
                    now=now,
                )
            )
    usage = Usage(nodes)
    rows: list[tuple[Workload, WorkloadUpdate | None]] = []
    for index in range(running + pending):
        is_running = index < running
        pool = f"pool-{rng.randrange(POOLS)}"
        if is_running:
            pods, gpus = rng.randint(2, 4), 1
        else:
            pods, gpus = rng.randint(2, 64), rng.choice((1, 2, 4, 8))
        project = rng.choice(projects)
        workload = Workload(
            id=str(uuid.uuid4()),
            name=f"w-{index}",
            requested_name=f"w-{index}",
            project_id=project.id,
            department_id=project.department_id,
            cluster_id=cluster_id,
            created_by="bench",
            created_at=now + timedelta(microseconds=index),
            desired_phase=DesiredPhase.RUNNING,
            actual_phase=Phase.RUNNING if is_running else Phase.PENDING,
            phase_message="",
            phase_updated_at=now,
            framework=DistributedFramework.PYTORCH,
            request=WorkloadRequest(WorkloadKind.DISTRIBUTED, request(pool, pods, gpus)),
            priority_class="train",
            priority=50,
        )
        change = None
        if is_running:
            placed = place(usage, gang_needs(workload.plan()))
            if not isinstance(placed, dict):
                continue
            change = WorkloadUpdate(placement=placed)
        rows.append((workload, change))
    with database.write() as unit:
        for workload, change in rows:
            unit.workloads.insert(workload)
            if change is not None:
                unit.workloads.apply(workload, change, now)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=1_000)
    parser.add_argument("--running", type=int, default=2_000)
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--cycles", type=int, default=10)
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="lockstep-bench-cycle-"))
    settings = Settings(data_dir=data_dir, bootstrap_client_id="admin", bootstrap_client_secret="s")
    core = open_core(settings)
    bootstrap(core)
    nodes = cluster(args.nodes)
    fill(core.database, nodes, running=args.running, pending=args.pending, seed=args.seed)
    reconciler = LocalReconciler(
        core.database, SchedulingOnly(nodes), clock=lambda: datetime.now(UTC), queue=WorkQueue()
    )
    timings: list[float] = []
    decided: list[tuple[int, int, int]] = []
    for _ in range(args.cycles):
        started = time.perf_counter()
        changes = reconciler.schedule()
        with core.database.write() as unit:
            now = datetime.now(UTC)
            for workload, change in changes:
                unit.workloads.apply(workload, change, now)
        timings.append(time.perf_counter() - started)
        placed = [c.placement for _, c in changes if c.placement is not None]
        decided.append((len(changes), len(placed), sum(len(p) for p in placed)))
    with core.database.read() as unit:
        still = len(unit.workloads.queue_heads(per_project=10**6, limit=10**6))
    result = {
        "nodes": args.nodes,
        "running": args.running,
        "pending": args.pending,
        "first_cycle_s": round(timings[0], 3),
        "median_cycle_s": round(statistics.median(timings), 3),
        "max_cycle_s": round(max(timings), 3),
        "cycles": args.cycles,
        "admitted_first_cycle": decided[0][1],
        "admitted_pods_first_cycle": decided[0][2],
        "pods_per_s_first_cycle": round(decided[0][2] / timings[0]),
        "written_first_cycle": decided[0][0],
        "still_queued": still,
    }
    print(json.dumps(result, indent=2))
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "reconciler_cycle.json").write_text(json.dumps(result, indent=2))
    core.close()


if __name__ == "__main__":
    main()
