"""`lockstep admin` finds the store of the server `scripts/serve` started: run from the same
directory with no `--data-dir`, it opens `./lockstep-data` (as `serve` would), and the running
server sees what it made; where `./lockstep-data` and the default data dir both hold a store,
`admin` and `serve` refuse, naming both, and create nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import running
from tests.support.server import LiveServer


@pytest.fixture
def home(tmp_path: Path) -> Path:
    directory = tmp_path / "home"
    directory.mkdir()
    return directory


@pytest.fixture
def served(tmp_path: Path) -> Iterator[LiveServer]:
    """`lockstep serve --data-dir ./lockstep-data` in a checkout, as `scripts/serve` starts it."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    with running(LiveServer(Path("lockstep-data"), cwd=checkout)) as server:
        yield server


def lockstep(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it: no LOCKSTEP_* setting, a home of its own."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("LOCKSTEP_", "XDG_"))},
        "HOME": str(home),
    }
    return subprocess.run(
        [sys.executable, "-m", "lockstep", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_admin_opens_the_store_scripts_serve_made(served: LiveServer, home: Path) -> None:
    assert served.cwd is not None
    made = lockstep(served.cwd, home, "admin", "create-department", "research")
    assert made.returncode == 0, made.stderr
    department = json.loads(made.stdout)
    listed = served.api().get("/api/v1/org-unit/departments").json()["departments"]
    assert department["id"] in {str(d["id"]) for d in listed}
    assert not (home / ".local").exists()


def test_two_stores_are_refused_naming_both(served: LiveServer, home: Path) -> None:
    assert served.cwd is not None
    default = home / ".local" / "share" / "lockstep"
    default.mkdir(parents=True)
    (default / "lockstep.db").touch()
    local = served.cwd / "lockstep-data"
    for command in (("admin", "list-applications"), ("serve", "--port", "0")):
        refused = lockstep(served.cwd, home, *command)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr == (
            f"lockstep: two data dirs could be meant: {local} (in this directory, as "
            f"scripts/serve makes it) and {default} (the default); name one with --data-dir "
            "or LOCKSTEP_DATA_DIR\n"
        )
    assert [p.name for p in default.iterdir()] == ["lockstep.db"]
    named = lockstep(served.cwd, home, "admin", "list-applications", "--data-dir", "lockstep-data")
    assert named.returncode == 0, named.stderr
    assert "admin" in named.stdout
