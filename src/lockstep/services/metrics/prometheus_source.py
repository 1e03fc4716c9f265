"""`PrometheusMetrics`: the measured figures of the Kubernetes runtime, asked of the cluster's
Prometheus (`LOCKSTEP_PROMETHEUS_URL`) through its HTTP API, `POST /api/v1/query_range`, one
query per metric type (services/metrics/promql.py). Built by create_app; the metrics service
calls it on a worker thread, as it waits on the network (`remote`).

The answer has the shape the local runtime's has (services/metrics/sources.py): a point at
each of the window's timestamps that has data, each worth the figure over its bucket. A
Prometheus that cannot be reached, answers late, refuses a query or answers something else
than its API's JSON is `MetricsUnavailable` (503), naming its URL; an answer is read up to
`max_bytes`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

import httpx
import orjson

from lockstep.domain.errors import MetricsUnavailable
from lockstep.domain.metrics import MAX_SAMPLES, Measurement, Point, Window
from lockstep.services.metrics import promql
from lockstep.services.metrics.promql import RULES, PodSelection
from lockstep.services.metrics.sources import SeriesQuery, device_order
from lockstep.store.database import Database
from lockstep.store.metrics import SampleScope

DEFAULT_TIMEOUT_SECONDS = 10.0
DEFAULT_MIN_RANGE = timedelta(minutes=1)
"""The shortest range a point is measured over: a rate needs two scrapes in it, so at least
twice the scrape interval (the Prometheus Operator scrapes every 30 s unless told otherwise)."""
MAX_ANSWER_BYTES = 32 * 2**20
QUERY_RANGE = "/api/v1/query_range"
MAX_REASON = 500
"""The most characters of a Prometheus's reason for refusing a query that a message quotes."""
PRECISION = timedelta(milliseconds=1)
"""Prometheus's times are in milliseconds."""

Selector = Callable[[SampleScope], PodSelection]
"""Which pods a scope means, as labels tell them (`store_selector`)."""


class PrometheusMetrics:
    """Measured series from a Prometheus server at `url`, asked with `client` (each request
    bounded by `timeout`); `selector` turns a request's scope into the pods it selects."""

    remote = True

    def __init__(
        self,
        url: str,
        *,
        client: httpx.Client,
        selector: Selector,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        min_range: timedelta = DEFAULT_MIN_RANGE,
        max_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        self._endpoint = url.rstrip("/") + QUERY_RANGE
        self._shown = shown_url(url)
        self._client = client
        self._selector = selector
        self._timeout = timeout
        self._min_range = min_range
        self._max_bytes = max_bytes

    def series(self, query: SeriesQuery) -> list[Measurement]:
        selection = self._selector(query.scope)
        window = evaluated_window(query.window, self._min_range)
        span = max(window.step, self._min_range)
        measurements: list[Measurement] = []
        for name in query.types:
            rule = RULES[name]
            found = (
                {}
                if selection.selects_none
                else self._ask(name, promql.query(name, selection, span=span), window)
            )
            if not rule.per_gpu:
                measurements.append(Measurement(name, found.get("", [])))
                continue
            devices = sorted((gpu for gpu in found if gpu), key=device_order)
            measurements.extend(
                Measurement(name, found[gpu], labels={"gpu": gpu}) for gpu in devices
            )
            if not devices:
                measurements.append(Measurement(name, []))
        return measurements

    def _ask(self, name: str, expression: str, window: Window) -> dict[str, list[Point]]:
        """The points of each series of `expression` at the window's timestamps, by the series'
        `gpu` label ("" where it has none)."""
        step = window.step.total_seconds()
        form = {
            "query": expression,
            "start": _seconds(window.start + window.step),
            # Half a step past the end, so that the last point is not lost to rounding.
            "end": _seconds(window.end + window.step / 2),
            "step": f"{step:.3f}",
            "timeout": f"{self._timeout:g}",  # seconds
        }
        body = self._post(name, form)
        return _points(body, window, where=f"{name} from {self._shown}")

    def _post(self, name: str, form: Mapping[str, str]) -> Any:
        """The JSON of Prometheus's answer to `form`, read within the timeout and up to
        `max_bytes`, or `MetricsUnavailable` saying what went wrong."""
        where = f"the cluster's Prometheus at {self._shown}"
        late = MetricsUnavailable(f"{where} did not answer {name} within {self._timeout:g} s")
        deadline = time.monotonic() + self._timeout
        try:
            with self._client.stream(
                "POST", self._endpoint, data=form, timeout=self._timeout
            ) as response:
                content = bytearray()
                for chunk in response.iter_bytes():
                    content += chunk
                    if len(content) > self._max_bytes:
                        raise MetricsUnavailable(
                            f"{where} answered more than {self._max_bytes} bytes for {name}"
                        )
                    if time.monotonic() > deadline:
                        raise late
                status = response.status_code
        except httpx.TimeoutException as error:
            raise late from error
        except httpx.HTTPError as error:
            reason = str(error) or type(error).__name__
            raise MetricsUnavailable(f"{where} cannot be reached: {reason}") from error
        try:
            body = orjson.loads(content)
        except orjson.JSONDecodeError:
            body = None
        if not isinstance(body, dict) or body.get("status") not in ("success", "error"):
            raise MetricsUnavailable(
                f"{where} answered {name} with HTTP {status} and no Prometheus API response "
                f"(is LOCKSTEP_PROMETHEUS_URL the server's address?)"
            )
        if body["status"] == "error" or status != 200:
            kind = body.get("errorType", "error")
            reason = str(body.get("error", "no reason given"))
            if len(reason) > MAX_REASON:
                reason = reason[:MAX_REASON] + "…"
            raise MetricsUnavailable(
                f"{where} refused the query of {name} (HTTP {status}, {kind}): {reason}"
            )
        return body


def shown_url(url: str) -> str:
    """`url` as a message may show it: without credentials."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return "(an invalid URL)"
    return str(parsed.copy_with(username=None, password=None))


def evaluated_window(window: Window, min_range: timedelta) -> Window:
    """The window Prometheus is asked for. With 0 points (every sample as stored, for the
    local runtime) a point per `min_range` — the finest Prometheus can measure — at most
    `MAX_SAMPLES` of them; a window of a few milliseconds has at most a point per
    millisecond, Prometheus's precision."""
    span = window.end - window.start
    finest = max(1, math.floor(span / PRECISION))
    if window.points:
        points = min(window.points, finest)
    else:
        points = min(MAX_SAMPLES, finest, max(1, math.ceil(span / min_range)))
    return window if points == window.points else Window(window.start, window.end, points)


def _seconds(moment: datetime) -> str:
    return f"{moment.timestamp():.3f}"


def _points(body: Any, window: Window, *, where: str) -> dict[str, list[Point]]:
    """A `matrix` answer's values as points dated at the window's timestamps (the one each
    evaluation was made at), by the series' `gpu` label; NaN and infinities left out."""
    data = body.get("data")
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(result, list) or data.get("resultType") != "matrix":
        raise MetricsUnavailable(f"Prometheus answered {where} with no matrix of series")
    stamps = window.timestamps()
    first = (window.start + window.step).timestamp()
    step = window.step.total_seconds()
    found: dict[str, list[Point]] = {}
    try:
        for series in result:
            gpu = str(series.get("metric", {}).get("gpu", ""))
            points = found.setdefault(gpu, [])
            for at, text in series["values"]:
                value = float(text)
                index = round((float(at) - first) / step)
                if 0 <= index < len(stamps) and math.isfinite(value):
                    points.append(Point(stamps[index], value))
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        raise MetricsUnavailable(f"Prometheus answered {where} with a malformed series") from error
    return {gpu: sorted(points, key=lambda p: p.at) for gpu, points in found.items()}


def store_selector(database: Database) -> Selector:
    """Which pods a scope means, from the store: a workload's (and a pod's) in the workload's
    namespace; a project's in its namespace, by its id; a department's, those of its
    projects; nodes as named. The Kubernetes runtime puts each workload's pods in its
    project's namespace (runtimes/kubernetes/identity.py `namespace_of`)."""

    def select(scope: SampleScope) -> PodSelection:
        namespaces: list[str] | None = None
        project_ids = None if scope.project_ids is None else list(scope.project_ids)
        by_org_unit = project_ids is not None or scope.department_id is not None
        with database.read() as unit:
            if scope.workload_id is not None:
                workload = unit.workloads.get(scope.workload_id, include_deleted=True)
                namespaces = [workload.namespace] if workload and workload.namespace else None
            projects = unit.organization.projects() if by_org_unit else []
        if scope.department_id is not None:
            project_ids = [
                p.id
                for p in projects
                if p.department_id == scope.department_id
                and (project_ids is None or p.id in project_ids)
            ]
        if project_ids is not None and namespaces is None:
            namespaces = [p.namespace for p in projects if p.id in project_ids]
        return PodSelection(
            workload_id=scope.workload_id,
            pod=scope.pod,
            namespaces=namespaces,
            project_ids=project_ids,
            nodes=None if scope.nodes is None else list(scope.nodes),
        )

    return select
