"""The instruments lockstep keeps of its own health: HTTP requests by route and status, with
their latency; reconcile passes and scheduling cycles; the reconcile queue's depth; store
commits; pods started and failed; audit records that waited for room, and those lost.

Each process makes one `Instruments` when it starts (the API in `create_app`, the reconciler
in its process) and hands it to what it measures. When lockstep serves with its reconciler in
a process of its own, both write to one directory (`use_directory`, prometheus_client's
multiprocess mode) and `/metrics` sums them; otherwise the instruments live in a registry of
their own. What `/metrics` tells of workloads, projects and nodes is read from the store by the
metrics use cases (services/metrics/gauges.py).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    multiprocess,
    values,
)

MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Seconds; from a cached read (about a millisecond) to a slow store."""


def use_directory(directory: Path, *, fresh: bool) -> None:
    """Make every instrument this process makes from now on write to `directory`, as its
    children's will (they inherit the variable). `fresh`: empty it first (the server, at start:
    what a previous run left must not count)."""
    if fresh:
        shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)
    os.environ[MULTIPROCESS_VARIABLE] = str(directory)
    values.ValueClass = values.MultiProcessValue()  # type: ignore[no-untyped-call]


def multiprocess_directory() -> Path | None:
    """Where this process's instruments write, when they are shared between processes."""
    directory = os.environ.get(MULTIPROCESS_VARIABLE)
    return Path(directory) if directory else None


def forget_process(pid: int) -> None:
    """A process that wrote instruments has ended: its live gauges stop counting."""
    if multiprocess_directory() is not None:
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


class Instruments:
    """One process's instruments. Shared between processes (see `use_directory`) they belong
    to no registry here: `/metrics` reads them all from the directory."""

    def __init__(self) -> None:
        # No `_created` series beside each counter and histogram.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        shared = multiprocess_directory() is not None
        self.registry: CollectorRegistry | None = None if shared else CollectorRegistry()
        registry = self.registry
        self.http_requests = Counter(
            "lockstep_http_requests",
            "HTTP requests answered, by method, route template and status code.",
            ["method", "route", "status"],
            registry=registry,
        )
        self.http_latency = Histogram(
            "lockstep_http_request_duration_seconds",
            "Time from a request's arrival to the end of its response, by method and route.",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.reconcile_pass = Histogram(
            "lockstep_reconcile_pass_duration_seconds",
            "Time one reconcile pass took: observing the workloads it was given and writing.",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.scheduling_cycle = Histogram(
            "lockstep_scheduling_cycle_duration_seconds",
            "Time one scheduling cycle took: heads, fair shares, admission, preemption.",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.queue_depth = Gauge(
            "lockstep_reconcile_queue_depth",
            "Workloads waiting for the reconciler, as its last pass began.",
            multiprocess_mode="livemax",
            registry=registry,
        )
        self.store_commit = Histogram(
            "lockstep_store_commit_duration_seconds",
            "Time a write transaction took, from its start to its commit.",
            ["durable"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.pods_started = Counter(
            "lockstep_pods_started",
            "Pods that started running (each run of a pod again counts).",
            registry=registry,
        )
        self.pods_failed = Counter(
            "lockstep_pods_failed",
            "Pods that ended failed (stopped by lockstep or not).",
            registry=registry,
        )
        self.audit_records_waited = Counter(
            "lockstep_audit_records_waited",
            "Audit records whose call waited for room in the full audit queue.",
            registry=registry,
        )
        self.audit_records_dropped = Counter(
            "lockstep_audit_records_dropped",
            "Audit records lost: the queue stayed full past the longest wait, or the store "
            "could not take them when the server stopped.",
            registry=registry,
        )

    def observe_commit(self, seconds: float, durable: bool) -> None:
        """A write transaction's duration (the store's `on_commit`)."""
        self.store_commit.labels("true" if durable else "false").observe(seconds)
