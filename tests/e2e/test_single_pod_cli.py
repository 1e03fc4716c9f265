"""`lockstep training submit` (single-node trainings) and `lockstep workspace
submit|list|describe|logs|suspend|resume|delete`, run as a user runs them (subprocesses) against
a live server: waiting exits with the outcome (0 completed, 1 failed, naming the exit code),
a Job's completions and parallelism, a workspace's port reached where describe says, and the
commands shared with distributed workloads calling each kind's own path."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_training_cli import Cli
from tests.support.api import ADMIN_ID, ADMIN_SECRET, poll
from tests.support.server import LiveServer

PYTHON = sys.executable
SERVE = (
    "import http.server, os\n"
    "port = int(os.environ['LOCKSTEP_HOST_PORT_8888'])\n"
    "print('serving', flush=True)\n"
    "http.server.HTTPServer(('127.0.0.1', port), http.server.SimpleHTTPRequestHandler)"
    ".serve_forever()\n"
)


@pytest.fixture
def cli(live_server: LiveServer, tmp_path: Path) -> Iterator[Cli]:
    run = Cli(live_server, tmp_path)
    run("login", "--url", live_server.url, "--client-id", ADMIN_ID, "--client-secret", ADMIN_SECRET)
    yield run


def _listed(cli: Cli, group: str, name: str) -> dict[str, Any] | None:
    return next((w for w in cli.json(group, "list", "--json") if w["name"] == name), None)


def _in_phase(cli: Cli, group: str, name: str, phase: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        found = _listed(cli, group, name)
        return found if found is not None and found["phase"] == phase else None

    found: dict[str, Any] = poll(reached, timeout=60, what=f"{name} {phase}")
    return found


def test_a_training_completes_and_is_managed_beside_distributed_ones(cli: Cli) -> None:
    submitted = cli(
        "training",
        "submit",
        "fit",
        "-p",
        "1",
        "-i",
        "python:3.11",
        "-e",
        "GREETING=hi",
        "--wait-for-completion",
        "--",
        PYTHON,
        "-c",
        "import os; print(os.environ['GREETING'], 'from', os.environ['JOB_COMPLETION_INDEX'])",
    )
    assert "training fit submitted" in submitted.stdout
    assert "fit: " in submitted.stderr  # the progress display
    item = _listed(cli, "training", "fit")
    assert item is not None
    assert (item["type"], item["phase"], item["priorityClassName"]) == (
        "Training",
        "Completed",
        "train",
    )
    table = cli("training", "list").stdout
    (row,) = [line for line in table.splitlines() if line.startswith("fit ")]
    assert "Training" in row and "Completed" in row
    assert "TYPE" in table.splitlines()[0]
    described = cli("training", "describe", "fit").stdout
    assert "Type:       Training" in described and "Phase:      Completed" in described
    assert "fit-0" in described and "Framework:" not in described
    assert cli("training", "logs", "fit").stdout == "fit-0 | hi from 0\n"
    assert cli("training", "logs", "fit", "--pod", "fit-0").stdout == "hi from 0\n"
    # Not a workspace: the workspace group does not see it.
    cli("workspace", "describe", "fit", status=3)
    assert _listed(cli, "workspace", "fit") is None
    cli("training", "delete", "fit", "--wait")
    cli("training", "describe", "fit", status=3)


def test_a_failing_training_exits_1_naming_its_exit_code(cli: Cli) -> None:
    failed = cli(
        "training",
        "submit",
        "broken",
        "-p",
        "1",
        "-i",
        "python:3.11",
        "--backoff-limit",
        "0",
        "--wait-for-completion",
        "--",
        PYTHON,
        "-c",
        "import sys; print('bad data'); sys.exit(7)",
        status=1,
    )
    assert "error: workload broken failed" in failed.stderr
    assert "exited with code 7" in failed.stderr, failed.stderr
    described = cli("training", "describe", "broken").stdout
    assert "Phase:      Failed" in described and "exited with code 7" in described


def test_completions_run_parallelism_at_a_time(cli: Cli) -> None:
    cli(
        "training",
        "submit",
        "sweep",
        "-p",
        "1",
        "-i",
        "python:3.11",
        "--parallelism",
        "2",
        "--completions",
        "4",
        "--wait-for-completion",
        "--",
        PYTHON,
        "-c",
        "import os; print('index', os.environ['JOB_COMPLETION_INDEX'])",
    )
    item = _listed(cli, "training", "sweep")
    assert item is not None and item["phase"] == "Completed"
    assert item["requestedPods"]["number"] == 2
    described = cli("training", "describe", "sweep").stdout
    assert "Completions: 4" in described and "Parallelism: 2" in described
    assert all(f"sweep-{i}" in described for i in range(4))
    logs = sorted(cli("training", "logs", "sweep").stdout.splitlines())
    assert logs == [f"sweep-{i} | index {i}" for i in range(4)]
    spec = cli.json("training", "describe", "sweep", "-o", "json")["spec"]["spec"]
    assert (spec["completions"], spec["parallelism"]) == (4, 2)


def test_a_training_is_suspended_resumed_and_deleted_on_its_own_path(cli: Cli) -> None:
    cli(
        "training",
        "submit",
        "long",
        "-p",
        "1",
        "-i",
        "python:3.11",
        "--wait",
        "--",
        PYTHON,
        "-c",
        "import time; print('started', flush=True); time.sleep(600)",
    )
    assert "long suspending" in cli("training", "suspend", "long").stdout
    _in_phase(cli, "training", "long", "Stopped")
    assert "long resuming" in cli("training", "resume", "long").stdout
    _in_phase(cli, "training", "long", "Running")
    assert "long deleted" in cli("training", "delete", "long", "--wait").stdout
    assert _listed(cli, "training", "long") is None


def test_a_workspace_with_a_port_is_reached_where_describe_says(cli: Cli) -> None:
    submitted = cli(
        "workspace",
        "submit",
        "notebook",
        "-p",
        "1",
        "-i",
        "python:3.11",
        "--port",
        "8888",
        "--wait",
        "--",
        PYTHON,
        "-c",
        SERVE,
    )
    assert "workspace notebook submitted" in submitted.stdout
    item = _listed(cli, "workspace", "notebook")
    assert item is not None
    assert (item["type"], item["priorityClassName"]) == ("Workspace", "build")
    table = cli("workspace", "list").stdout
    assert table.splitlines()[0].split() == ["NAME", "PROJECT", "PHASE", "RUNNING", "AGE"]
    assert "notebook" in table and "Running" in table
    # Workspaces are not trainings.
    assert _listed(cli, "training", "notebook") is None
    cli("training", "suspend", "notebook", status=3)

    def port_line() -> str | None:
        described = cli("workspace", "describe", "notebook").stdout
        lines = [line for line in described.splitlines() if line.startswith("Port:")]
        return lines[0] if lines and "->" in lines[0] else None

    line = poll(port_line, timeout=30, what="the port bound")
    url = line.split("->")[1].strip()
    assert line.split()[1] == "8888" and url.startswith("http://")
    assert poll(
        lambda: _answers(url), timeout=30, what="the workspace's server answering"
    ).is_success
    assert cli("workspace", "logs", "notebook", "--pod", "notebook-0").stdout.startswith(
        "serving\n"
    )
    assert "notebook suspending" in cli("workspace", "suspend", "notebook").stdout
    _in_phase(cli, "workspace", "notebook", "Stopped")
    assert "notebook resuming" in cli("workspace", "resume", "notebook").stdout
    _in_phase(cli, "workspace", "notebook", "Running")
    assert "notebook deleted" in cli("workspace", "delete", "notebook", "--wait").stdout
    cli("workspace", "describe", "notebook", status=3)


def test_workspace_ports_and_training_flags_reach_the_request(cli: Cli) -> None:
    workspace = cli.json(
        "workspace",
        "submit",
        "desk",
        "-p",
        "1",
        "-i",
        "jupyter",
        "--port",
        "8888:30000",
        "--port",
        "6006",
        "--dry-run",
    )
    assert workspace["spec"]["ports"] == [
        {"container": 8888, "external": 30000},
        {"container": 6006},
    ]
    assert "command" not in workspace["spec"]
    training = cli.json(
        "training",
        "submit",
        "job",
        "-p",
        "1",
        "-i",
        "img",
        "--completions",
        "3",
        "--parallelism",
        "2",
        "--backoff-limit",
        "0",
        "-g",
        "1",
        "--dry-run",
        "--",
        "python",
        "train.py",
    )
    assert training["spec"] == {
        "image": "img",
        "command": "python",
        "args": "train.py",
        "compute": {"gpuDevicesRequest": 1},
        "backoffLimit": 0,
        "completions": 3,
        "parallelism": 2,
    }
    assert "distributedFramework" not in training["spec"]
    bad = cli("workspace", "submit", "desk", "-p", "1", "-i", "x", "--port", "http", status=2)
    assert "--port takes CONTAINER[:EXTERNAL]" in bad.stderr
    # The help of each group lists submit beside the frameworks.
    help_text = cli("training", "--help").stdout
    assert "submit" in help_text and "pytorch" in help_text
    assert "--parallelism" in cli("training", "submit", "--help").stdout
    assert "--port" in cli("workspace", "submit", "--help").stdout
    assert "--workers" in cli("training", "pytorch", "submit", "--help").stdout


def _answers(url: str) -> httpx.Response | None:
    try:
        return httpx.get(url, timeout=2)
    except httpx.HTTPError:
        return None
