"""The per-workload gauges of `/metrics`, under the names Run:ai users chart: what a workload
holds (its GPUs, its running pods) and asks (its GPUs), how busy its GPUs are, and how long it
waited and ran.

Built from what `StoreGauges` (services/metrics/gauges.py) reads at each scrape: the workloads
not finished, and their figures (phase history and latest GPU samples) read for all of them at
once. A finished workload has no series: its figures no longer change, and Prometheus keeps
their last values.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from prometheus_client.core import GaugeMetricFamily, Metric

from lockstep.domain.metrics import WorkloadFigures
from lockstep.domain.workload import Workload
from lockstep.scheduler.gang.of_workload import gang_of
from lockstep.scheduler.quota.pool_amounts import asked

WORKLOAD_LABELS = ["workload_id", "workload_name", "workload_type", "project", "department"]


def _requested_gpus(workload: Workload) -> float:
    """The GPUs a workload's gang asks, as the scheduler counts them (a share of a device as
    its fraction, a device asked by memory as a whole one)."""
    return asked(gang_of(workload).shape)[0]


def workload_gauges(
    unfinished: Sequence[Workload], figures: Mapping[str, WorkloadFigures]
) -> Iterator[Metric]:
    def gauge(name: str, text: str) -> GaugeMetricFamily:
        return GaugeMetricFamily(name, text, labels=WORKLOAD_LABELS)

    allocated = gauge(
        "runai_allocated_gpu_count_per_workload",
        "GPUs an admitted workload holds (a share of one counts as its fraction).",
    )
    pods = gauge("lockstep_workload_running_pods", "Pods of an admitted workload that run.")
    requested = gauge(
        "runai_requested_gpus_per_workload",
        "GPUs a workload not finished asks (a share of one counts as its fraction).",
    )
    utilization = gauge(
        "runai_gpu_utilization_per_workload",
        "Utilization (%) of an admitted workload's GPUs, the mean of their latest samples.",
    )
    waited = gauge(
        "runai_job_total_wait_time",
        "Seconds a workload not finished has spent Pending, by its phase history.",
    )
    ran = gauge(
        "runai_job_total_runtime",
        "Seconds a workload not finished has spent Running, by its phase history.",
    )
    for workload in unfinished:
        labels = [
            workload.id,
            workload.name,
            workload.kind.value,
            workload.project_name,
            workload.department_name,
        ]
        requested.add_metric(labels, _requested_gpus(workload))
        of_workload = figures.get(workload.id)
        if of_workload is not None:
            waited.add_metric(labels, of_workload.pending_seconds)
            ran.add_metric(labels, of_workload.running_seconds)
        if not workload.actual_phase.has_pods:
            continue
        allocated.add_metric(labels, workload.allocated_gpus)
        pods.add_metric(labels, workload.running_pods)
        if of_workload is not None and of_workload.gpu_utilization is not None:
            utilization.add_metric(labels, of_workload.gpu_utilization)
    yield from (allocated, pods, requested, utilization, waited, ran)
