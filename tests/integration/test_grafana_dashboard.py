"""deploy/grafana/lockstep-dashboard.json, the Grafana dashboard of lockstep's `/metrics`: its
structure (panels with unique ids, titles, types, places that do not overlap, targets with an
expression and a refId, the Prometheus data source and template variables it uses defined),
every metric its expressions name exposed by a live lockstep, and every expression evaluated
by a real Prometheus scraping it — without an error, and with a series wherever the metrics it
reads have samples."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.api import Api, poll
from tests.support.prometheus import evaluate, query, scraping
from tests.support.requests import python, single_pod, sleeping
from tests.support.server import LiveServer

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "lockstep-dashboard.json"
GRID_COLUMNS = 24
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
BUILT_IN_VARIABLES = {"__rate_interval", "__interval", "__range", "__range_s", "__interval_ms"}
SUBSTITUTES = {"__rate_interval": "1m", "__interval": "15s", "__range": "1h"}
"""What Grafana would put in place of its built-in variables, to evaluate an expression."""

# --- reading PromQL --------------------------------------------------------------------------

KEYWORDS = {
    # binary operators and modifiers
    "and", "or", "unless", "bool", "offset", "atan2",
    "by", "without", "on", "ignoring", "group_left", "group_right",
    # aggregation operators (they may come before their `by (…)` and parenthesis)
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
    "bottomk", "topk", "quantile", "limitk", "limit_ratio",
    # number literals
    "inf", "nan",
}  # fmt: skip
VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
MATCHERS = re.compile(r"\{[^}]*\}")
RANGE = re.compile(r"\[[^\]]*\]")
GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
TOKEN = re.compile(
    r"(?P<number>0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?(?:ms|[smhdwy])*)"
    r"|(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)"
)


def variables_in(expression: str) -> set[str]:
    return {next(g for g in m.groups() if g) for m in VARIABLE.finditer(expression)}


def substituted(expression: str, values: dict[str, str]) -> str:
    return VARIABLE.sub(lambda m: values[next(g for g in m.groups() if g)], expression)


def metric_names(expression: str) -> set[str]:
    """The metric names an expression reads: its identifiers that are not a function called,
    a keyword, an aggregation, a label (inside `{…}` or a grouping's `(…)`) or in a string."""
    text = VARIABLE.sub("1", expression)
    for pattern in (STRING, MATCHERS, RANGE, GROUPING):
        text = pattern.sub(" ", text)
    names = set()
    for token in TOKEN.finditer(text):
        name = token.group("name")
        if name is None or name.lower() in KEYWORDS:
            continue
        if text[token.end() :].lstrip().startswith("("):
            continue  # a function
        names.add(name)
    return names


def test_metric_names_are_what_an_expression_reads_and_nothing_else() -> None:
    expression = (
        'histogram_quantile(0.99, sum by (le, route) (rate(x_seconds_bucket{route=~"$r",'
        ' status!="5xx"}[$__rate_interval]))) / on (route) group_left sum without (pod)'
        " (y_total offset 5m) > bool 1e3 and z"
    )
    assert metric_names(expression) == {"x_seconds_bucket", "y_total", "z"}
    assert variables_in(expression) == {"r", "__rate_interval"}
    assert metric_names('label_values(up{job="a"}, job)') == {"up", "job"}  # see `_label_values`


# --- the dashboard's structure ---------------------------------------------------------------


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def panels() -> list[dict[str, Any]]:
    return [p for p in dashboard()["panels"] if p["type"] != "row"]


def expressions() -> list[tuple[str, str]]:
    """(panel title and refId, expression) of every target."""
    return [(f"{p['title']} {t['refId']}", t["expr"]) for p in panels() for t in p["targets"]]


def variables() -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in dashboard()["templating"]["list"]}


def _label_values(variable: dict[str, Any]) -> tuple[str, str]:
    """A query variable's `label_values(selector, label)`: the selector and the label."""
    definition = variable["query"]["query"] if isinstance(variable["query"], dict) else ""
    found = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", definition)
    assert found, f"variable {variable['name']}: {definition!r} is not label_values(…, label)"
    assert variable["definition"] == definition
    return found.group(1), found.group(2)


def test_the_dashboard_is_a_grafana_dashboard_model() -> None:
    model = dashboard()
    assert 36 <= model["schemaVersion"] <= 41
    assert model["title"] and model["uid"]
    ids = [p["id"] for p in model["panels"]]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    cells: dict[tuple[int, int], str] = {}
    for panel in model["panels"]:
        assert panel["title"] and panel["type"], panel
        place = panel["gridPos"]
        assert all(isinstance(place[k], int) for k in ("x", "y", "w", "h")), panel["title"]
        assert place["x"] >= 0 and place["w"] > 0 and place["x"] + place["w"] <= GRID_COLUMNS
        for x in range(place["x"], place["x"] + place["w"]):
            for y in range(place["y"], place["y"] + place["h"]):
                assert (x, y) not in cells, f"{panel['title']} overlaps {cells[(x, y)]}"
                cells[(x, y)] = panel["title"]
    assert len(panels()) >= 15
    for panel in panels():
        assert panel["datasource"] == DATASOURCE, panel["title"]
        targets = panel["targets"]
        assert targets, panel["title"]
        assert len({t["refId"] for t in targets}) == len(targets), panel["title"]
        for target in targets:
            assert target["refId"] and target["expr"].strip(), panel["title"]
            assert target["datasource"] == DATASOURCE, panel["title"]


def test_the_data_source_and_every_variable_used_are_defined() -> None:
    defined = variables()
    source = defined["datasource"]
    assert source["type"] == "datasource" and source["query"] == "prometheus"
    used: set[str] = set()
    for _, expression in expressions():
        used |= variables_in(expression)
    for variable in defined.values():
        if variable["type"] == "query":
            assert variable["datasource"] == DATASOURCE
            selector, _ = _label_values(variable)
            used |= variables_in(selector)
    assert {"project", "workload"} <= used
    assert used - BUILT_IN_VARIABLES <= set(defined), "every variable used is defined"
    for name in ("project", "workload"):
        assert defined[name]["type"] == "query"
        assert defined[name]["includeAll"] and defined[name]["allValue"] == ".*"


def test_every_panel_reads_a_metric() -> None:
    for where, expression in expressions():
        assert metric_names(expression), where


# --- against a live lockstep and a real Prometheus -------------------------------------------


Families = dict[str, tuple[str, list[float]]]
"""Family name → its type and its samples' values, as `/metrics` exposes them."""


def exposed(api: Api) -> Families:
    text = api.get("/metrics").text
    return {
        f.name: (f.type, [s.value for s in f.samples]) for f in text_string_to_metric_families(text)
    }


SUFFIXES = {
    "_total": {"counter"},
    "_bucket": {"histogram"},
    "_count": {"histogram", "summary"},
    "_sum": {"histogram", "summary"},
}


def family_of(name: str, families: Families) -> str | None:
    """The family a name in PromQL reads, as prometheus_client exposes it: a counter as
    `…_total`, a histogram as `…_bucket`, `…_count` and `…_sum`, any other family as itself."""
    if name in families and families[name][0] not in {"counter", "histogram", "summary"}:
        return name
    for suffix, types in SUFFIXES.items():
        base = name.removesuffix(suffix)
        if base != name and base in families and families[base][0] in types:
            return base
    return None


def dashboard_metrics() -> set[str]:
    names = set()
    for _, expression in expressions():
        names |= metric_names(expression)
    for variable in variables().values():
        if variable["type"] == "query":
            names |= metric_names(_label_values(variable)[0])
    return names


@pytest.fixture
def prometheus(live_server: LiveServer, tmp_path: Path) -> Iterator[str]:
    with scraping(live_server, tmp_path) as url:
        yield url


def test_every_metric_of_the_dashboard_is_exposed_and_every_expression_evaluates(
    live_server: LiveServer, prometheus: str
) -> None:
    api = live_server.api()
    busy = api.create(sleeping(api.cluster_id(), name="busy", workers=1))["workloadId"]
    api.wait_for(busy, {"Running"}, timeout=60)
    failing = single_pod(
        api.cluster_id(), name="failing", command=sys.executable, args=python("raise SystemExit(3)")
    )
    api.create(failing, kind="trainings")
    wanted = dashboard_metrics()
    missing: list[str] = []

    def all_exposed() -> Families | None:
        families = exposed(api)
        missing[:] = sorted(n for n in wanted if family_of(n, families) is None)
        failed = sum(families.get("lockstep_pods_failed", ("counter", []))[1])
        return families if not missing and failed >= 1 else None

    families = poll(
        all_exposed, timeout=60, what=lambda: f"the dashboard's metrics; missing: {missing}"
    )
    # Every family the dashboard reads has samples but GPU utilization: no GPU is sampled here.
    empty = {n for n in wanted if not families[family_of(n, families) or n][1]}
    assert empty == {"runai_gpu_utilization_per_workload"}

    poll(lambda: query(prometheus, 'up{job="lockstep"} == 1'), timeout=60, what="a scrape")
    every = {**SUBSTITUTES, "project": ".*", "workload": ".*"}
    unanswered: list[str] = []

    def every_expression_answered() -> bool | None:
        unanswered.clear()
        for where, expression in expressions():
            answer = evaluate(prometheus, substituted(expression, every))
            assert answer is not None, where
            assert answer["status"] == "success", f"{where}: {answer.get('error')}"
            if not answer["data"]["result"] and not metric_names(expression) & empty:
                unanswered.append(where)
        return None if unanswered else True

    poll(
        every_expression_answered,
        timeout=60,
        every=1,
        what=lambda: f"a series for every panel; none yet for {unanswered}",
    )
    for name, variable in variables().items():
        if variable["type"] == "query":
            selector, label = _label_values(variable)
            found = query(prometheus, substituted(selector, every)) or []
            assert "default" in {series["metric"].get("project") for series in found}, name
            assert all(label in series["metric"] for series in found), name

    # One project and one workload chosen: each panel shows theirs only.
    one = {**every, "project": "default", "workload": "busy"}
    chosen = {"project": "default", "queue_name": "default", "workload_name": "busy"}
    for where, expression in expressions():
        if not variables_in(expression) & {"project", "workload"}:
            continue
        found = query(prometheus, substituted(expression, one)) or []
        assert found or metric_names(expression) & empty, where
        for series in found:
            shown = {k: v for k, v in series["metric"].items() if k in chosen}
            assert shown and shown.items() <= chosen.items(), f"{where}: {series['metric']}"
