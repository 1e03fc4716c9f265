"""The PromQL table and its quoting (services/metrics/promql.py), and how a window becomes what
Prometheus is asked (services/metrics/prometheus_source.py): every measured type has a query; values
are quoted so that they read back as themselves (PromQL's escapes are Python's for these);
regular expressions match exactly the names given; the pods a scope selects are narrowed by
each criterion given."""

from __future__ import annotations

import ast
import re
from datetime import UTC, datetime, timedelta

import pytest

from lockstep.domain.metrics import Window
from lockstep.services.metrics.prometheus_source import evaluated_window, shown_url
from lockstep.services.metrics.promql import (
    RULES,
    PodSelection,
    any_of,
    duration,
    kube_state_label,
    query,
    quoted,
    selected_pods,
)
from lockstep.services.metrics.sources import FROM_SAMPLES

TRICKY = [
    "plain",
    'a"b',
    "back\\slash",
    "line\nbreak\r\ttab",
    '"} or vector(1) or up{a="',
    "\\",
    "bell\x07 and \x7f",
    "ünïcødé ✓",
    "",
]


@pytest.mark.parametrize("value", TRICKY)
def test_a_quoted_value_reads_back_as_itself(value: str) -> None:
    literal = quoted(value)
    assert literal.startswith('"') and literal.endswith('"')
    assert "\n" not in literal  # PromQL ends a string at a line break
    assert ast.literal_eval(literal) == value


def test_a_regular_expression_matches_exactly_the_names_given() -> None:
    names = ["node-a", "n.b", "x|y", "(z)", "a+b", "^$"]
    pattern = ast.literal_eval(any_of(names))
    for name in names:
        assert re.fullmatch(pattern, name), name
    for other in ["node-b", "nxb", "x", "y", "z", "aab", "", "node-a|n.b"]:
        assert not re.fullmatch(pattern, other), other
    with pytest.raises(ValueError, match="at least one"):
        any_of([])


def test_durations_are_whole_seconds_or_milliseconds() -> None:
    assert duration(timedelta(seconds=60)) == "60s"
    assert duration(timedelta(seconds=1.5)) == "1500ms"
    assert duration(timedelta(0)) == "1ms"


def test_lockstep_labels_as_kube_state_metrics_names_them() -> None:
    assert kube_state_label("lockstep.io/workload-id") == "label_lockstep_io_workload_id"
    assert kube_state_label("app.kubernetes.io/managed-by") == "label_app_kubernetes_io_managed_by"


def test_every_measured_type_has_a_query_and_the_same_shape_as_the_samples() -> None:
    assert set(RULES) == set(FROM_SAMPLES)
    for name, rule in RULES.items():
        assert rule.per_gpu == FROM_SAMPLES[name].per_gpu, name
        assert rule.source, name
        text = query(name, PodSelection(), span=timedelta(seconds=60))
        assert "[60s]" in text
        assert text.count("(") == text.count(")"), name
    with pytest.raises(KeyError):
        query("NVLINK_BANDWIDTH", PodSelection(), span=timedelta(seconds=60))


def test_each_type_reads_its_exporters_series() -> None:
    def of(name: str) -> str:
        return query(name, PodSelection(workload_id="w"), span=timedelta(seconds=30))

    assert "rate(container_cpu_usage_seconds_total{" in of("CPU_USAGE_CORES")
    assert 'container!="", container!="POD"' in of("CPU_MEMORY_USAGE_BYTES")
    assert "container_memory_working_set_bytes" in of("CPU_MEMORY_USAGE_BYTES")
    assert of("GPU_UTILIZATION").startswith("avg(")
    assert of("GPU_UTILIZATION_PER_GPU").startswith("avg by (gpu) (")
    assert "DCGM_FI_DEV_FB_USED" in of("GPU_MEMORY_USAGE_BYTES")
    assert of("GPU_MEMORY_USAGE_BYTES").endswith(f" * {2**20}")
    assert 'phase=~"Pending|Running|Unknown"' in of("POD_COUNT")
    assert 'phase=~"Running"' in of("RUNNING_POD_COUNT")
    assert 'resource="nvidia_com_gpu"' in of("GPU_ALLOCATION")
    assert of("GPU_ALLOCATION") == of("ALLOCATED_GPU")


def test_the_pods_selected_are_narrowed_by_each_criterion() -> None:
    span = timedelta(seconds=10)
    anyone = selected_pods(PodSelection(), span)
    assert 'kube_pod_labels{label_lockstep_io_workload_id!=""}[10s]' in anyone
    assert "kube_pod_info" not in anyone
    narrowed = selected_pods(
        PodSelection(
            workload_id="w-1",
            pod="train-master-0",
            namespaces=["runai-a"],
            project_ids=["7", "12"],
            nodes=["node-a"],
        ),
        span,
    )
    assert (
        'kube_pod_labels{namespace=~"runai-a", label_lockstep_io_workload_id="w-1", '
        'pod="train-master-0", label_lockstep_io_project_id=~"12|7"}[10s]'
    ) in narrowed
    assert 'kube_pod_info{namespace=~"runai-a", node=~"node-a"}[10s]' in narrowed
    assert narrowed.startswith("max by (namespace, pod) (")


def test_a_namespace_narrows_every_series_read() -> None:
    text = query("GPU_ALLOCATION", PodSelection(namespaces=["runai-a"]), span=timedelta(seconds=5))
    selectors = re.findall(r"\b(kube_\w+|container_\w+|DCGM_\w+)\{([^}]*)\}", text)
    assert selectors
    for name, matchers in selectors:
        assert 'namespace=~"runai-a"' in matchers, name
    bare = query("GPU_UTILIZATION", PodSelection(namespaces=["runai-a"]), span=timedelta(seconds=5))
    assert 'DCGM_FI_DEV_GPU_UTIL{namespace=~"runai-a"}' in bare


def test_an_empty_criterion_selects_no_pod() -> None:
    assert PodSelection(nodes=[]).selects_none
    assert PodSelection(project_ids=[]).selects_none
    assert PodSelection(namespaces=[]).selects_none
    assert not PodSelection().selects_none
    assert PodSelection(nodes=["a"], workload_id="").selects_none
    assert PodSelection(workload_id="w", pod="").selects_none
    assert not PodSelection(nodes=["a"], workload_id="w", pod="p").selects_none


def test_a_window_is_asked_as_it_is_or_at_the_finest_prometheus_measures() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    asked = Window(start, start + timedelta(minutes=10), 20)
    assert evaluated_window(asked, timedelta(minutes=1)) is asked
    every = evaluated_window(Window(start, start + timedelta(minutes=10), 0), timedelta(minutes=1))
    assert every.points == 10
    assert every.step == timedelta(minutes=1)
    long = evaluated_window(Window(start, start + timedelta(days=30), 0), timedelta(minutes=1))
    assert long.points == 1000
    tiny = evaluated_window(Window(start, start + timedelta(milliseconds=5), 20), timedelta(1))
    assert tiny.points == 5


def test_a_url_is_shown_without_its_credentials() -> None:
    assert shown_url("http://user:secret@prometheus:9090/prom") == "http://prometheus:9090/prom"
    assert shown_url("http://prometheus:9090") == "http://prometheus:9090"
