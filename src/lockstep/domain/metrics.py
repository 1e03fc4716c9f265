"""Metrics, pure: what a metrics request asks (its types, its window and its points), the
samples lockstep keeps, and how they become the answer's evenly spaced averages.

The sampler (runtimes/local/sampling/sampler.py) takes one `Sample` per pod, metric and GPU each
round; the store keeps them at full resolution for a day and as 5-minute averages for 30
days (`rolled_up`); the metrics service (services/metrics/series.py) asks the store for the
samples of a window and turns them into `Measurement`s here.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from lockstep.domain.clock import iso, parse_moment
from lockstep.domain.errors import InvalidRequest, Violation
from lockstep.domain.phases import Phase

DEFAULT_SAMPLES = 20
MAX_SAMPLES = 1000
FULL_RESOLUTION = timedelta(days=1)
"""Samples younger than this are kept as taken."""
ROLLED_UP_FOR = timedelta(days=30)
"""5-minute averages are kept this long; older ones are removed."""
ROLLUP_BUCKET = timedelta(minutes=5)


class Sampled(StrEnum):
    """What the sampler records of each pod each round."""

    CPU_USAGE_CORES = "CPU_USAGE_CORES"
    CPU_MEMORY_USAGE_BYTES = "CPU_MEMORY_USAGE_BYTES"
    GPU_UTILIZATION_PER_GPU = "GPU_UTILIZATION_PER_GPU"
    """Percent, one series per device the pod holds."""
    GPU_MEMORY_USAGE_BYTES_PER_GPU = "GPU_MEMORY_USAGE_BYTES_PER_GPU"
    POD_COUNT = "POD_COUNT"
    """1 while the pod exists."""
    RUNNING_POD_COUNT = "RUNNING_POD_COUNT"
    """1 while its process runs, else 0."""
    GPU_ALLOCATION = "GPU_ALLOCATION"
    """The GPUs its placement gives it (devices times share)."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One figure of one pod at one moment; `weight`: how many samples it averages (1 as
    taken, more once rolled up)."""

    at: datetime
    workload_id: str
    pod: str
    node: str
    metric: Sampled
    value: float
    gpu: str = ""
    weight: int = 1


# --- the request -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Window:
    """`[start, end]` divided into `points` buckets of equal length; 0 points: every sample
    as stored."""

    start: datetime
    end: datetime
    points: int

    @property
    def step(self) -> timedelta:
        return (self.end - self.start) / max(self.points, 1)

    def timestamps(self) -> list[datetime]:
        """Each bucket's end: evenly spaced, the last one `end`."""
        return [self.start + self.step * (i + 1) for i in range(self.points)]

    def bucket_of(self, at: datetime) -> int | None:
        """The bucket `at` falls in (a bucket holds its end, not its start; `start` itself
        belongs to the first); None outside the window."""
        if at < self.start or at > self.end:
            return None
        if at == self.start:
            return 0
        span = (self.end - self.start).total_seconds()
        position = (at - self.start).total_seconds() / span * self.points
        return min(self.points - 1, max(0, math.ceil(position) - 1))


def parse_window(start: str | None, end: str | None, number_of_samples: int | None) -> Window:
    """The window a request asks, or `InvalidRequest` naming each parameter that is wrong."""
    problems: list[tuple[str, str]] = []
    moments: dict[str, datetime] = {}
    for name, text in (("start", start), ("end", end)):
        if text is None or not text.strip():
            problems.append((name, "is required (an ISO-8601 date-time)"))
            continue
        try:
            moments[name] = parse_moment(text.strip())
        except ValueError:
            problems.append((name, f"{text!r} is not an ISO-8601 date-time"))
    points = DEFAULT_SAMPLES if number_of_samples is None else number_of_samples
    if not 0 <= points <= MAX_SAMPLES:
        problems.append(("numberOfSamples", f"must be between 0 and {MAX_SAMPLES}, not {points}"))
    if len(moments) == 2 and moments["end"] <= moments["start"]:
        problems.append(("end", "must be later than start"))
    if problems:
        raise InvalidRequest([Violation(name, rule) for name, rule in problems])
    return Window(moments["start"], moments["end"], points)


def parse_metric_types(
    values: Sequence[str] | None, *, known: Sequence[str], measured: Sequence[str]
) -> list[str]:
    """The requested metric types, each once, in the order asked: `values` are the query's
    `metricType` parameters, each possibly comma-separated. `known`: the document's enum;
    `measured`: those lockstep answers (one of the enum that lockstep does not measure is
    refused too, naming what it measures)."""
    asked = [part.strip() for value in values or () for part in value.split(",")]
    asked = [part for part in asked if part]
    if not asked:
        raise InvalidRequest.of("metricType", f"is required; one or more of {', '.join(measured)}")
    chosen: list[str] = []
    for name in asked:
        if name not in known:
            raise InvalidRequest.of(
                "metricType", f"{name!r} is not a metric type; one of {', '.join(measured)}"
            )
        if name not in measured:
            raise InvalidRequest.of(
                "metricType",
                f"{name} is not measured by lockstep; it measures {', '.join(measured)}",
            )
        if name not in chosen:
            chosen.append(name)
    return chosen


# --- the answer ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Point:
    at: datetime
    value: float


@dataclass(frozen=True, slots=True)
class Measurement:
    """One series of the answer (the document's `MeasurementResponse`)."""

    type: str
    points: list[Point]
    labels: Mapping[str, str] | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "type": self.type,
            "labels": None if self.labels is None else dict(self.labels),
            "values": [{"value": figure(p.value), "timestamp": iso(p.at)} for p in self.points],
        }


def figure(value: float) -> str:
    """A figure as the document's string: integers without a fraction, others to 6 places."""
    if value == int(value) and abs(value) < 2**53:
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


def averages(samples: Iterable[Sample], window: Window) -> dict[datetime, float]:
    """The weighted average of the samples in each bucket of `window`, by the bucket's
    timestamp; buckets without a sample are absent. With 0 points: each sample's moment
    (samples of one moment averaged)."""
    sums: dict[datetime, float] = defaultdict(float)
    weights: dict[datetime, int] = defaultdict(int)
    stamps = window.timestamps()
    for sample in samples:
        if window.points == 0:
            if not window.start <= sample.at <= window.end:
                continue
            moment = sample.at
        else:
            bucket = window.bucket_of(sample.at)
            if bucket is None:
                continue
            moment = stamps[bucket]
        sums[moment] += sample.value * sample.weight
        weights[moment] += sample.weight
    return {moment: sums[moment] / weights[moment] for moment in sorted(sums)}


SeriesKey = tuple[str, str]
"""(pod, gpu): what one sampled series is of."""


def by_series(samples: Iterable[Sample]) -> dict[SeriesKey, list[Sample]]:
    grouped: dict[SeriesKey, list[Sample]] = defaultdict(list)
    for sample in samples:
        grouped[(sample.pod, sample.gpu)].append(sample)
    return grouped


def combined(
    samples: Iterable[Sample], window: Window, *, how: Callable[[Sequence[float]], float]
) -> list[Point]:
    """Each series' bucket averages, then per bucket `how` of them (`sum` of the pods'
    cores, `mean` of their GPUs' utilization)."""
    per_bucket: dict[datetime, list[float]] = defaultdict(list)
    for series in by_series(samples).values():
        for moment, value in averages(series, window).items():
            per_bucket[moment].append(value)
    return [Point(moment, how(values)) for moment, values in sorted(per_bucket.items())]


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def constant(value: float, window: Window, *, since: datetime, until: datetime) -> list[Point]:
    """A figure that holds from `since` to `until` (a request from a spec, a quota), at each
    of the window's timestamps in that span (with 0 points: at `start` and `end`)."""
    stamps = window.timestamps() if window.points else [window.start, window.end]
    return [Point(at, value) for at in stamps if since <= at <= until]


# --- retention -------------------------------------------------------------------------------


def bucket_start(at: datetime) -> datetime:
    """The start of the 5-minute bucket `at` falls in."""
    seconds = ROLLUP_BUCKET.total_seconds()
    epoch = at.timestamp()
    return datetime.fromtimestamp(epoch - epoch % seconds, at.tzinfo)


def roll_up(samples: Iterable[Sample]) -> list[Sample]:
    """5-minute averages of full-resolution samples, one per series and bucket, dated at the
    bucket's middle and weighted by how many samples each averages."""
    grouped: dict[tuple[str, str, str, Sampled, str, datetime], list[Sample]] = defaultdict(list)
    for s in samples:
        grouped[(s.workload_id, s.pod, s.node, s.metric, s.gpu, bucket_start(s.at))].append(s)
    rolled = []
    for (workload_id, pod, node, metric, gpu, start), members in grouped.items():
        weight = sum(m.weight for m in members)
        value = sum(m.value * m.weight for m in members) / weight
        rolled.append(
            Sample(
                at=start + ROLLUP_BUCKET / 2,
                workload_id=workload_id,
                pod=pod,
                node=node,
                metric=metric,
                value=value,
                gpu=gpu,
                weight=weight,
            )
        )
    return rolled


def rollup_horizon(now: datetime) -> datetime:
    """Full-resolution samples before this are rolled up: older than a day, in buckets that
    have ended."""
    return bucket_start(now - FULL_RESOLUTION)


def expiry_horizon(now: datetime) -> datetime:
    return now - ROLLED_UP_FOR


# --- a workload's figures in the list ---------------------------------------------------------

IDLE_WINDOW = timedelta(minutes=5)
"""A device is idle when its utilization averaged under `IDLE_BELOW_PERCENT` this long."""
IDLE_BELOW_PERCENT = 1.0


@dataclass(frozen=True, slots=True)
class WorkloadFigures:
    """What the workload list shows of a workload's history and samples."""

    pending_seconds: int
    running_seconds: int
    idle_gpus: int | None
    """None where none of its devices was sampled lately (no GPU, or no GPU reader)."""
    gpu_utilization: float | None = None
    """The mean of its devices' latest utilization samples, in percent (None likewise):
    what `/metrics` exports, not the list."""


@dataclass(frozen=True, slots=True)
class PhaseTimes:
    """A workload's time in each phase by its phase history: each change lasts until the next
    one, the last (the phase it is in) until now. Fixed until the history grows, so it can be
    kept with what is remembered of the workload and read at any later moment."""

    ended: Mapping[str, float]
    """Seconds spent in each phase by the changes that were followed by another."""
    current: str | None = None
    since: datetime | None = None

    @classmethod
    def of(cls, changes: Sequence[tuple[datetime, str]]) -> PhaseTimes:
        """From the changes (when, phase), oldest first."""
        if not changes:
            return cls({})
        ended: dict[str, float] = defaultdict(float)
        for (since, phase), (until, _) in itertools.pairwise(changes):
            ended[phase] += max(0.0, (until - since).total_seconds())
        since, current = changes[-1]
        return cls(dict(ended), current, since)

    def seconds(self, phase: str, now: datetime) -> float:
        """Seconds spent in `phase` until `now`."""
        spent = self.ended.get(phase, 0.0)
        if phase == self.current and self.since is not None:
            spent += max(0.0, (now - self.since).total_seconds())
        return spent


def figures_of(
    times: PhaseTimes,
    idle_gpus: int | None,
    now: datetime,
    *,
    gpu_utilization: float | None = None,
) -> WorkloadFigures:
    """A workload's figures at `now`."""
    return WorkloadFigures(
        pending_seconds=int(times.seconds(Phase.PENDING.value, now)),
        running_seconds=int(times.seconds(Phase.RUNNING.value, now)),
        idle_gpus=idle_gpus,
        gpu_utilization=gpu_utilization,
    )


def idle_devices(utilization: Iterable[Sample]) -> int | None:
    """How many devices (by pod and GPU) averaged under `IDLE_BELOW_PERCENT` in these
    samples of GPU_UTILIZATION_PER_GPU; None without any."""
    series = by_series(utilization)
    if not series:
        return None
    return sum(
        1
        for samples in series.values()
        if sum(s.value * s.weight for s in samples) / sum(s.weight for s in samples)
        < IDLE_BELOW_PERCENT
    )


def latest_utilization(utilization: Iterable[Sample]) -> float | None:
    """The mean over devices (by pod and GPU) of each one's latest sample of
    GPU_UTILIZATION_PER_GPU (its latest moment's, averaged by weight); None without any."""
    latest: list[float] = []
    for samples in by_series(utilization).values():
        moment = max(s.at for s in samples)
        last = [s for s in samples if s.at == moment]
        latest.append(sum(s.value * s.weight for s in last) / sum(s.weight for s in last))
    return mean(latest) if latest else None
