"""Fixtures: a fresh store per test (SQLite, and PostgreSQL where parametrized), in-process
apps and live servers. Every pod a test's server started is killed when the test ends, once
the server has stopped (a running reconciler would start them again); and the run fails if
any process it started is left at its end (tests/support/leftovers.py), naming each one."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from lockstep.api.app import create_app
from lockstep.config import Settings
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api
from tests.support.databases import PostgresTemplates, require_postgres
from tests.support.leftovers import Leftover, kill, still_left
from tests.support.server import LiveServer, kill_pods

SHARED_TEMP = Path("/var/tmp")
"""Where tests keep the files they share with pods: a sandboxed pod has a /tmp of its own, and
what it writes outside its volumes stays in its own root, so a pod that writes there for its
test mounts the test's directory as a hostPath (`tests.support.requests.shared`), which the
tests' servers allow (`ALLOWED_HOST_PATHS`)."""
ALLOWED_HOST_PATHS = [f"{SHARED_TEMP}:rw"]


def pytest_configure(config: pytest.Config) -> None:
    if config.option.basetemp is None:
        config.option.basetemp = str(SHARED_TEMP / f"lockstep-tests-{os.getpid()}")


LEFTOVER_DEADLINE_SECONDS = 15.0
"""How long processes that were just stopped get to end before the run counts them left."""
_LEFTOVERS = pytest.StashKey[list[Leftover]]()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Every fixture has been torn down: no process the run started may be left."""
    root = Path(str(session.config.option.basetemp))
    found = still_left(os.getpid(), root, timeout=LEFTOVER_DEADLINE_SECONDS)
    if found:
        kill(found)
        session.config.stash[_LEFTOVERS] = found
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    found = config.stash.get(_LEFTOVERS, [])
    if found:
        terminalreporter.section("processes left behind", red=True)
        terminalreporter.line(
            f"the tests left {len(found)} process(es) alive {LEFTOVER_DEADLINE_SECONDS:g} s "
            "after the last test ended (now killed):"
        )
        for leftover in found:
            terminalreporter.line(f"  {leftover}")


def pytest_unconfigure(config: pytest.Config) -> None:
    basetemp = Path(str(config.option.basetemp))
    if basetemp.parent == SHARED_TEMP and basetemp.name == f"lockstep-tests-{os.getpid()}":
        shutil.rmtree(basetemp, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_templates() -> Iterator[PostgresTemplates]:
    templates = PostgresTemplates()
    yield templates
    templates.close()


@contextmanager
def fresh_database(request: pytest.FixtureRequest, backend: str, directory: Path) -> Iterator[str]:
    """An empty store: a SQLite file in `directory`, or a new PostgreSQL database."""
    if backend == "sqlite":
        yield f"sqlite:///{directory / 'store.db'}"
        return
    require_postgres()
    templates: PostgresTemplates = request.getfixturevalue("postgres_templates")
    with templates.fresh() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Every test using this runs once per backend, each time on an empty, migrated store."""
    with fresh_database(request, request.param, tmp_path) as url:
        yield url


def make_settings(data_dir: Path, database_url: str) -> Settings:
    return Settings(
        data_dir=data_dir,
        database_url=database_url,
        bootstrap_client_id=ADMIN_ID,
        bootstrap_client_secret=ADMIN_SECRET,
        restart_backoff_seconds=0.2,
        allowed_host_paths=ALLOWED_HOST_PATHS,
    )


@contextmanager
def in_process(settings: Settings) -> Iterator[TestClient]:
    """The whole server in process (ASGI), with its reconciler and local runtime running."""
    try:
        with TestClient(create_app(settings)) as test_client:
            yield test_client
    finally:
        kill_pods(settings.runtime_dir)


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    return make_settings(tmp_path / "data", database_url)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with in_process(settings) as test_client:
        yield test_client


@pytest.fixture
def api(client: TestClient) -> Api:
    """An API client logged in as the bootstrap administrator."""
    return Api.login(client)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def module_api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Api]:
    """One server per test module and backend, for modules whose tests leave no state behind
    (each such test checks that itself)."""
    directory = tmp_path_factory.mktemp("module")
    with (
        fresh_database(request, request.param, directory) as url,
        in_process(make_settings(directory / "data", url)) as test_client,
    ):
        yield Api.login(test_client)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@contextmanager
def running(server: LiveServer) -> Iterator[LiveServer]:
    server.start()
    try:
        yield server
    finally:
        server.stop()
        server.kill_pods()


@pytest.fixture
def live_server(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    """A real `lockstep serve` subprocess on SQLite."""
    with running(LiveServer(tmp_path / "data", sqlite_url)) as server:
        yield server


@pytest.fixture
def live_server_on_each_store(tmp_path: Path, database_url: str) -> Iterator[LiveServer]:
    """A real `lockstep serve` subprocess, once on SQLite and once on PostgreSQL."""
    with running(LiveServer(tmp_path / "data", database_url)) as server:
        yield server
