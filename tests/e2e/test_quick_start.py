"""The README's quick start and examples, run as written — each code block read from README.md,
so that the documentation cannot drift — against `lockstep serve` started as `scripts/serve`
starts it: in a checkout (here a directory holding the repository's `examples` and `.venv`),
with the relative data dir `./lockstep-data` and generated administrator credentials. The
examples run `python3` and relative script paths, as a user types them: a pod's `python3` is
lockstep's, and the paths resolve in the directory lockstep was started from."""

from __future__ import annotations

import importlib.util
import json
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import running
from tests.support import readme
from tests.support.api import Api
from tests.support.readme import set_up
from tests.support.requests import REPOSITORY, distributed
from tests.support.server import LiveServer

DEFINITION, _, CALLS = readme.EXAMPLES.partition("\n}\n")
RUNS = [line for line in CALLS.splitlines() if line.startswith("run ")]
PACKAGES = {"PyTorch": "torch", "JAX": "jax", "XGBoost": "xgboost", "TF": "tensorflow"}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("checkout")
    for name in ("examples", ".venv"):
        (directory / name).symlink_to(REPOSITORY / name)
    return directory


@pytest.fixture(scope="module")
def server(checkout: Path) -> Iterator[LiveServer]:
    """`scripts/serve`: `lockstep serve --data-dir ./lockstep-data` in the checkout."""
    with running(LiveServer(Path("lockstep-data"), cwd=checkout, bootstrap_credentials=False)) as s:
        yield s


def shell(script: str, server: LiveServer, checkout: Path, *, timeout: float) -> str:
    """Run `script` with bash as the README's reader would, its URL this server's."""
    finished = readme.shell(script, cwd=checkout, url=server.url, timeout=timeout)
    assert finished.returncode == 0, f"{finished.stdout}\n{finished.stderr}\n{server.log()}"
    return finished.stdout


def test_readme_quick_start_runs_as_written(server: LiveServer, checkout: Path) -> None:
    credentials = checkout / "lockstep-data" / "admin-credentials.json"
    assert credentials.stat().st_mode & 0o777 == 0o600
    assert "client secret:" in server.log()
    script = readme.QUICK_START.replace("# delete it", _wait_for_completion() + "# delete it")
    printed = shell(script, server, checkout, timeout=120)
    assert '"actualPhase"' in printed
    assert "COMPLETED" in printed
    assert '{"code":202,"message":"Request has been accepted."}' in printed


def _wait_for_completion() -> str:
    """Shell that polls the quick start's workload until it completes (deadline 60 s)."""
    read_phase = "python3 -c 'import json, sys; print(json.load(sys.stdin)[\"phase\"])'"
    return (
        "for _ in $(seq 1 600); do\n"
        f'  phase=$(curl -s $URL/api/v1/workloads/$ID -H "$AUTH" | {read_phase})\n'
        '  [ "$phase" = Completed ] && echo COMPLETED && break\n'
        "  sleep 0.1\n"
        "done\n"
    )


def test_the_examples_install_lines_run_as_written(checkout: Path) -> None:
    """The CPU builds, named as the README names them. Run only where they are installed
    already (pip then has nothing to fetch): the tests do not download frameworks."""
    missing = [p for p in PACKAGES.values() if importlib.util.find_spec(p) is None]
    if missing:
        pytest.skip(f"not installed here: {', '.join(missing)}")
    block = readme.INSTALL_FRAMEWORKS
    # numpy too: torch does not bring it, and without it each PyTorch pod's log starts with
    # "Failed to initialize NumPy"; the PyTorch index serves it as well
    assert "torch==2.13.0 numpy --index-url https://download.pytorch.org/whl/cpu" in block
    finished = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    assert "Requirement already satisfied: torch==2.13.0" in finished.stdout
    assert "Requirement already satisfied: numpy" in finished.stdout


def test_the_readme_runs_every_example() -> None:
    assert [shlex.split(line)[2] for line in RUNS] == [
        "PyTorch",
        "JAX",
        "XGBoost",
        "TF",
        "TF",
    ]


@pytest.mark.parametrize("call", RUNS, ids=[shlex.split(line)[1] for line in RUNS])
def test_readme_example_runs_as_written(call: str, server: LiveServer, checkout: Path) -> None:
    _, name, framework, _ = shlex.split(call)
    if importlib.util.find_spec(PACKAGES[framework]) is None:
        pytest.skip(f"the {framework} example needs {PACKAGES[framework]} installed")
    printed = shell(f"{set_up()}{DEFINITION}\n}}\n{call}\n", server, checkout, timeout=420)
    assert f"{name}: Completed" in printed, printed
    assert f"{name}-" in printed  # each pod's log, prefixed with its name
    assert "Failed to initialize NumPy" not in printed, printed


def test_a_refused_example_says_why_and_stops(server: LiveServer, checkout: Path) -> None:
    """The examples' helper, pasted into a terminal, asked to run a name in use (as pasting the
    block twice does): the create is refused with 409, and `run` prints the server's answer and
    returns 1 at once, rather than poll for ever."""
    secret = json.loads((checkout / "lockstep-data/admin-credentials.json").read_text())
    with httpx.Client(base_url=server.url, timeout=30.0) as client:
        api = Api.login(client, "admin", secret["clientSecret"])
        taken = api.create(distributed(api.cluster_id(), name="taken"))
        try:
            pasted = (
                f"{set_up()}{DEFINITION}\n}}\n"
                f"run taken PyTorch examples/pytorch/allreduce.py\n"
                'echo "run returned $?"\n'
            )
            finished = readme.shell(pasted, cwd=checkout, url=server.url, timeout=120, strict=False)
        finally:
            api.delete(f"/api/v1/workloads/distributed/{taken['workloadId']}")
    assert "run returned 1" in finished.stdout, f"{finished.stdout}\n{finished.stderr}"
    assert 'taken: {"code":409,"message":' in finished.stderr, finished.stderr
    assert "Traceback" not in finished.stderr
