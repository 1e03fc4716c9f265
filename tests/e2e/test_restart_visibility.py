"""Restarts are visible while they happen: a workload whose command fails at once is restarted
after a backoff until backoffLimit, and meanwhile each restart is told — a `BackOff` event
(Warning) per restart, `pod <name> exited with code <n>; restart <k> of <limit> in <s> s (at
<time>Z)`, and a phase message naming the time of the next try — and `submit --wait --follow`
(`--wait-for-completion`) prints a line per restart as it comes, piped and on a terminal. A
bare `--wait` ends once the workload runs, which a command failing at once may or may not be
seen to do, so the tests that must see every restart wait for completion."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import running
from tests.e2e.test_training_cli import Cli
from tests.support.api import ADMIN_ID, ADMIN_SECRET
from tests.support.server import LiveServer

BACKOFF_SECONDS = "0.5"
"""The server's restart backoff base (LOCKSTEP_RESTART_BACKOFF_SECONDS): 0.5 s, then 1 s."""
TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


def restart_line(workload: str, pod: str, code: int) -> re.Pattern[str]:
    """The line the CLI prints per restart, the BackOff event's message after the name."""
    return re.compile(
        rf"^{workload}: pod {pod} exited with code {code}; restart (\d+) of 2 "
        rf"in \d+(?:\.\d)? s \(at {TIME}\)$",
        re.MULTILINE,
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("restarts")
    live = LiveServer(
        directory / "data",
        f"sqlite:///{directory / 'store.db'}",
        settings={"RESTART_BACKOFF_SECONDS": BACKOFF_SECONDS},
    )
    with running(live):
        yield live


@pytest.fixture(scope="module")
def cli(server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    run = Cli(server, tmp_path_factory.mktemp("home"))
    run("login", "--url", server.url, "--client-id", ADMIN_ID, "--client-secret", ADMIN_SECRET)
    return run


def _told(server: LiveServer, name: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The workload's BackOff events, oldest first, and every message its phase had."""
    api = server.api()
    (workload,) = [w for w in api.get("/api/v1/workloads").json()["workloads"] if w["name"] == name]
    path = f"/api/v1/workloads/{workload['id']}"
    events = api.get(f"{path}/events", params={"sortOrder": "asc"}).json()["events"]
    history = api.get(f"{path}/history").json()["records"]
    messages = [
        record["spec"]["phaseUpdate"]["phaseMessage"] or ""
        for record in history
        if record["meta"]["type"] == "PhaseUpdate"
    ]
    return [e for e in events if e["reason"] == "BackOff"], messages


def test_a_gang_that_fails_at_once_tells_each_restart(server: LiveServer, cli: Cli) -> None:
    done = cli(
        "training",
        "pytorch",
        "submit",
        "crash",
        "-p",
        "1",
        "-i",
        "x",
        "--workers",
        "1",
        "--backoff-limit",
        "2",
        "--wait-for-completion",
        "--",
        "sh",
        "-c",
        "exit 3",
        status=1,
    )
    printed = restart_line("crash", r"crash-(?:master|worker)-0", 3).findall(done.stderr)
    assert printed == ["1", "2"], done.stderr
    assert "workload crash failed" in done.stderr
    assert "reached the specified backoff limit (2)" in done.stderr

    backoffs, messages = _told(server, "crash")
    assert [e["type"] for e in backoffs] == ["Warning", "Warning"]
    told = [
        restart_line("crash", r"crash-\S+", 3).match(f"crash: {e['message']}") for e in backoffs
    ]
    assert [m.group(1) if m else e for m, e in zip(told, backoffs, strict=True)] == ["1", "2"]
    for restart in (1, 2):
        waiting = re.compile(
            rf"^restarting every pod after pod crash-\S+ exited with code 3 "
            rf"\(restart {restart} of 2 at {TIME}\)"
        )
        assert any(waiting.match(m) for m in messages), messages


def test_a_training_restarts_show_while_following(server: LiveServer, cli: Cli) -> None:
    """`--wait --follow`: the pod's lines, and each restart once, whether it came while the
    display waited for the pod to run or after its log ended."""
    done = cli(
        "training",
        "submit",
        "flaky",
        "-p",
        "1",
        "-i",
        "x",
        "--backoff-limit",
        "2",
        "--wait",
        "--follow",
        "--",
        sys.executable,
        "-c",
        "import time; print('trying', flush=True); time.sleep(1); raise SystemExit(4)",
        status=1,
    )
    printed = restart_line("flaky", "flaky-0", 4).findall(done.stderr)
    assert printed == ["1", "2"], done.stderr
    assert "workload flaky failed" in done.stderr
    backoffs, messages = _told(server, "flaky")
    assert len(backoffs) == 2 and all(e["type"] == "Warning" for e in backoffs)
    waiting = re.compile(rf"^running pod flaky-0 again after .* \(restart 1 of 2 at {TIME}\)")
    assert any(waiting.match(m) for m in messages), messages


def test_restarts_show_on_a_terminal(cli: Cli, tmp_path: Path) -> None:
    """Under a pseudo-terminal: each restart is a line of its own above the redrawn display."""
    import pexpect

    terminal = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "lockstep",
            "training",
            "submit",
            "shown",
            "-p",
            "1",
            "-i",
            "x",
            "--backoff-limit",
            "2",
            "--wait-for-completion",
            "--",
            "sh",
            "-c",
            "exit 5",
        ],
        env=cli.env(TERM="xterm"),
        encoding="utf-8",
        timeout=90,
        dimensions=(40, 160),
    )
    for restart in (1, 2):
        terminal.expect(
            rf"shown: pod shown-0 exited with code 5; restart {restart} of 2 in \d+(?:\.\d)? s "
            rf"\(at {TIME}\)"
        )
    terminal.expect("workload shown failed")
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 1
    assert "Traceback" not in (terminal.before or "")
