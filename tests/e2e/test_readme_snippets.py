"""The documentation's command-line and SDK examples, run as written — each block read from its
page (docs/cli.md, docs/sdk.md) — against the quick start's server (`lockstep serve` in a
checkout, with generated administrator credentials in `./lockstep-data`), and a check that every
`sh` and `python` block of README.md and of every page under docs/ is run by a test, or named
below with why it is not."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lockstep.config import Settings
from lockstep.reconciler.outcome import restart_backoff
from lockstep.schemas.distributed import DEFAULT_BACKOFF_LIMIT
from tests.conftest import running
from tests.support import readme
from tests.support.api import Api
from tests.support.requests import REPOSITORY
from tests.support.server import LiveServer

RUN_BY = {
    "QUICK_START": "tests/e2e/test_quick_start.py::test_readme_quick_start_runs_as_written",
    "INSTALL_FRAMEWORKS": (
        "tests/e2e/test_quick_start.py::test_the_examples_install_lines_run_as_written"
    ),
    "EXAMPLES": "tests/e2e/test_quick_start.py::test_readme_example_runs_as_written",
    "CLI": "tests/e2e/test_readme_snippets.py::test_the_cli_examples_run_as_written",
    "SDK": "tests/e2e/test_readme_snippets.py::test_the_sdk_example_runs_as_written",
    "SDK_KINDS": "tests/e2e/test_readme_snippets.py::test_the_sdk_kinds_example_runs_as_written",
    "USERS": "tests/e2e/test_readme_snippets.py::test_the_users_example_runs_as_written",
    "IDENTITY_PROVIDER": (
        "tests/e2e/test_readme_snippets.py::test_the_identity_provider_example_runs_as_written"
    ),
}
"""Each block that a test runs (its name in tests.support.readme) and the test."""
SKIPPED = {
    "SERVE": "scripts/serve installs into the checkout's own .venv and serves on port 8080; "
    "its parts are tested: its install step by tests/integration/test_serve_script.py, the "
    "server it starts by every test here",
    "TEST": "scripts/test runs every check and every test, this one among them",
    "NOTEBOOK": "it installs JupyterLab from PyPI into lockstep's .venv, and the tests download "
    "nothing; the page says so, and the workspace commands it uses run in the CLI block",
    "NODES": "it starts a server in the foreground on port 8080, which runs until stopped; its "
    "LOCKSTEP_NODES value is checked as a setting lockstep accepts by "
    "test_the_nodes_example_is_a_setting_lockstep_accepts, and virtual nodes are run by the "
    "placement tests",
    "KUBERNETES": "it installs from PyPI and serves against a real cluster, which the machines "
    "the tests run on cannot run; the Kubernetes runtime is tested against a fake API server "
    "that speaks real HTTP, as docs/kubernetes.md says",
    "ADMINISTRATION": "its ids and names are those of a reader's store (the application bob, "
    "access rule 3); each of its commands is run by "
    "tests/e2e/test_cli.py::test_serve_flags_and_admin_commands, those of users by "
    "tests/e2e/test_user_cli.py",
    "SECRETS": "its ids and files are those of a reader's store and checkout (project 2, "
    "./pw.txt); the secret and configmap commands are run by the end-to-end tests of the "
    "command line",
    "PART_OF_THE_SUITE": "it runs the checks and a part of the suite, this test among them",
}
"""Each block that no test runs, and why."""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout as the README's reader has it: the examples and lockstep's .venv."""
    directory = tmp_path / "checkout"
    directory.mkdir()
    for name in ("examples", ".venv"):
        (directory / name).symlink_to(REPOSITORY / name)
    return directory


@pytest.fixture
def server(checkout: Path) -> Iterator[LiveServer]:
    """The quick start's server, as `scripts/serve` starts it: a fresh one for each block."""
    with running(LiveServer(Path("lockstep-data"), cwd=checkout, bootstrap_credentials=False)) as s:
        yield s


def admin(server: LiveServer, checkout: Path, client: httpx.Client) -> Api:
    credentials = json.loads((checkout / "lockstep-data/admin-credentials.json").read_text())
    return Api.login(client, credentials["clientId"], credentials["clientSecret"])


def test_the_cli_examples_run_as_written(
    server: LiveServer, checkout: Path, tmp_path: Path
) -> None:
    script = f"{readme.set_up()}{readme.CLI}"
    finished = readme.shell(
        script,
        cwd=checkout,
        url=server.url,
        timeout=600,
        env={"LOCKSTEP_CONFIG": str(tmp_path / "config.json")},
    )
    printed = finished.stdout
    assert finished.returncode == 0, f"{printed}\n{finished.stderr}\n{server.log()}"
    assert f"logged in to {server.url}" in printed
    for rank in range(3):
        assert re.search(rf"hello-\w+-\d \| rank {rank} of 3", printed), printed
    assert "fit: Completed" in finished.stderr + printed
    assert "workload sweep suspending" in printed
    assert "workload sweep resuming" in printed
    assert re.search(r"Port: +8888 -> http://127\.0\.0\.1:\d+", printed), printed
    assert "project vision deleted" in printed
    assert "department research deleted" in printed
    with httpx.Client(base_url=server.url, timeout=30.0) as client:
        api = admin(server, checkout, client)
        fit = next(
            w for w in api.get("/api/v1/workloads").json()["workloads"] if w["name"] == "fit"
        )
        logs = api.get(f"/api/v1/workloads/{fit['id']}/pods/fit-0/logs").text
    assert "fitted y = " in logs, logs  # examples/train.py, which exits 0 only when it fits


def test_the_first_cli_example_names_its_backoff_limit() -> None:
    """A newcomer's first workload fails at once rather than after ten minutes of restarts,
    and the page says why, in numbers the code has."""
    first = readme.CLI.split("\nlockstep training")[1].split("\nlockstep ")[0]
    assert "--backoff-limit 0" in first, first
    base = Settings.model_fields["restart_backoff_seconds"].default
    total = sum(restart_backoff(n, base_seconds=base) for n in range(DEFAULT_BACKOFF_LIMIT))
    cli = readme.page("docs/cli.md").read_text()
    prose = " ".join(cli.split("```sh\nexport PATH")[0].split()[-120:])
    assert f"restarted {DEFAULT_BACKOFF_LIMIT} times" in prose, prose
    assert f"doubling from {base:g} s" in prose, prose
    assert f"about {round(total / 60)} minutes" in prose, prose
    assert "`--wait` and `--follow` show each restart" in prose, prose


def python_block(block: str, server: LiveServer, checkout: Path) -> str:
    """Run a python block of the documentation with lockstep's Python, in the checkout; what it
    printed."""
    source = block.replace("http://127.0.0.1:8080", server.url)
    ast.parse(source)
    finished = subprocess.run(
        [sys.executable, "-c", source],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert finished.returncode == 0, f"{finished.stdout}\n{finished.stderr}\n{server.log()}"
    return finished.stdout


def test_the_sdk_example_runs_as_written(server: LiveServer, checkout: Path) -> None:
    printed = python_block(readme.SDK, server, checkout)
    assert "rank 0 of 3" in printed, printed
    assert re.search(r"^hello-sdk (Running|Completed)$", printed, re.MULTILINE), printed


def test_the_sdk_kinds_example_runs_as_written(server: LiveServer, checkout: Path) -> None:
    printed = python_block(readme.SDK_KINDS, server, checkout)
    assert "web-sdk suspended" in printed, printed
    with httpx.Client(base_url=server.url, timeout=30.0) as client:
        api = admin(server, checkout, client)
        phases = {w["name"]: w["phase"] for w in api.get("/api/v1/workloads").json()["workloads"]}
    assert phases["fit-sdk"] == "Completed"
    assert phases["web-sdk"] in {"Stopping", "Stopped"}


def test_the_users_example_runs_as_written(server: LiveServer, checkout: Path) -> None:
    """docs/users.md's example: an administrator makes a user, who signs in and renews."""
    with httpx.Client(base_url=server.url, timeout=30.0) as client:
        token = str(admin(server, checkout, client).token)
    finished = readme.shell(
        readme.USERS,
        cwd=checkout,
        url=server.url,
        timeout=60,
        env={"URL": server.url, "TOKEN": token},
    )
    assert finished.returncode == 0, f"{finished.stdout}\n{finished.stderr}"
    expires, access = finished.stdout.split()
    assert expires == "900"
    with httpx.Client(base_url=server.url, timeout=30.0) as client:
        me = Api(client, access).get("/api/v1/users")
    assert me.status_code == 403  # a user, signed in, who may not list users
    assert me.json()["message"] == "you may not read users in this tenant"


def test_the_identity_provider_example_runs_as_written(server: LiveServer, checkout: Path) -> None:
    """docs/users.md's single sign-on example: an administrator configures a provider, whose
    settings then read back with the secret masked and the address to register at it."""
    with httpx.Client(base_url=server.url, timeout=30.0) as client:
        api = admin(server, checkout, client)
        finished = readme.shell(
            readme.IDENTITY_PROVIDER,
            cwd=checkout,
            url=server.url,
            timeout=60,
            env={"URL": server.url, "TOKEN": str(api.token)},
        )
        assert finished.returncode == 0, f"{finished.stdout}\n{finished.stderr}"
        assert json.loads(finished.stdout) == {"alias": "oidc"}
        provider = api.get("/api/v1/idps/oidc").json()
    assert provider["redirectUri"] == f"{server.url}/sso/oidc/callback"
    assert provider["oidcData"]["clientSecret"] == "*******"
    assert provider["oidcData"]["scopes"] == ["openid", "email", "groups"]
    assert provider["mappers"]["groups"] == "groups"


def test_the_nodes_example_is_a_setting_lockstep_accepts() -> None:
    """The virtual nodes of docs/local-runtime.md, as the server would read them."""
    value = readme.NODES.split("LOCKSTEP_NODES='")[1].split("'")[0]
    nodes = Settings(nodes=json.loads(value)).nodes
    assert [(node.name, node.pool) for node in nodes] == [("alpha", "a100"), ("beta", "v100")]


def test_every_documentation_block_is_run_or_says_why_not() -> None:
    """Every `sh` and `python` block of README.md and of every page under docs/ is one a test
    runs (RUN_BY, each test defined where named) or one named in SKIPPED with its reason: a new
    block, or one changed beyond recognition, fails here until a test runs it."""
    found = [block for _, block in readme.blocks()]
    named = {name: getattr(readme, name) for name in [*RUN_BY, *SKIPPED]}
    assert not set(RUN_BY) & set(SKIPPED)
    unaccounted = [block for block in found if block not in named.values()]
    assert not unaccounted, f"documentation blocks no test runs or names: {unaccounted}"
    assert sorted(named.values()) == sorted(found)  # each named block is one of the pages'
    for name, test in RUN_BY.items():
        path, function = test.split("::")
        source = (REPOSITORY / path).read_text()
        assert f"def {function}(" in source, test
        assert name in source, f"{test} does not read the documentation's {name} block"
    assert sorted(SKIPPED) == [
        "ADMINISTRATION",
        "KUBERNETES",
        "NODES",
        "NOTEBOOK",
        "PART_OF_THE_SUITE",
        "SECRETS",
        "SERVE",
        "TEST",
    ]
    assert "pip install jupyterlab" in readme.NOTEBOOK
    assert all(reason for reason in SKIPPED.values())
