"""PromQL, pure: the query that measures each metric type of the pods a scope selects, over
the series a cluster's Prometheus already has — cAdvisor (the kubelet), kube-state-metrics and
NVIDIA's DCGM exporter. Called by `PrometheusMetrics` (services/metrics/prometheus_source.py), once
per type of a request; every value put into a query is quoted here (`quoted`, `any_of`), so
no name can change a query's meaning.

Which pods: lockstep's own, found by the labels the Kubernetes runtime puts on every pod
(`lockstep.io/workload-id`, `lockstep.io/project-id`, domain/labels.py) as
kube-state-metrics exposes them in `kube_pod_labels` (`label_lockstep_io_workload_id`, …;
kube-state-metrics must be told to, with `--metric-labels-allowlist`), narrowed by namespace,
pod name and node (`kube_pod_info`'s `node`). Every exporter's series carries the pod's
`namespace` and `pod`, so a figure is kept when its `(namespace, pod)` is among those selected.

Each point is the figure over the range that ends at it (its bucket, at least
`min_range`): a rate for the CPU counter, an average over time for gauges — as the local
runtime's answer averages the samples of each bucket (domain/metrics.py). Then pods (or
devices) are combined as `FROM_SAMPLES` combines them: summed, or averaged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import timedelta

from lockstep.domain.labels import PROJECT_ID, WORKLOAD_ID

MIB = 2**20
POD = "namespace, pod"
"""What identifies a pod in every exporter's series."""
CONTAINERS = 'container!="", container!="POD"'
"""cAdvisor's series of each container: not the pod's own cgroup (`container=""`, the sum of
its containers) nor the sandbox's pause container (`POD`), which would count twice."""


def kube_state_label(name: str) -> str:
    """The name kube-state-metrics gives a Kubernetes label in `kube_pod_labels`: `label_`,
    then the name with every character that is not a letter, digit or `_` made `_`."""
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", name)


WORKLOAD_LABEL = kube_state_label(WORKLOAD_ID)
PROJECT_LABEL = kube_state_label(PROJECT_ID)

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_REGEX_SPECIAL = frozenset("\\.+*?()|[]{}^$")


def quoted(value: str) -> str:
    """`value` as a PromQL string literal: backslashes, double quotes and control characters
    escaped, so that it ends where it should."""
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def literally(value: str) -> str:
    """`value` as an RE2 regular expression that matches exactly it."""
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in value)


def any_of(values: Collection[str]) -> str:
    """The literal of a regular expression matching exactly one of `values` (Prometheus
    anchors a label's regular expression at both ends). Needs at least one value."""
    if not values:
        raise ValueError("any_of needs at least one value")
    return quoted("|".join(literally(v) for v in sorted(set(values))))


def duration(span: timedelta) -> str:
    """A PromQL duration: whole seconds where it is, else whole milliseconds (at least one)."""
    milliseconds = max(1, round(span.total_seconds() * 1000))
    return f"{milliseconds // 1000}s" if milliseconds % 1000 == 0 else f"{milliseconds}ms"


@dataclass(frozen=True, slots=True)
class PodSelection:
    """lockstep's pods, narrowed by each criterion given (None: any; empty: none)."""

    workload_id: str | None = None
    pod: str | None = None
    namespaces: Collection[str] | None = None
    project_ids: Collection[str] | None = None
    nodes: Collection[str] | None = None

    @property
    def selects_none(self) -> bool:
        """A criterion that no pod of lockstep's meets: an empty list, an empty id or name
        (`label=""` would select the pods without the label)."""
        lists = (self.namespaces, self.project_ids, self.nodes)
        return "" in (self.workload_id, self.pod) or any(c is not None and not c for c in lists)


def _matchers(*matchers: str) -> str:
    return "{" + ", ".join(m for m in matchers if m) + "}"


def _in_namespaces(selection: PodSelection) -> str:
    return "" if selection.namespaces is None else f"namespace=~{any_of(selection.namespaces)}"


def selected_pods(selection: PodSelection, span: timedelta) -> str:
    """An instant vector of one series per pod selected that existed in the range `span`
    before each point (labels `namespace` and `pod`, value 1)."""
    labels = [_in_namespaces(selection)]
    if selection.workload_id is None:
        labels.append(f'{WORKLOAD_LABEL}!=""')  # lockstep's pods only
    else:
        labels.append(f"{WORKLOAD_LABEL}={quoted(selection.workload_id)}")
    if selection.pod is not None:
        labels.append(f"pod={quoted(selection.pod)}")
    if selection.project_ids is not None:
        labels.append(f"{PROJECT_LABEL}=~{any_of(selection.project_ids)}")
    span_text = duration(span)
    pods = f"max by ({POD}) (max_over_time(kube_pod_labels{_matchers(*labels)}[{span_text}]))"
    if selection.nodes is None:
        return pods
    placed = _matchers(_in_namespaces(selection), f"node=~{any_of(selection.nodes)}")
    return (
        f"{pods} and on ({POD}) max by ({POD}) (max_over_time(kube_pod_info{placed}[{span_text}]))"
    )


@dataclass(frozen=True, slots=True)
class _Inputs:
    """What a query is built of: `of(matchers)` selects a series with the namespace matcher
    (or none) added; `span` is the range each point covers; `pods` the pods selected."""

    of: Callable[[str], str]
    span: str
    pods: str


@dataclass(frozen=True, slots=True)
class Rule:
    """How one metric type is measured: where its figures come from (`source`, shown in the
    docs/metrics.md) and its query."""

    source: str
    build: Callable[[_Inputs], str]
    per_gpu: bool = False


def _per_pod(expression: str, inputs: _Inputs) -> str:
    """`expression`'s series of the pods selected."""
    return f"({expression}) and on ({POD}) ({inputs.pods})"


def _cpu(i: _Inputs) -> str:
    usage = f"rate({i.of(f'container_cpu_usage_seconds_total{{{CONTAINERS}}}')}[{i.span}])"
    return f"sum({_per_pod(f'sum by ({POD}) ({usage})', i)})"


def _memory(i: _Inputs) -> str:
    usage = (
        f"avg_over_time({i.of(f'container_memory_working_set_bytes{{{CONTAINERS}}}')}[{i.span}])"
    )
    return f"sum({_per_pod(f'sum by ({POD}) ({usage})', i)})"


def _devices(metric: str, i: _Inputs) -> str:
    """Each device of each pod selected (a pod's device: its `gpu` index on its node; the
    exporter's series of each container sharing it taken once)."""
    return _per_pod(f"max by ({POD}, gpu) (avg_over_time({i.of(metric)}[{i.span}]))", i)


def _pods_in(phases: str, i: _Inputs, *, over_time: str) -> str:
    """Per pod selected: `over_time` of its being in one of `phases` (1 or 0)."""
    phase = i.of(f"kube_pod_status_phase{{phase=~{quoted(phases)}}}")
    return _per_pod(f"max by ({POD}) ({over_time}({phase}[{i.span}]))", i)


def _gpus_held(i: _Inputs) -> str:
    requested = i.of('kube_pod_container_resource_requests{resource="nvidia_com_gpu"}')
    per_pod = f"sum by ({POD}) (max_over_time({requested}[{i.span}]))"
    running = _pods_in("Running", i, over_time="avg_over_time")
    return f"sum({per_pod} * on ({POD}) ({running}))"


_GPU_HELD = Rule(
    'kube-state-metrics `kube_pod_container_resource_requests{resource="nvidia_com_gpu"}` '
    "of each pod, times the part of the range it was Running",
    _gpus_held,
)

RULES: dict[str, Rule] = {
    "CPU_USAGE_CORES": Rule(
        "cAdvisor `rate(container_cpu_usage_seconds_total)` of each container, summed",
        _cpu,
    ),
    "CPU_MEMORY_USAGE_BYTES": Rule(
        "cAdvisor `container_memory_working_set_bytes` of each container, summed",
        _memory,
    ),
    "GPU_UTILIZATION": Rule(
        "DCGM exporter `DCGM_FI_DEV_GPU_UTIL` (%) of each device, averaged",
        lambda i: f"avg({_devices('DCGM_FI_DEV_GPU_UTIL', i)})",
    ),
    "GPU_UTILIZATION_PER_GPU": Rule(
        "the same by the device's `gpu` index",
        lambda i: f"avg by (gpu) ({_devices('DCGM_FI_DEV_GPU_UTIL', i)})",
        per_gpu=True,
    ),
    "GPU_MEMORY_USAGE_BYTES": Rule(
        "DCGM exporter `DCGM_FI_DEV_FB_USED` (MiB) of each device, summed, in bytes",
        lambda i: f"sum({_devices('DCGM_FI_DEV_FB_USED', i)}) * {MIB}",
    ),
    "GPU_MEMORY_USAGE_BYTES_PER_GPU": Rule(
        "the same by the device's `gpu` index",
        lambda i: f"avg by (gpu) ({_devices('DCGM_FI_DEV_FB_USED', i)}) * {MIB}",
        per_gpu=True,
    ),
    "POD_COUNT": Rule(
        "kube-state-metrics `kube_pod_status_phase`: pods Pending, Running or Unknown "
        "at some time in the range",
        lambda i: f"sum({_pods_in('Pending|Running|Unknown', i, over_time='max_over_time')})",
    ),
    "RUNNING_POD_COUNT": Rule(
        'kube-state-metrics `kube_pod_status_phase{phase="Running"}`: the part of the range '
        "each pod was Running, summed",
        lambda i: f"sum({_pods_in('Running', i, over_time='avg_over_time')})",
    ),
    "GPU_ALLOCATION": _GPU_HELD,
    "ALLOCATED_GPU": _GPU_HELD,
}
"""Each measured type (those of services/metrics/sources.py `FROM_SAMPLES`) and its query."""


def query(metric_type: str, selection: PodSelection, *, span: timedelta) -> str:
    """The PromQL that measures `metric_type` of the pods `selection` selects, each point
    over the `span` before it. `KeyError` for a type that is not measured."""
    rule = RULES[metric_type]
    namespaces = _in_namespaces(selection)

    def of(series: str) -> str:
        if not namespaces:
            return series
        if series.endswith("}"):
            return f"{series[:-1]}, {namespaces}}}"
        return f"{series}{{{namespaces}}}"

    return rule.build(_Inputs(of=of, span=duration(span), pods=selected_pods(selection, span)))
