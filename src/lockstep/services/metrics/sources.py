"""Where measured figures come from: a `MetricsSource` answers a `SeriesQuery` (the
measured types of whatever a scope selects, over a window) with measurements.
`SampledMetrics` reads the samples the local runtime's sampler keeps in the store;
`PrometheusMetrics` (services/metrics/prometheus_source.py) asks the cluster's Prometheus, for the
Kubernetes runtime; `NoMetricsSource` stands for a runtime without one and says what is
needed."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from lockstep.domain.errors import MetricsUnavailable
from lockstep.domain.metrics import Measurement, Sampled, Window, combined, mean
from lockstep.store.database import Database
from lockstep.store.metrics import SampleScope


@dataclass(frozen=True, slots=True)
class SeriesQuery:
    """Measured series of `types` for whatever `scope` selects, over `window`."""

    scope: SampleScope
    types: Sequence[str]
    window: Window


class MetricsSource(Protocol):
    remote: bool
    """It waits on the network: the metrics service is called on a worker thread."""

    def series(self, query: SeriesQuery) -> list[Measurement]:
        """One measurement per type (per GPU device for a `_PER_GPU` type), in the order
        asked; a type without data has no values."""
        ...


@dataclass(frozen=True, slots=True)
class _FromSamples:
    sampled: Sampled
    how: Callable[[Sequence[float]], float]
    per_gpu: bool = False


FROM_SAMPLES: dict[str, _FromSamples] = {
    "CPU_USAGE_CORES": _FromSamples(Sampled.CPU_USAGE_CORES, sum),
    "CPU_MEMORY_USAGE_BYTES": _FromSamples(Sampled.CPU_MEMORY_USAGE_BYTES, sum),
    "GPU_UTILIZATION": _FromSamples(Sampled.GPU_UTILIZATION_PER_GPU, mean),
    "GPU_MEMORY_USAGE_BYTES": _FromSamples(Sampled.GPU_MEMORY_USAGE_BYTES_PER_GPU, sum),
    "GPU_UTILIZATION_PER_GPU": _FromSamples(Sampled.GPU_UTILIZATION_PER_GPU, mean, per_gpu=True),
    "GPU_MEMORY_USAGE_BYTES_PER_GPU": _FromSamples(
        Sampled.GPU_MEMORY_USAGE_BYTES_PER_GPU, mean, per_gpu=True
    ),
    "POD_COUNT": _FromSamples(Sampled.POD_COUNT, sum),
    "RUNNING_POD_COUNT": _FromSamples(Sampled.RUNNING_POD_COUNT, sum),
    "GPU_ALLOCATION": _FromSamples(Sampled.GPU_ALLOCATION, sum),
    "ALLOCATED_GPU": _FromSamples(Sampled.GPU_ALLOCATION, sum),
}
"""Each measured type: the sampled figure it is made of and how the pods' (or devices')
series are combined per point."""


class SampledMetrics:
    """The samples the local runtime's sampler keeps in the store."""

    remote = False

    def __init__(self, database: Database) -> None:
        self._db = database

    def series(self, query: SeriesQuery) -> list[Measurement]:
        wanted = {FROM_SAMPLES[t].sampled for t in query.types}
        with self._db.read() as unit:
            samples = unit.metrics.samples(
                query.scope, wanted, start=query.window.start, end=query.window.end
            )
        by_metric = defaultdict(list)
        for sample in samples:
            by_metric[sample.metric].append(sample)
        measurements = []
        for name in query.types:
            rule = FROM_SAMPLES[name]
            chosen = by_metric[rule.sampled]
            if not rule.per_gpu:
                measurements.append(Measurement(name, combined(chosen, query.window, how=rule.how)))
                continue
            devices = sorted({s.gpu for s in chosen}, key=device_order)
            for gpu in devices:
                points = combined([s for s in chosen if s.gpu == gpu], query.window, how=rule.how)
                measurements.append(Measurement(name, points, labels={"gpu": gpu}))
            if not devices:
                measurements.append(Measurement(name, []))
        return measurements


def device_order(gpu: str) -> tuple[int, str]:
    return (int(gpu), "") if gpu.isdigit() else (1 << 30, gpu)


PROMETHEUS_NEEDED = (
    "metrics on the Kubernetes runtime come from the cluster's Prometheus: set "
    "LOCKSTEP_PROMETHEUS_URL to its address"
)


class NoMetricsSource:
    """A runtime without a source of metrics: every request says what is needed."""

    remote = False

    def __init__(self, why: str) -> None:
        self._why = why

    def series(self, query: SeriesQuery) -> list[Measurement]:
        raise MetricsUnavailable(self._why)
