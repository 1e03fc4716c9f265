"""`submit --wait`: what a person watches while a workload starts — its phase (and why it
waits) and each pod's phase and node, redrawn in place on a terminal, a line per change
otherwise — until it runs, or ends with the reason it failed; with `--follow`, the outcome
once the logs end; `--wait-for-completion`: the same display until it completes or fails.

Every restart is printed as it comes, a line of its own on a terminal too (above the redrawn
display): the workload's `BackOff` events, each saying which pod ended, with what exit code,
which restart comes and when (`hello: pod hello-master-0 exited with code 3; restart 1 of 6 in
10 s (at 2026-12-04T20:41:07Z)`). The events are read again only when what the display shows
changes (lockstep writes each BackOff event together with the phase message naming it)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lockstep.cli.connection import WORKLOAD_FAILED, fail

if TYPE_CHECKING:
    from rich.console import RenderableType

    from lockstep.sdk import Client

POLL_SECONDS = 0.5
BACKOFF = "BackOff"
"""The reason of the events that tell a restart (reconciler/outcome.py; the kubelet's too)."""

Settled = Callable[[dict[str, Any], list[dict[str, Any]]], "dict[str, Any] | None"]
"""The workload once the wait is over (None while it is not); raises to end the command."""


class Restarts:
    """The restarts of one workload not printed yet: its `BackOff` events, read again each
    time what is shown of it (phase, message, each pod's phase and restarts) changes."""

    def __init__(self, client: Client, workload_id: str) -> None:
        self._client = client
        self._workload_id = workload_id
        self._shown: set[str] = set()
        self._seen: object = None

    def new(self, workload: dict[str, Any], pods: list[dict[str, Any]]) -> list[str]:
        """A line for each restart not printed yet, oldest first:
        `<workload>: <the event's message>`."""
        seen = (
            workload["phase"],
            workload.get("phaseMessage"),
            sorted(
                (p["name"], p["k8sPhase"], [c.get("restartCount") for c in p.get("containers", [])])
                for p in pods
            ),
        )
        if seen == self._seen:
            return []
        self._seen = seen
        events = [
            e
            for e in self._client.events(self._workload_id)
            if e.get("reason") == BACKOFF and e["id"] not in self._shown
        ]
        self._shown.update(e["id"] for e in events)
        events.sort(key=lambda e: str(e.get("createdAt")))
        return [f"{workload['name']}: {e['message']}" for e in events]


def until_running(
    client: Client, workload_id: str, restarts: Restarts | None = None
) -> dict[str, Any]:
    """Watch the workload until it runs (or completes); exit 1 with its reason if it fails.
    `restarts`: those already printed (by an earlier watch of the same workload)."""
    return _watch(client, workload_id, _outcome, restarts)


def until_ended(
    client: Client, workload_id: str, restarts: Restarts | None = None
) -> dict[str, Any]:
    """Watch the workload until it completes; exit 1 with its reason if it fails, or if it is
    stopped (suspended) before it completes."""
    return _watch(client, workload_id, _ended, restarts)


def _watch(
    client: Client, workload_id: str, settled: Settled, restarts: Restarts | None
) -> dict[str, Any]:
    restarts = restarts or Restarts(client, workload_id)
    if sys.stderr.isatty():
        return _live(client, workload_id, settled, restarts)
    return _lines(client, workload_id, settled, restarts)


def outcome(client: Client, workload_id: str, restarts: Restarts | None = None) -> dict[str, Any]:
    """After its logs end: poll until the workload settles (its phase can lag its pods') —
    Completed, Failed or Stopped (suspended meanwhile) — printing each restart meanwhile, and
    exit 1 with its reason if it failed."""
    restarts = restarts or Restarts(client, workload_id)
    while True:
        workload, pods = _snapshot(client, workload_id)
        for line in restarts.new(workload, pods):
            print(line, file=sys.stderr, flush=True)
        if workload["phase"] in ("Completed", "Failed", "Stopped"):
            _outcome(workload, [])
            return workload
        time.sleep(POLL_SECONDS)


def _snapshot(client: Client, workload_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return client.get(workload_id), client.pods(workload_id)


def _outcome(workload: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The workload once it is settled: Completed, Failed, or Running with a pod that runs
    (its phase can still say Running for a moment after every pod has failed)."""
    if workload["phase"] == "Completed":
        return workload
    if workload["phase"] == "Running" and any(p["k8sPhase"] == "Running" for p in pods):
        return workload
    if workload["phase"] == "Failed":
        raise fail(
            f"workload {workload['name']} failed: {workload.get('phaseMessage') or ''}".rstrip(),
            WORKLOAD_FAILED,
        )
    return None


def _ended(workload: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The workload once it has ended: Completed, or Failed or Stopped (each exits 1)."""
    if workload["phase"] == "Stopped":
        raise fail(f"workload {workload['name']} was stopped before it completed", WORKLOAD_FAILED)
    if workload["phase"] in ("Completed", "Failed"):
        return _outcome(workload, pods)
    return None


def _lines(
    client: Client, workload_id: str, settled: Settled, restarts: Restarts
) -> dict[str, Any]:
    shown = ""
    while True:
        workload, pods = _snapshot(client, workload_id)
        for line in restarts.new(workload, pods):
            print(line, file=sys.stderr, flush=True)
        text = _headline(workload) + "".join(
            f"\n  {p['name']}  {p['k8sPhase']}" for p in sorted(pods, key=lambda p: p["name"])
        )
        if text != shown:
            print(text, file=sys.stderr, flush=True)
            shown = text
        done = settled(workload, pods)
        if done is not None:
            return done
        time.sleep(POLL_SECONDS)


def _live(client: Client, workload_id: str, settled: Settled, restarts: Restarts) -> dict[str, Any]:
    from rich.console import Console
    from rich.live import Live

    console = Console(stderr=True, highlight=False)
    workload, pods = _snapshot(client, workload_id)
    with Live(_view(workload, pods), console=console, refresh_per_second=4) as live:
        while True:
            for line in restarts.new(workload, pods):
                live.console.print(line, markup=False, highlight=False)
            live.update(_view(workload, pods))
            done = settled(workload, pods)
            if done is not None:
                return done
            time.sleep(POLL_SECONDS)
            workload, pods = _snapshot(client, workload_id)


def _headline(workload: dict[str, Any]) -> str:
    message = workload.get("phaseMessage")
    return f"{workload['name']}: {workload['phase']}" + (f" ({message})" if message else "")


def _view(workload: dict[str, Any], pods: list[dict[str, Any]]) -> RenderableType:
    from rich.table import Table

    styles = {"Running": "green", "Succeeded": "blue", "Failed": "red", "Pending": "yellow"}
    table = Table(title=_headline(workload), title_justify="left", box=None, header_style="bold")
    for column in ("POD", "PHASE", "NODE"):
        table.add_column(column)
    for pod in sorted(pods, key=lambda p: p["name"]):
        phase = pod["k8sPhase"]
        style = styles.get(phase)
        table.add_row(
            pod["name"], f"[{style}]{phase}[/]" if style else phase, pod.get("nodeName") or ""
        )
    return table
