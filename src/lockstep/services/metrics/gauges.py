"""The gauges `/metrics` reads from the store at each scrape, under the names Run:ai and KAI
Scheduler users already chart: per workload what it holds and asks, how busy its GPUs are and
how long it waited and ran (services/metrics/workload_gauges.py), per project (KAI: per queue)
what it deserves, its fair share and what it holds, and per node its capacity and what is held.

Figures come from what the scheduler last stored (the fair shares of its last cycle), the
workloads as stored, their phase history and the sampler's latest GPU samples, all read in one
transaction per scrape (a few statements for all the workloads, never one per workload);
nothing is sampled here. A Prometheus `Collector`: the API calls it on a worker thread, never
on the event loop.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from lockstep.domain.clock import Clock
from lockstep.domain.cluster import NodeUse
from lockstep.domain.labels import DEPARTMENT_QUEUE_PREFIX
from lockstep.domain.organization import Department, Project
from lockstep.services.metrics.workload_gauges import workload_gauges
from lockstep.store.database import Database

MILLICORES = 1000.0
PROJECT_LABELS = ["project", "department"]


class StoreGauges(Collector):
    def __init__(
        self, database: Database, nodes: Callable[[], list[NodeUse]], *, clock: Clock
    ) -> None:
        self._db = database
        self._nodes = nodes
        self._clock = clock

    def collect(self) -> Iterator[Metric]:
        with self._db.read() as unit:
            projects = unit.organization.projects()
            departments = unit.organization.departments()
            unfinished = unit.workloads.unfinished()
            figures = unit.metrics.figures([w.id for w in unfinished], self._clock())
            shares = unit.scheduling.shares()
        yield from workload_gauges(unfinished, figures)
        yield from _unit_gauges(projects, departments, shares)
        yield from _node_gauges(self._nodes())


Figures = Mapping[str, Mapping[str, float]]
"""Resource → {"deserved", "fairShare", "allocated", "requested"}: one unit in one pool."""


def _summed(
    shares: Mapping[tuple[str, str, str], Figures],
) -> dict[tuple[str, str], dict[str, dict[str, float]]]:
    """(org type, id) → resource → figure, summed over the pools (unlimited stays -1)."""
    total: dict[tuple[str, str], dict[str, dict[str, float]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(float))
    )
    for (org_type, unit_id, _pool), figures in shares.items():
        for resource, values in figures.items():
            summed = total[(org_type, unit_id)][resource]
            for name, value in values.items():
                if value < 0 or summed.get(name, 0.0) < 0:
                    summed[name] = -1.0
                else:
                    summed[name] += value
    return total


def _unit_gauges(
    projects: list[Project],
    departments: list[Department],
    shares: Mapping[tuple[str, str, str], Figures],
) -> Iterator[Metric]:
    summed = _summed(shares)
    department_names = {d.id: d.name for d in departments}

    def gauge(name: str, text: str, labels: list[str]) -> GaugeMetricFamily:
        return GaugeMetricFamily(name, text, labels=labels)

    guaranteed = gauge(
        "runai_project_guaranteed_gpus",
        "GPUs a project deserves (its quota, summed over node pools; -1: unlimited).",
        PROJECT_LABELS,
    )
    allocated = gauge(
        "runai_allocated_gpu_count_per_project",
        "GPUs the project's admitted workloads hold.",
        PROJECT_LABELS,
    )
    info = gauge(
        "kai_queue_info", "A scheduling queue (1 while it exists).", ["queue_name", "parent_queue"]
    )
    queue_figures = {
        "deserved": gauge(
            "kai_queue_deserved_gpus", "GPUs the queue deserves (-1: unlimited).", ["queue_name"]
        ),
        "fairShare": gauge(
            "kai_queue_fair_share_gpus",
            "GPUs the scheduler's last cycle found to be the queue's fair share.",
            ["queue_name"],
        ),
        "allocated": gauge("kai_queue_allocated_gpus", "GPUs the queue holds.", ["queue_name"]),
        "requested": gauge(
            "kai_queue_requested_gpus",
            "GPUs the queue holds and its pending workloads ask.",
            ["queue_name"],
        ),
    }
    cpu = gauge("kai_queue_allocated_cpu_cores", "CPU cores the queue holds.", ["queue_name"])
    memory = gauge(
        "kai_queue_allocated_memory_bytes", "Memory the queue holds, in bytes.", ["queue_name"]
    )
    for department in departments:
        queue = f"{DEPARTMENT_QUEUE_PREFIX}{department.name}"
        info.add_metric([queue, ""], 1)
        _add_queue(summed.get(("department", department.id), {}), queue, queue_figures, cpu, memory)
    for project in projects:
        parent = department_names.get(project.department_id, "")
        figures = summed.get(("project", project.id), {})
        gpu = figures.get("gpu", {})
        guaranteed.add_metric([project.name, parent], gpu.get("deserved", 0.0))
        allocated.add_metric([project.name, parent], gpu.get("allocated", 0.0))
        info.add_metric([project.name, f"{DEPARTMENT_QUEUE_PREFIX}{parent}"], 1)
        _add_queue(figures, project.name, queue_figures, cpu, memory)
    yield from (guaranteed, allocated, info, *queue_figures.values(), cpu, memory)


def _add_queue(
    figures: Mapping[str, Mapping[str, float]],
    queue: str,
    gpu_gauges: Mapping[str, GaugeMetricFamily],
    cpu: GaugeMetricFamily,
    memory: GaugeMetricFamily,
) -> None:
    gpu = figures.get("gpu", {})
    for figure, family in gpu_gauges.items():
        family.add_metric([queue], gpu.get(figure, 0.0))
    cpu.add_metric([queue], figures.get("cpu", {}).get("allocated", 0.0) / MILLICORES)
    memory.add_metric([queue], figures.get("memory", {}).get("allocated", 0.0))


def _node_gauges(nodes: list[NodeUse]) -> Iterator[Metric]:
    labels = ["node", "nodepool"]
    total = GaugeMetricFamily("lockstep_node_gpus", "GPU devices of a node.", labels=labels)
    held = GaugeMetricFamily(
        "lockstep_node_allocated_gpus", "GPUs admitted workloads hold on a node.", labels=labels
    )
    cores = GaugeMetricFamily("lockstep_node_cpu_cores", "CPU cores of a node.", labels=labels)
    held_cores = GaugeMetricFamily(
        "lockstep_node_allocated_cpu_cores",
        "CPU cores admitted workloads hold on a node.",
        labels=labels,
    )
    for use in nodes:
        name = [use.node.name, use.node.pool]
        total.add_metric(name, len(use.node.gpus))
        held.add_metric(name, float(sum(use.gpus.values())))
        cores.add_metric(name, float(use.node.cpu))
        held_cores.add_metric(name, float(use.cpu))
    yield from (total, held, cores, held_cores)
