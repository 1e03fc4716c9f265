"""The pure parts of metrics: the request's window and metric types, bucketing samples into
evenly spaced averages, combining pods' series, the 5-minute roll-up, and reading CPU and
memory figures out of cgroup and /proc files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from lockstep.domain.errors import InvalidRequest
from lockstep.domain.metrics import (
    ROLLUP_BUCKET,
    Measurement,
    PhaseTimes,
    Point,
    Sample,
    Sampled,
    Window,
    averages,
    bucket_start,
    combined,
    constant,
    figures_of,
    latest_utilization,
    mean,
    parse_metric_types,
    parse_window,
    roll_up,
    rollup_horizon,
)
from lockstep.runtimes.local.sampling.usage import (
    CLOCK_TICKS,
    PAGE_BYTES,
    cgroup_cpu_seconds,
    cgroup_memory_bytes,
    marker_of,
    proc_cpu_seconds,
    proc_resident_bytes,
)

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def sample(
    seconds: float, value: float, *, pod: str = "p", gpu: str = "", weight: int = 1
) -> Sample:
    return Sample(at(seconds), "w", pod, "node", Sampled.CPU_USAGE_CORES, value, gpu, weight)


# --- the window ---


def test_a_window_of_points_divides_start_to_end_evenly_ending_at_end() -> None:
    window = parse_window("2026-12-01T12:00:00Z", "2026-12-01T12:01:40Z", 4)
    assert window.timestamps() == [at(25), at(50), at(75), at(100)]


def test_the_number_of_samples_defaults_to_twenty() -> None:
    assert parse_window("2026-12-01T12:00:00Z", "2026-12-01T13:00:00Z", None).points == 20


@pytest.mark.parametrize(
    ("start", "end", "samples", "field", "rule"),
    [
        (None, "2026-12-01T12:00:00Z", 5, "start", "is required"),
        ("yesterday", "2026-12-01T12:00:00Z", 5, "start", "'yesterday' is not an ISO-8601"),
        ("2026-12-01T12:00:00Z", "2026-12-01T12:00:00Z", 5, "end", "later than start"),
        ("2026-12-01T12:00:00Z", "2026-12-01T13:00:00Z", 1001, "numberOfSamples", "0 and 1000"),
        ("2026-12-01T12:00:00Z", "2026-12-01T13:00:00Z", -1, "numberOfSamples", "0 and 1000"),
    ],
)
def test_a_bad_window_names_its_parameter_and_rule(
    start: str | None, end: str, samples: int, field: str, rule: str
) -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_window(start, end, samples)
    assert raised.value.violations[0].field == field
    assert rule in raised.value.violations[0].rule


def test_every_wrong_parameter_is_named_at_once() -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_window(None, None, 5000)
    assert [v.field for v in raised.value.violations] == ["start", "end", "numberOfSamples"]


def test_a_bucket_holds_its_end_and_the_first_also_holds_start() -> None:
    window = Window(at(0), at(100), 4)
    assert [window.bucket_of(at(s)) for s in (0, 1, 25, 26, 100)] == [0, 0, 0, 1, 3]
    assert window.bucket_of(at(-1)) is None
    assert window.bucket_of(at(101)) is None


# --- metric types ---

KNOWN = ("CPU_USAGE_CORES", "POD_COUNT", "NIM_NUM_REQUESTS_RUNNING")
MEASURED = ("CPU_USAGE_CORES", "POD_COUNT")


def test_metric_types_are_comma_separated_or_repeated_each_kept_once_in_order() -> None:
    asked = ["POD_COUNT,CPU_USAGE_CORES", " POD_COUNT "]
    assert parse_metric_types(asked, known=KNOWN, measured=MEASURED) == [
        "POD_COUNT",
        "CPU_USAGE_CORES",
    ]


@pytest.mark.parametrize(
    ("asked", "rule"),
    [
        (None, "is required; one or more of CPU_USAGE_CORES, POD_COUNT"),
        ([","], "is required"),
        (["CPU"], "'CPU' is not a metric type"),
        (["NIM_NUM_REQUESTS_RUNNING"], "NIM_NUM_REQUESTS_RUNNING is not measured by lockstep"),
    ],
)
def test_bad_metric_types_are_refused_naming_what_is_measured(
    asked: list[str] | None, rule: str
) -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_metric_types(asked, known=KNOWN, measured=MEASURED)
    assert raised.value.violations[0].field == "metricType"
    assert rule in raised.value.violations[0].rule


# --- bucketing ---


def test_each_point_is_the_average_of_the_samples_in_its_bucket() -> None:
    window = Window(at(0), at(100), 4)
    samples = [sample(1, 1.0), sample(20, 3.0), sample(60, 5.0), sample(100, 7.0)]
    assert averages(samples, window) == {at(25): 2.0, at(75): 5.0, at(100): 7.0}


def test_rolled_up_samples_weigh_as_many_samples_as_they_average() -> None:
    window = Window(at(0), at(100), 1)
    samples = [sample(10, 1.0, weight=3), sample(20, 5.0)]
    assert averages(samples, window) == {at(100): 2.0}


def test_samples_outside_the_window_are_left_out() -> None:
    window = Window(at(0), at(100), 2)
    assert averages([sample(-5, 9.0), sample(101, 9.0)], window) == {}


def test_zero_points_gives_every_sample_as_stored() -> None:
    window = Window(at(0), at(100), 0)
    assert averages([sample(3, 1.0), sample(7, 2.0)], window) == {at(3): 1.0, at(7): 2.0}


def test_pods_series_are_averaged_each_then_summed_per_point() -> None:
    window = Window(at(0), at(100), 2)
    samples = [
        sample(10, 1.0, pod="a"),
        sample(20, 3.0, pod="a"),
        sample(30, 0.5, pod="b"),
        sample(90, 1.0, pod="b"),
    ]
    assert combined(samples, window, how=sum) == [Point(at(50), 2.5), Point(at(100), 1.0)]
    assert combined(samples, window, how=mean) == [Point(at(50), 1.25), Point(at(100), 1.0)]


def test_a_workloads_gpu_utilization_is_its_devices_latest_samples_averaged() -> None:
    samples = [
        sample(10, 90.0, pod="a", gpu="0"),
        sample(20, 40.0, pod="a", gpu="0"),  # device a/0 now: 40
        sample(20, 20.0, pod="a", gpu="1"),  # a/1: 20
        sample(5, 60.0, pod="b", gpu="0"),  # b/0: 60, however old its latest sample
    ]
    assert latest_utilization(samples) == pytest.approx(40.0)
    assert latest_utilization(samples[:1]) == 90.0
    assert latest_utilization([]) is None


def test_a_declared_figure_holds_at_each_point_of_its_span() -> None:
    window = Window(at(0), at(100), 4)
    assert constant(2.0, window, since=at(30), until=at(80)) == [
        Point(at(50), 2.0),
        Point(at(75), 2.0),
    ]


def test_a_measurement_is_the_documents_shape_with_figures_as_strings() -> None:
    measurement = Measurement("GPU_UTILIZATION_PER_GPU", [Point(at(0), 42.5)], {"gpu": "0"})
    assert measurement.to_json() == {
        "type": "GPU_UTILIZATION_PER_GPU",
        "labels": {"gpu": "0"},
        "values": [{"value": "42.5", "timestamp": "2026-12-01T12:00:00.000Z"}],
    }
    assert Measurement("POD_COUNT", [Point(at(0), 3.0)]).to_json()["values"] == [
        {"value": "3", "timestamp": "2026-12-01T12:00:00.000Z"}
    ]


# --- the roll-up ---


def test_full_resolution_samples_roll_up_into_weighted_five_minute_averages() -> None:
    samples = [sample(0, 1.0), sample(15, 2.0), sample(299, 3.0), sample(300, 10.0)]
    samples.append(sample(15, 8.0, pod="other"))
    rolled = {(s.pod, s.at): (s.value, s.weight) for s in roll_up(samples)}
    middle = bucket_start(at(0)) + ROLLUP_BUCKET / 2
    assert rolled == {
        ("p", middle): (2.0, 3),
        ("p", middle + ROLLUP_BUCKET): (10.0, 1),
        ("other", middle): (8.0, 1),
    }


def test_a_rolled_up_average_averages_by_weight_again() -> None:
    rolled = roll_up([sample(0, 2.0, weight=3), sample(10, 6.0)])
    assert [(s.value, s.weight) for s in rolled] == [(3.0, 4)]


def test_samples_are_rolled_up_once_a_day_old_in_whole_buckets() -> None:
    now = T0 + timedelta(days=1, minutes=7)
    assert rollup_horizon(now) == T0 + timedelta(minutes=5)


# --- cgroup and /proc files ---

CPU_STAT = "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 0\n"


def test_a_cgroups_cpu_time_is_its_usage_usec() -> None:
    assert cgroup_cpu_seconds(CPU_STAT) == 2.5
    assert cgroup_cpu_seconds("user_usec 3\n") is None


def test_a_cgroups_memory_is_memory_current() -> None:
    assert cgroup_memory_bytes("209715200\n") == 200 * 2**20
    assert cgroup_memory_bytes("max\n") is None


def test_a_processes_cpu_time_is_utime_and_stime_after_its_command() -> None:
    utime, stime = 3 * CLOCK_TICKS, CLOCK_TICKS
    fields = ["S", "1", "1", "1", "0", "-1", "4194560", "10", "0", "0", "0"]
    stat = f"4242 (python -c ) x) {' '.join(fields)} {utime} {stime} 0 0 20 0 1 0 99"
    assert proc_cpu_seconds(stat) == 4.0
    assert proc_cpu_seconds("garbage") is None


def test_a_processes_memory_is_its_resident_pages() -> None:
    assert proc_resident_bytes("1000 51200 300 1 0 200 0") == 51200 * PAGE_BYTES
    assert proc_resident_bytes("") is None


def test_a_process_carries_its_pods_marker_in_its_environment() -> None:
    environ = b"HOME=/root\0LOCKSTEP_POD_UID=abc-123\0PATH=/bin\0"
    assert marker_of(environ) == "abc-123"
    assert marker_of(b"HOME=/root\0") is None


def test_phase_times_count_each_change_until_the_next_and_the_last_until_now() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    changes = [
        (start, "Creating"),
        (start + timedelta(seconds=2), "Pending"),
        (start + timedelta(seconds=12), "Running"),
        (start + timedelta(seconds=20), "Pending"),
    ]
    times = PhaseTimes.of(changes)
    later = start + timedelta(seconds=25)
    assert times.seconds("Creating", later) == 2
    assert times.seconds("Pending", later) == 15  # ten ended, five since the last change
    assert times.seconds("Running", later) == 8
    assert times.seconds("Pending", start + timedelta(seconds=30)) == 20
    assert times.seconds("Stopped", later) == 0
    assert times.seconds("Pending", start) == 10  # a clock behind the history adds nothing
    figures = figures_of(times, 1, later)
    assert (figures.pending_seconds, figures.running_seconds, figures.idle_gpus) == (15, 8, 1)
    assert PhaseTimes.of([]).seconds("Pending", later) == 0
